#!/usr/bin/env bash
# libprotosel_ucx.so in Open MPI (Debian's openmpi-bin, pml ucx, which uses
# the installed UCX): a 2-rank ping-pong over sizes 8 B .. 4 MiB and an
# all-to-all (mpi_pingpong), on shared memory and tcp over loopback, with
# and without the library. Every byte is checked by the program; the runs
# must print the same results (times aside), and the library's
# UCX_PSEL_PROTO_INFO output must show it acted in both ranks. TAP output;
# no speed is asserted.
set -u
me=test_ucx_runtime_mpi
tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"
trap 'cleanup_pids; rm -rf "$tmp"' EXIT

need_lib
prog=${PSEL_MPI_PINGPONG:-}
mpirun=${MPIRUN:-$(command -v mpirun)}
[ -n "$prog" ] && [ -x "$prog" ] || { echo "# $me: skipped: mpi_pingpong not built (apt-get install libopenmpi-dev, then configure again)"; exit 77; }
[ -n "$mpirun" ] && [ -x "$mpirun" ] || { echo "# $me: skipped: no mpirun (apt-get install openmpi-bin)"; exit 77; }

# pml ucx only with these (Open MPI 4.1 keeps it for InfiniBand otherwise);
# as root, Open MPI wants both variables
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpi=("$mpirun" --oversubscribe -np 2 --mca pml ucx --mca pml_ucx_tls any
     --mca pml_ucx_devices any --mca btl self)
declare -A tr_env=([shm]="-x UCX_TLS=posix,sysv,cma" [tcp]="-x UCX_TLS=tcp -x UCX_NET_DEVICES=lo")
results() { grep -E '^(pingpong|alltoall) ' "$1" | awk '{print $1, $2, $3, $4}'; }
trs=$(transports shm tcp)

for tr in $trs; do
    # shellcheck disable=SC2206
    x=(${tr_env[$tr]} -x UCX_PSEL_CALIBRATION=none)
    check "$tr: ping-pong and all-to-all without the library" \
        "${mpi[@]}" "${x[@]}" "$prog" -n 5 -w 1
    cp "$tmp/out" "$tmp/$tr.stock"
    expect "... completes" "^done$" "$tmp/$tr.stock"
    absent "... prints nothing of protosel" "protosel"
    [ "$proto_tier" = yes ] && tiers="protocol config" || tiers=config
    for tier in $tiers; do
        check "$tr: the same with the library, $tier tier" \
            "${mpi[@]}" "${x[@]}" -x LD_PRELOAD="$lib" -x UCX_PSEL_TIER="$tier" \
            -x UCX_PSEL_PROTO_INFO=y "$prog" -n 5 -w 1
        cp "$tmp/out" "$tmp/$tr.$tier"
        cp "$tmp/all" "$tmp/$tr.$tier.all"
        expect "... completes" "^done$" "$tmp/$tr.$tier"
        check "... with the same results" diff <(results "$tmp/$tr.stock") <(results "$tmp/$tr.$tier")
        check "... protosel acted in both ranks" \
            test "$(grep -c "protosel: $tier tier" "$tmp/$tr.$tier.all")" -eq 2
        check "... each in UCX $ucx_built's libucp (Open MPI's own build of pml ucx)" \
            test "$(grep -c "protosel: libprotosel_ucx.so (protosel [^)]*) in UCX $ucx_built_re;" "$tmp/$tr.$tier.all")" -eq 2
        if [ "$tier" = protocol ]; then
            expect "... on the endpoints UCP made" "protosel: worker 0x[0-9a-f]* ep_cfg\\[[0-9]*\\]" "$tmp/$tr.$tier.all"
        fi
        absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/$tr.$tier.all"
    done
done

# mpirun itself preloaded: it does not use UCP, the ranks do
tr=${trs##*[[:space:]]}   # tcp where stock UCX connects over it, else shm
# shellcheck disable=SC2206
x=(${tr_env[$tr]})
check "mpirun itself preloaded ($tr)" env LD_PRELOAD="$lib" "${mpi[@]}" "${x[@]}" \
    "$prog" -n 2 -w 0 -s "8 65536"
expect "... completes" "^done$"

# the benchmark's mode: rank 0 sizes the warm-up and the timed part from a
# time budget and tells rank 1; a third rank only waits (and joins the
# all-to-all); every byte is still checked
check "time budget mode, 3 ranks" "$mpirun" --oversubscribe -np 3 --mca pml ucx \
    --mca pml_ucx_tls any --mca pml_ucx_devices any --mca btl self -x UCX_TLS=posix,sysv,cma \
    "$prog" -n 3 -w 2 -t 5 -s "8 4096 300000"
expect "... completes" "^done$"
check "... one line per size" test "$(grep -c '^pingpong [0-9]* ok ' "$tmp/out")" -eq 3

tap_done
