#!/usr/bin/env bash
# Stock ucx_perftest of a UCX >= 1.22 without and with protosel as its UCS
# plugin (UCX_PLUGIN_PATH; docs/runtime-library.md): tag_bw 1 MiB, tag_lat
# 64 KiB and 8 B on shared memory and tcp over loopback. Each round runs
# stock then plugin; the table gives the medians of both and the median of
# the per-round ratios plugin/stock with their range.
#
#   bench/ucx_plugin_perftest.sh [-b BUILD] [-r ROUNDS] [-c CALIBRATION]
#
# BUILD: protosel built against a UCX >= 1.22 (default build-ucx-1.22.0,
# made by ./dev.sh ucx 1.22.0); its Makefile names that UCX. ROUNDS default
# 5; CALIBRATION: UCX_PSEL_CALIBRATION for the plugin (default none:
# attribute lines). Prints figures, never fails on speed.
set -u -o pipefail
me=${0##*/}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-ucx-1.22.0 rounds=5 calib=none
while getopts "b:r:c:h" opt; do
    case $opt in
    b) build=$OPTARG ;; r) rounds=$OPTARG ;; c) calib=$OPTARG ;;
    *) sed -n '2,13p' "$0"; exit 1 ;;
    esac
done
[ -f "$build/Makefile" ] || { echo "$me: no build directory $build (./dev.sh ucx 1.22.0)" >&2; exit 1; }
bindir=$(sed -n 's/^PSEL_UCX_BINDIR = //p' "$build/Makefile")
libdir=$(sed -n 's/^PSEL_UCX_LIBDIR = //p' "$build/Makefile")
bin=$bindir/ucx_perftest
plugin_dir=$build/src/ucx_runtime/.libs
[ -x "$bin" ] || { echo "$me: no $bin (./dev.sh ucx 1.22.0)" >&2; exit 1; }
[ -f "$plugin_dir/libucs_protosel.so.0" ] ||
    { echo "$me: no $plugin_dir/libucs_protosel.so.0: $build is not built against a UCX with plugins (>= 1.22)" >&2; exit 1; }
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

pids=() srv_pin=() cli_pin=()
# shellcheck source=bench/lib_perftest.sh
. "$top/bench/lib_perftest.sh"   # pt_run_pair, final_line, median
clear_ucx_env
tmp=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

declare -A tr_env=([shm]="UCX_TLS=posix,sysv,cma" [tcp]="UCX_TLS=tcp UCX_NET_DEVICES=lo")
echo "# $me $(date -u +%F), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)," \
     "$("$bindir/ucx_info" -v | sed -n 's/^# \(Library version: \|Version \)/UCX /p' | head -1)," \
     "UCX_PSEL_CALIBRATION=$calib, $rounds rounds, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# time per message [us]: tag_lat average latency, tag_bw size / bandwidth"
printf '| %-4s | %-7s | %8s | %9s | %9s | %-22s |\n' tr test size "stock" "plugin" "plugin/stock (range)"
printf '|------|---------|---------:|----------:|----------:|------------------------|\n'
for tr in shm tcp; do
    for point in "tag_bw 1048576" "tag_lat 65536" "tag_lat 8"; do
        read -r test size <<<"$point"
        res=$tmp/$tr-$test-$size
        : >"$res"
        for round in $(seq 1 "$rounds"); do
            line="$round"
            for mode in stock plugin; do
                # shellcheck disable=SC2206
                envs=(${tr_env[$tr]})
                [ "$mode" = plugin ] && envs+=(UCX_PLUGIN_PATH="$plugin_dir" UCX_PSEL_CALIBRATION="$calib")
                f=$tmp/$tr-$test-$size-$mode-$round
                if pt_run_pair "$bin" "$f" 60 envs envs -t "$test" -s "$size" -n 300 -w 30 -f; then
                    # tag_lat: average latency (column 3); tag_bw: MB/s (column 5)
                    line="$line $(final_line "$f" | awk -v t="$test" -v s="$size" \
                        '{ print (t == "tag_bw") ? s / ($5 * 1048576) * 1e6 : $3 }')"
                else
                    line="$line -"
                fi
            done
            echo "$line" >>"$res"
        done
        awk '$2 != "-" && $3 != "-" { print $2, $3, $3 / $2 }' "$res" >"$res.ok"
        col() { awk "{ print \$$1 }" "$res.ok" | median; }
        if [ -s "$res.ok" ]; then
            read -r lo hi < <(awk '{ print $3 }' "$res.ok" | sort -g | sed -n '1p;$p' | paste -sd' ')
            printf '| %-4s | %-7s | %8s | %9.2f | %9.2f | %-22s |\n' "$tr" "$test" "$size" \
                "$(col 1)" "$(col 2)" "$(printf '%.3f (%.3f–%.3f)' "$(col 3)" "$lo" "$hi")"
        else
            printf '| %-4s | %-7s | %8s | %9s | %9s | %-22s |\n' "$tr" "$test" "$size" - - "no run completed"
        fi
    done
done
