#!/usr/bin/env bash
# libprotosel_ucx.so in a pair of stock ucx_perftest processes: tag_lat,
# tag_bw and ucp_put_bw, on shared memory and tcp over loopback, run to
# completion, and the table UCP prints (UCX_PROTO_INFO=y: ucp_tag_send*()
# for tag_lat, ucp_tag_send*(multi) for tag_bw, ucp_put*(multi) for
# ucp_put_bw from UCX 1.14) is the one protosel prints for the same
# endpoint configuration (UCX_PSEL_PROTO_INFO=y), and the one protosel's
# own tool computes in another process, from its own view of this host's
# resources and lanes (psel_info -e -j --ucp --same-host: an oracle
# independent of the library's view of UCP's lanes). Then mixed pairs, where
# only one side preloads the library: rendezvous is negotiated, so both
# sides must keep working. TAP output; no speed is asserted.
set -u
me=test_ucx_runtime_perftest
tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"
trap 'cleanup_pids; rm -rf "$tmp"' EXIT
tables="python3 $(dirname "$0")/ucx_tables.py"
# Each process times its own memory copies (UCX_PSEL_BCOPY_BW=auto), and
# two processes' figures differ by the timing noise: the tables compared
# across processes here are computed on one set figure (test_ucx_runtime_
# info.sh checks what the timed figures do in UCP)
export UCX_PSEL_BCOPY_BW=5800MBs

need_lib
need_proto_tier
trs=$(transports shm tcp)
command -v ucx_perftest >/dev/null || { echo "# $me: skipped: no ucx_perftest (apt-get install ucx-utils)"; exit 77; }
command -v ss >/dev/null || { echo "# $me: skipped: no ss (apt-get install iproute2)"; exit 77; }

declare -A tr_env=([shm]="UCX_TLS=posix,sysv,cma" [tcp]="UCX_TLS=tcp UCX_NET_DEVICES=lo")
declare -A psel_env=([shm]="UCX_PSEL_TLS=posix,sysv,cma" [tcp]="UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo")
final() { awk 'NF == 8 && $1 ~ /^[0-9]+$/ { l = $0 } END { exit (l == "") }' "$1"; }

for tr in $trs; do
    for test in tag_lat tag_bw; do
        d=$tmp/$tr-$test; mkdir -p "$d"
        # shellcheck disable=SC2206
        senv=(${tr_env[$tr]} "${lib_env[@]}" UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y)
        cenv=("${senv[@]}")
        # 64 KiB: above protosel's rendezvous threshold on both setups
        check "$tr $test, both sides preloaded" \
            perftest_pair "$d" senv cenv -t "$test" -s 65536 -n 200 -w 20 -f
        check "... prints its final line" final "$d/client"
        expect "... with the protocol tier acting" "protosel: protocol tier" "$d/client"
        absent "... without a warning" "UCX  *(WARN|ERROR) " "$d/client"
        if [ "$test" = tag_lat ]; then
            ucp_title='ucp_tag_send\*(\(\))? from host memory'
            psel_title='protosel ep_cfg\[[0-9]+\] *\|'
        else
            ucp_title='ucp_tag_send\*\(multi\) from host memory'
            psel_title='protosel ep_cfg\[[0-9]+\] multi *\|'
        fi
        check "... UCP's table is the library's own for the endpoint" \
            $tables compare "$d/client" "$d/client" --title "$ucp_title" --psel-title "$psel_title"
        cat "$tmp/out"
        # shellcheck disable=SC2206
        penv=(${psel_env[$tr]} UCX_PSEL_SELECT_PERF=$([ "$test" = tag_bw ] && echo multi || echo single))
        check "... psel_info -e -j --ucp --same-host (${penv[*]})" \
            env "${penv[@]}" "$info" -e -j --ucp --same-host
        cp "$tmp/out" "$d/psel.json"
        check "... UCP's table is psel_info's" \
            $tables compare "$d/psel.json" "$d/client" --title "$ucp_title"
        cat "$tmp/out"
    done
done

# put (ucp_put_bw over the perftest's own buffers): from UCX 1.14 UCP's
# put table is the one protosel prints for the endpoint; UCX 1.13 runs put
# and get offload on other lanes than protosel's model, and keeps UCP's
# lines (docs/runtime-library.md)
ucx_minor=$(echo "$ucx_built" | awk -F. '{ print $2 + 0 }')
for tr in $trs; do
    d=$tmp/$tr-put; mkdir -p "$d"
    # shellcheck disable=SC2206
    senv=(${tr_env[$tr]} "${lib_env[@]}" UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y)
    cenv=("${senv[@]}")
    check "$tr ucp_put_bw 64 KiB, both sides preloaded" \
        perftest_pair "$d" senv cenv -t ucp_put_bw -s 65536 -n 200 -w 20 -f
    check "... prints its final line" final "$d/client"
    if [ "$ucx_minor" -ge 14 ]; then
        check "... UCP's put table is the library's own for the endpoint (UCX $ucx_built)" \
            $tables compare "$d/client" "$d/client" --no-lanes \
            --title 'ucp_put\*\(multi\) from host memory' \
            --psel-title 'protosel ep_cfg\[[0-9]+\] multi *\| *put, contig host memory'
        cat "$tmp/out"
    else
        absent "... UCX $ucx_built: put keeps UCP's lines" "lines for UCP's put protocols" "$d/client"
    fi
done

# one side only: UCP of the other is stock (protocols v1: the library
# turns v2 on in its own process only)
for tr in $trs; do
    for who in server client; do
        d=$tmp/$tr-mixed-$who; mkdir -p "$d"
        # shellcheck disable=SC2206
        senv=(${tr_env[$tr]} UCX_PSEL_PROTO_INFO=y)
        cenv=("${senv[@]}")
        if [ $who = server ]; then senv+=("${lib_env[@]}"); else cenv+=("${lib_env[@]}"); fi
        for test in tag_lat tag_bw; do
            check "$tr $test, only the $who preloaded, 1 MiB (rendezvous)" \
                perftest_pair "$d" senv cenv -t "$test" -s 1048576 -n 20 -w 2 -f
            check "... prints its final line" final "$d/client"
            expect "... the $who's protosel acted" "protosel: protocol tier" "$d/$who"
            absent "... and the other's did not" "protosel" \
                "$d/$([ $who = server ] && echo client || echo server)"
        done
    done
done

tap_done
