#!/usr/bin/env bash
# Stock ucx_perftest without and with protosel inside it: as the UCS plugin
# of a UCX >= 1.22 (UCX_PLUGIN_PATH) or preloaded (LD_PRELOAD, any UCX the
# build is for; docs/runtime-library.md), on shared memory and tcp over
# loopback. Each round runs stock and protosel in alternating order; the
# table gives the medians of both and the median of the per-round ratios
# protosel/stock with their range.
#
#   bench/ucx_lib_perftest.sh [-b BUILD] [-m plugin|preload] [-r ROUNDS]
#                             [-c CALIBRATION] [-t "shm tcp"]
#                             [-p "TEST:SIZE ..."]
#
# BUILD: a protosel build directory (default build-ucx-1.22.0, made by
# ./dev.sh ucx 1.22.0; build for the installed UCX); its Makefile names
# that UCX, whose ucx_perftest runs. MODE: plugin where the build has the
# plugin (UCX >= 1.22), else preload. ROUNDS default 5; CALIBRATION:
# UCX_PSEL_CALIBRATION for protosel (default none: attribute lines).
# POINTS default "tag_bw:1048576 tag_lat:65536 tag_lat:8"; any ucx_perftest
# UCP test, such as ucp_am_bw:1024. Time per message: the average latency
# of a *_lat test, size / bandwidth of the others. Prints figures, never
# fails on speed.
set -u -o pipefail
me=${0##*/}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-ucx-1.22.0 rounds=5 calib=none mode= trs="shm tcp"
points="tag_bw:1048576 tag_lat:65536 tag_lat:8"
while getopts "b:m:r:c:t:p:h" opt; do
    case $opt in
    b) build=$OPTARG ;; m) mode=$OPTARG ;; r) rounds=$OPTARG ;;
    c) calib=$OPTARG ;; t) trs=$OPTARG ;; p) points=$OPTARG ;;
    *) sed -n '2,21p' "$0"; exit 1 ;;
    esac
done
pids=() srv_pin=() cli_pin=()
# shellcheck source=bench/lib_perftest.sh
. "$top/bench/lib_perftest.sh"   # ucx_lib_setup, pt_run_pair, ucx_time, median
ucx_lib_setup
clear_ucx_env
tmp=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

declare -A tr_env=([shm]="UCX_TLS=posix,sysv,cma" [tcp]="UCX_TLS=tcp UCX_NET_DEVICES=lo")
echo "# $me $(date -u +%F), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)," \
     "$("$bindir/ucx_info" -v | sed -n 's/^# \(Library version: \|Version \)/UCX /p' | head -1)," \
     "protosel by $mode, UCX_PSEL_CALIBRATION=$calib, $rounds rounds, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# time per message [us]: *_lat average latency, others size / bandwidth"
printf '| %-4s | %-10s | %8s | %9s | %9s | %-24s |\n' tr test size "stock" "protosel" "protosel/stock (range)"
printf '|------|------------|---------:|----------:|----------:|--------------------------|\n'
for tr in $trs; do
    for point in $points; do
        test=${point%%:*} size=${point##*:}
        # about 0.4 s of data each, 100 to 200000 messages
        n=$((400000000 / (size + 2000)))
        n=$((n > 200000 ? 200000 : (n < 100 ? 100 : n)))
        res=$tmp/$tr-$test-$size
        : >"$res"
        for round in $(seq 1 "$rounds"); do
            declare -A t=()
            order="stock psel"
            [ $((round % 2)) = 0 ] && order="psel stock"
            for run in $order; do
                # shellcheck disable=SC2206
                envs=(${tr_env[$tr]})
                [ "$run" = psel ] && envs+=("${psel_env[@]}" UCX_PSEL_CALIBRATION="$calib")
                f=$tmp/$tr-$test-$size-$run-$round
                t[$run]=-
                if pt_run_pair "$bin" "$f" 60 envs envs -t "$test" -s "$size" -n "$n" -w $((n / 10)) -f; then
                    t[$run]=$(ucx_time "$test" "$size" "$f")
                fi
            done
            echo "$round ${t[stock]} ${t[psel]}" >>"$res"
            unset t
        done
        awk '$2 != "-" && $3 != "-" { print $2, $3, $3 / $2 }' "$res" >"$res.ok"
        col() { awk "{ print \$$1 }" "$res.ok" | median; }
        if [ -s "$res.ok" ]; then
            read -r lo hi < <(awk '{ print $3 }' "$res.ok" | sort -g | sed -n '1p;$p' | paste -sd' ')
            printf '| %-4s | %-10s | %8s | %9.3f | %9.3f | %-24s |\n' "$tr" "$test" "$size" \
                "$(col 1)" "$(col 2)" "$(printf '%.3f (%.3f–%.3f)' "$(col 3)" "$lo" "$hi")"
        else
            printf '| %-4s | %-10s | %8s | %9s | %9s | %-24s |\n' "$tr" "$test" "$size" - - "no run completed"
        fi
    done
done
