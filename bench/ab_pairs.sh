#!/usr/bin/env bash
# A/B of two perftest tools at one point, in pairs of adjacent runs.
#
#   bench/ab_pairs.sh [options] A B
#
# A and B: "ucx" (ucx_perftest, UCX_PROTO_ENABLE=y), "psel" (this build's
# psel_perftest), "ucp" (psel_perftest --ucp: stock UCP in psel_perftest's
# loops), or the path of another psel_perftest build. Runs A and B in ABBA
# order, --pairs times, and prints each pair's ratio B/A and the median of
# those ratios with its quartiles. Two runs seconds apart see the same speed
# level of the machine, so the ratio of a pair does not move when the level
# changes between pairs (this VM flips between two levels 4x apart), where
# each tool's own median would.
#
# A benchmark, not a test: it exits 0 once the summary is printed. See
# bench/README.md, "Small messages against UCX".
set -u

usage() {
    cat <<'EOF'
usage: bench/ab_pairs.sh [options] A B
  A, B                 ucx | psel | ucp | PATH (a psel_perftest build)
  --pairs N            pairs of runs (24)
  --test T             tag_bw or tag_lat (tag_bw)
  --size S             message size in bytes (8)
  --transport T        shm or tcp (shm)
  --iters N            iterations of each run (4000000 for tag_bw, 1000000 for tag_lat)
  -h, --help           this help
Ratio B/A: of MB/s for tag_bw (> 1: B is faster), of the p50 latency for
tag_lat (> 1: B is slower). Server on CPU 0, client on CPU 1.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
# pt_run_pair, final_line, tr_env
. "$top/bench/lib_perftest.sh" || exit 1
pairs=24 test=tag_bw size=8 tr=shm iters=""
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --pairs)     pairs=${2:?}; shift ;;
    --test)      test=${2:?}; shift ;;
    --size)      size=${2:?}; shift ;;
    --transport) tr=${2:?}; shift ;;
    --iters)     iters=${2:?}; shift ;;
    -h|--help)   usage; exit 0 ;;
    -*)          echo "ab_pairs: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *)           args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} = 2 ] || { usage >&2; exit 2; }
case $pairs in ''|*[!0-9]*|0) echo "ab_pairs: --pairs must be >= 1" >&2; exit 2 ;; esac
case $size in ''|*[!0-9]*) echo "ab_pairs: --size must be a number of bytes" >&2; exit 2 ;; esac
case $test in tag_bw|tag_lat) ;; *) echo "ab_pairs: unknown test '$test'" >&2; exit 2 ;; esac
case $tr in shm|tcp) ;; *) echo "ab_pairs: unknown transport '$tr'" >&2; exit 2 ;; esac
[ -n "$iters" ] || { [ "$test" = tag_bw ] && iters=4000000 || iters=1000000; }
command -v ss >/dev/null || { echo "ab_pairs: needs ss (iproute2)" >&2; exit 1; }

# tool_of NAME -> "kind binary": the binary each side runs, checked
tool_of() {
    case $1 in
    ucx)  echo "ucx $(command -v ucx_perftest)" ;;
    psel) echo "psel $top/build/src/tools/psel_perftest" ;;
    ucp)  echo "ucp $top/build/src/tools/psel_perftest" ;;
    *)    echo "psel $1" ;;
    esac
}
read -r kind_a bin_a <<<"$(tool_of "${args[0]}")"
read -r kind_b bin_b <<<"$(tool_of "${args[1]}")"
for b in "$bin_a" "$bin_b"; do
    [ -x "$b" ] || { echo "ab_pairs: no executable '$b' (./dev.sh build; apt-get install ucx-utils)" >&2; exit 1; }
done

for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
out=$(mktemp -d /tmp/ab_pairs.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$out"
}
trap cleanup EXIT
trap 'echo "ab_pairs: interrupted" >&2; exit 130' INT TERM
# read by lib_perftest.sh's pt_run_pair and tr_env
# shellcheck disable=SC2034
{
    srv_pin=() cli_pin=()
    [ "$(nproc)" -ge 2 ] && { srv_pin=(-c 0); cli_pin=(-c 1); }
    psel_env_extra=() psel_ldpath=""
}
field=6; [ "$test" = tag_lat ] && field=2   # MB/s overall, or the p50

# run_one KIND BIN FILE: one server and client pair; prints the figure
# shellcheck disable=SC2034  # env: read by pt_run_pair (nameref)
run_one() {
    local kind=$1 bin=$2 file=$3 env=() extra=()
    case $kind in
    ucx)  mapfile -t env < <(tr_env ucx "$tr") ;;
    ucp)  mapfile -t env < <(tr_env ucx "$tr"); extra=(--ucp) ;;
    *)    mapfile -t env < <(tr_env psel "$tr") ;;
    esac
    pt_run_pair "$bin" "$file" 120 env env -t "$test" -s "$size" -n "$iters" -w 1000 \
        -f "${extra[@]}" || { echo "ab_pairs: a run of $bin failed, see below" >&2
                               tail -n 3 "$file" "$file.server" >&2; return 1; }
    final_line "$file" | awk -v f=$field '{ print $f }'
}

echo "ab_pairs: $tr $test $size B, $iters iterations, $pairs pairs in ABBA order"
echo "  A: ${args[0]} ($bin_a)"
echo "  B: ${args[1]} ($bin_b)"
printf '%6s %12s %12s %8s\n' pair A B B/A
ratios=()
for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then
        a=$(run_one "$kind_a" "$bin_a" "$out/a") || exit 1
        b=$(run_one "$kind_b" "$bin_b" "$out/b") || exit 1
    else
        b=$(run_one "$kind_b" "$bin_b" "$out/b") || exit 1
        a=$(run_one "$kind_a" "$bin_a" "$out/a") || exit 1
    fi
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "-" }')
    printf '%6d %12s %12s %8s\n' "$i" "$a" "$b" "$r"
    [ "$r" != - ] && ratios+=("$r")
done
printf '%s\n' "${ratios[@]}" | sort -g | awk -v t="$test" '
    { v[NR] = $1 }
    function q(p,   x, i) { x = 1 + (NR - 1) * p; i = int(x); return v[i] + (x - i) * (v[i + 1] - v[i]) }
    END {
        if (NR == 0) { print "no pair ran"; exit }
        printf "median of per-pair ratios B/A: %.3f (quartiles %.3f-%.3f, %d pairs; %s)\n",
            q(0.5), q(0.25), q(0.75), NR,
            (t == "tag_bw") ? "> 1: B streams faster" : "> 1: B is slower"
    }'
exit 0
