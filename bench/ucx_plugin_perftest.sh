#!/usr/bin/env bash
# Stock ucx_perftest of a UCX >= 1.22 with and without protosel's UCS
# plugin (libucs_protosel.so.0, config tier; src/ucx_runtime/README.md,
# "Newer UCX"): tag_bw 1 MiB, tag_lat 64 KiB and 8 B on shared memory and
# tcp over loopback, N runs of each (alternating), the median of the
# average latency [us] and bandwidth [MB/s] of the final lines.
#
#   bench/ucx_plugin_perftest.sh [-p PREFIX] [-b BUILD] [-r RUNS] [-c CALIBRATION]
#
# PREFIX: the UCX (default /opt/ucx-1.22); BUILD: protosel built against it
# (default build-ucx122, bench/ucx_plugin_build.sh makes both); RUNS
# default 3; CALIBRATION: UCX_PSEL_CALIBRATION for the plugin (default
# none: attribute lines). Prints figures, never fails on speed.
set -u -o pipefail
me=${0##*/}
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=/opt/ucx-1.22 build=$top/build-ucx122 runs=3 calib=none
while getopts "p:b:r:c:h" opt; do
    case $opt in
    p) prefix=$OPTARG ;; b) build=$OPTARG ;; r) runs=$OPTARG ;; c) calib=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 1 ;;
    esac
done
bin=$prefix/bin/ucx_perftest
plugin_dir=$build/src/ucx_runtime/.libs
[ -x "$bin" ] || { echo "$me: no $bin (bench/ucx_plugin_build.sh)" >&2; exit 1; }
[ -f "$plugin_dir/libucs_protosel.so.0" ] || { echo "$me: no $plugin_dir/libucs_protosel.so.0 (bench/ucx_plugin_build.sh)" >&2; exit 1; }

pids=() srv_pin=() cli_pin=()
# shellcheck source=bench/lib_perftest.sh
. "$top/bench/lib_perftest.sh"   # pt_run_pair, final_line, median
tmp=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

declare -A tr_env=([shm]="UCX_TLS=posix,sysv,cma" [tcp]="UCX_TLS=tcp UCX_NET_DEVICES=lo")
echo "# $me: $("$prefix/bin/ucx_info" -v | sed -n 's/^# Library version: /UCX /p'), plugin $plugin_dir, UCX_PSEL_CALIBRATION=$calib, $runs runs, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-4s %-8s %8s | %12s %12s | %12s %12s\n' tr test size "stock us" "plugin us" "stock MB/s" "plugin MB/s"
for tr in shm tcp; do
    for point in "tag_bw 1048576" "tag_lat 65536" "tag_lat 8"; do
        read -r test size <<<"$point"
        for run in $(seq 1 "$runs"); do
            for mode in stock plugin; do
                # shellcheck disable=SC2206
                envs=(${tr_env[$tr]})
                [ "$mode" = plugin ] && envs+=(UCX_PLUGIN_PATH="$plugin_dir" UCX_PSEL_CALIBRATION="$calib")
                f=$tmp/$tr-$test-$size-$mode-$run
                if pt_run_pair "$bin" "$f" 60 envs envs -t "$test" -s "$size" -n 300 -w 30 -f; then
                    final_line "$f" | awk '{ print $3, $5 }' >>"$tmp/$tr-$test-$size-$mode"
                fi
            done
        done
        col() { [ -f "$tmp/$tr-$test-$size-$1" ] && awk "{ print \$$2 }" "$tmp/$tr-$test-$size-$1" | median || echo -; }
        printf '%-4s %-8s %8s | %12s %12s | %12s %12s\n' "$tr" "$test" "$size" \
            "$(col stock 1)" "$(col plugin 1)" "$(col stock 2)" "$(col plugin 2)"
    done
done
