#!/bin/bash
# ucp_ep_cost_ab.sh: what a new endpoint configuration costs in stock UCP
# without libprotosel_ucx.so and with each of several builds of it, in
# alternation (one fresh process each, round after round), medians.
#
#   bench/ucp_ep_cost_ab.sh [--pairs N] [--calibration FILE] [--transports T]
#                           [--no-pin] LIB...
#
# LIB: a libprotosel_ucx.so (its libprotosel_ucx_impl.so beside it). When
# libprotosel.so.0 sits beside it too (a copy of a build, to A/B two
# branches), that one is used (LD_LIBRARY_PATH). Every process runs
# bench/ucp_ep_cost 8 pinned to CPU 1, with UCX_PSEL_TIER=protocol and
# UCX_PSEL_CALIBRATION=FILE (default: none, the attribute lines).
# A benchmark: prints a table, exits 0.
set -u
me=${0##*/}
root=$(cd "$(dirname "$0")/.." && pwd)
ep_cost=${PSEL_UCP_EP_COST:-$root/build/bench/ucp_ep_cost}
pairs=25 calibration=none transports="shm tcp" pin=1
libs=()
while [ $# -gt 0 ]; do
    case $1 in
    --pairs)       pairs=${2:?}; shift ;;
    --calibration) calibration=${2:?}; shift ;;
    --transports)  transports=${2:?}; shift ;;
    --no-pin)      pin=0 ;;
    -h|--help)     sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*)            echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *)             libs+=("$1") ;;
    esac
    shift
done
[ ${#libs[@]} -gt 0 ] || { echo "$me: name at least one libprotosel_ucx.so (see --help)" >&2; exit 2; }
[ -x "$ep_cost" ] || { echo "$me: $ep_cost not built: run ./dev.sh build" >&2; exit 2; }
for l in "${libs[@]}"; do
    [ -f "$l" ] || { echo "$me: no such library: $l" >&2; exit 2; }
done
out=$(mktemp -d /tmp/ucp_ep_cost_ab.$$.XXXX)
trap 'rm -rf "$out"' EXIT
pincmd=()
[ $pin = 1 ] && command -v taskset >/dev/null && pincmd=(taskset -c 1)

run_one() { # run_one TRANSPORT INDEX (0: stock, i: libs[i-1])
    local tr=$1 i=$2 e lib dir
    e=(UCX_PROTO_ENABLE=y UCX_WARN_UNUSED_ENV_VARS=n)
    [ "$tr" = shm ] && e+=(UCX_TLS=posix,sysv,cma) || e+=(UCX_TLS=tcp UCX_NET_DEVICES=lo)
    if [ "$i" -gt 0 ]; then
        lib=${libs[$((i - 1))]}
        dir=$(dirname "$lib")
        e+=(LD_PRELOAD="$lib" UCX_PSEL_TIER=protocol UCX_PSEL_CALIBRATION="$calibration")
        [ -f "$dir/libprotosel.so.0" ] && e+=(LD_LIBRARY_PATH="$dir")
    fi
    env "${e[@]}" timeout -k 5 60 "${pincmd[@]}" "$ep_cost" 8 2>/dev/null |
        awk -v t="$tr" -v i="$i" '$1 ~ /^(context_us|first_ep_config_us|first_ep_config_minflt|next_ep_config_us)$/ {print t, i, $1, $2}' >>"$out/all"
}

median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "-"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

: >"$out/all"
for r in $(seq 1 "$pairs"); do
    for tr in $transports; do
        for i in $(seq 0 ${#libs[@]}); do
            run_one "$tr" "$i"
        done
    done
done

echo "# bench/ucp_ep_cost 8, $pairs rounds in alternation, medians (us; minflt: page faults)"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 ${#libs[@]}); do echo "# lib$i: ${libs[$((i - 1))]}"; done
printf '%-4s %-23s %10s' transport value stock
for i in $(seq 1 ${#libs[@]}); do printf ' %16s' "lib$i (vs stock)"; done
echo
for tr in $transports; do
    for k in context_us first_ep_config_us first_ep_config_minflt next_ep_config_us; do
        s=$(awk -v t="$tr" -v k="$k" '$1 == t && $2 == 0 && $3 == k {print $4}' "$out/all" | median)
        printf '%-9s %-23s %10s' "$tr" "$k" "$s"
        for i in $(seq 1 ${#libs[@]}); do
            m=$(awk -v t="$tr" -v i="$i" -v k="$k" '$1 == t && $2 == i && $3 == k {print $4}' "$out/all" | median)
            printf ' %16s' "$m ($(awk -v a="$m" -v b="$s" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%+.0f", a - b}'))"
        done
        echo
    done
done
