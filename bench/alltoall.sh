#!/usr/bin/env bash
# bench/alltoall.sh: an alltoall among P = 2 and 3 processes on this host,
# over shared memory and over tcp/lo, measured with protosel's data path
# (bench/psel_alltoall) and, with --mpi, with Open MPI's MPI_Alltoall over
# stock UCP (pml ucx); each compared with the LogGP estimate of
# `psel_info --alltoall P --size n`, from the transports' attributes and
# from a calibration of this host (psel_calibrate --quick, made once).
#
# Usage: bench/alltoall.sh [--keep DIR] [--calibration FILE] [--mpi]
#                          [--sizes 8,64,...] [--procs "2 3"] [--build DIR]
# Prints one table per (transport, P) and a summary; a benchmark, it never
# fails on speed. Figures on a busy machine are noisy: say so when quoting.
set -u
me=alltoall
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build keep="" cal="" mpi=0 procs="2 3"
sizes=8,64,512,4096,32768,262144,1048576
while [ $# -gt 0 ]; do
    case $1 in
    --keep) keep=$2; shift ;;
    --calibration) cal=$2; shift ;;
    --mpi) mpi=1 ;;
    --sizes) sizes=$2; shift ;;
    --procs) procs=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "$me: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
a2a=$build/bench/psel_alltoall psel_info=$build/src/tools/psel_info
[ -x "$a2a" ] && [ -x "$psel_info" ] || {
    echo "$me: build first (./dev.sh build): no $a2a or $psel_info" >&2; exit 1; }
pin=0
# shellcheck source=bench/lib_perftest.sh
. "$top/bench/lib_perftest.sh"
bench_workdir
echo "$me: results in $out" >&2

if [ -z "$cal" ]; then
    cal=$out/calibration.txt
    psel_calibration "$cal" 1 16M "shm tcp" 600 || cal=""
fi
if [ "$mpi" = 1 ]; then
    if ! command -v mpicc >/dev/null || ! mpicc -O2 -o "$out/mpi_alltoall" \
            "$top/bench/mpi_alltoall.c" 2>"$out/mpicc.log"; then
        echo "$me: --mpi: no mpicc or it failed (apt-get install openmpi-bin libopenmpi-dev); see $out/mpicc.log" >&2
        mpi=0
    fi
fi

# estimate FILE P N CALIBRATION ENV...: T_direct [us] of psel_info
estimate() {
    local p=$2 n=$3 c=$4; shift 4
    env "$@" UCX_PSEL_CALIBRATION="$c" timeout 60 "$psel_info" --alltoall "$p" --size "$n" 2>/dev/null |
        awk -v n="$n" '$1 == n { print $3; exit }'
}
err() { # err ESTIMATE MEASURED: signed error in percent, or -
    awk -v e="$1" -v m="$2" 'BEGIN { if (e == "" || m == "" || m <= 0) print "-"; else printf "%+.0f%%", 100 * (e - m) / m }'
}

summary=$out/summary.txt
: >"$summary"
for tr in shm tcp; do
    if [ "$tr" = shm ]; then envs=(UCX_PSEL_TLS=posix,sysv,cma); uenv=(-x UCX_TLS=sm,self)
    else envs=(UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo); uenv=(-x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo); fi
    for p in $procs; do
        res=$out/psel-$tr-$p.txt
        env "${envs[@]}" UCX_PSEL_CALIBRATION=none timeout -k 5 600 "$a2a" -P "$p" -s "$sizes" >"$res" 2>"$res.err" &
        pids+=("$!"); wait "$!" || { echo "$me: psel_alltoall -P $p over $tr failed: $(tail -2 "$res.err")" >&2; continue; }
        if [ "$mpi" = 1 ]; then
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 600 \
                mpirun -np "$p" --oversubscribe --mca pml ucx --mca pml_ucx_tls any \
                --mca pml_ucx_devices any "${uenv[@]}" "$out/mpi_alltoall" "$sizes" \
                >"$out/mpi-$tr-$p.txt" 2>"$out/mpi-$tr-$p.err" &
            pids+=("$!"); wait "$!" || echo "$me: mpirun -np $p over $tr failed: see $out/mpi-$tr-$p.err" >&2
        fi
        echo "# alltoall among $p processes over $tr (time per alltoall [us]; error = (estimate - measured) / measured)"
        printf "%10s %12s %12s %7s %12s %7s %12s %12s\n" "n [B]" "measured" "est attrs" "err" \
            "est calib" "err" "back2back" "MPI (UCX)"
        awk '!/^#/ { print $1, $3, $4 }' "$res" | while read -r n iso b2b; do
            ea=$(estimate "$tr" "$p" "$n" none "${envs[@]}")
            ec=""; [ -n "$cal" ] && ec=$(estimate "$tr" "$p" "$n" "$cal" "${envs[@]}")
            m="-"; [ "$mpi" = 1 ] && m=$(awk -v n="$n" '$1 == n { print $3 }' "$out/mpi-$tr-$p.txt" 2>/dev/null)
            printf "%10s %12s %12s %7s %12s %7s %12s %12s\n" "$n" "$iso" "${ea:--}" "$(err "$ea" "$iso")" \
                "${ec:--}" "$(err "$ec" "$iso")" "$b2b" "${m:--}"
            echo "$tr $p $n $iso ${ea:--} ${ec:--} ${m:--}" >>"$summary"
        done
        echo
    done
done

# median |error| per transport and estimate
python3 - "$summary" <<'PYEOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for tr in ("shm", "tcp"):
    for col, name in ((4, "attributes"), (5, "calibration")):
        errs = [abs(float(r[col]) - float(r[3])) / float(r[3])
                for r in rows if r[0] == tr and r[col] != "-" and float(r[3]) > 0]
        if errs:
            print("# %s, estimate from %s: median |error| %.0f%% over %d points"
                  % (tr, name, 100 * statistics.median(errs), len(errs)))
PYEOF
echo "# measured on $(hostname), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
