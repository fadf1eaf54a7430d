#!/usr/bin/env bash
# psel_perftest vs ucx_perftest (UCP, UCX_PROTO_ENABLE=y), side by side.
#
# For each transport (shm, tcp over loopback), test (tag_lat, tag_bw) and
# message size (8 B and the powers of two up to --max-size, 1 MiB by default:
# protosel's data path has eager protocols only), runs the two tools in
# alternation, A B A B ..., --runs times each, and prints the medians, their
# ratio and the protocol each tool used at that size.
#
#   bench/vs_ucx_perftest.sh [--quick] [options]
#
# A benchmark, not a test: it always exits 0 once the table is printed, and
# `make check` does not run it. See bench/README.md, "psel_perftest vs
# ucx_perftest".
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bench/vs_ucx_perftest.sh [options]
  --quick              smoke run: sizes 8, 4096, 1048576, one run each
  --runs N             runs of each tool per point (3)
  --max-size N         largest message size, a power of two (1048576)
  --sizes "S S ..."    explicit list of sizes (overrides --max-size)
  --transports "T ..." among shm tcp (both)
  --tests "T ..."      among tag_lat tag_bw (both)
  --iters N            iterations of every run (default: by size, at most
                       20000); longer runs steady small-message figures
  --psel-perftest P    psel_perftest binary (build/src/tools/psel_perftest)
  --ucx-perftest P     ucx_perftest binary (ucx_perftest in PATH)
  --ucx-env VAR=VAL    extra environment for ucx_perftest (repeatable),
                       e.g. UCX_RNDV_THRESH=inf to keep UCX on eager
  --psel-env VAR=VAL   extra environment for psel_perftest (repeatable)
  --ucp-path           a third tool: psel_perftest --ucp (stock UCP in
                       psel_perftest's loops); adds a table that splits a
                       gap into data path (psel/--ucp) and harness
                       (--ucp/ucx_perftest), with medians of per-run ratios
  --no-pin             do not pin the server to CPU 0 and the client to CPU 1
  --keep DIR           keep every raw output in DIR (default: a temporary
                       directory, removed at exit)
  -h, --help           this help
Caller's UCX_* variables are ignored: each tool gets only its own settings.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
# free_port, wait_listen, pt_run_pair, final_line, psel_proto, ucx_proto_chain,
# median, human
. "$top/bench/lib_perftest.sh" || exit 1
psel_bin=$top/build/src/tools/psel_perftest
ucx_bin=$(command -v ucx_perftest || echo ucx_perftest)
runs=3
max_size=1048576
sizes=""
fixed_iters=""
transports="shm tcp"
tests="tag_lat tag_bw"
pin=1
keep=""
quick=0
ucx_extra=()
psel_extra=()
tools="psel ucx"

while [ $# -gt 0 ]; do
    case $1 in
    --quick)          quick=1 ;;
    --runs)           runs=${2:?}; shift ;;
    --max-size)       max_size=${2:?}; shift ;;
    --sizes)          sizes=${2:?}; shift ;;
    --transports)     transports=${2:?}; shift ;;
    --tests)          tests=${2:?}; shift ;;
    --iters)          fixed_iters=${2:?}; shift ;;
    --psel-perftest)  psel_bin=${2:?}; shift ;;
    --ucx-perftest)   ucx_bin=${2:?}; shift ;;
    --ucx-env)        ucx_extra+=("${2:?}"); shift ;;
    --psel-env)       psel_extra+=("${2:?}"); shift ;;
    --ucp-path)       tools="psel ucx pucp" ;;
    --no-pin)         pin=0 ;;
    --keep)           keep=${2:?}; shift ;;
    -h|--help)        usage; exit 0 ;;
    *)                echo "vs_ucx_perftest: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ $quick = 1 ]; then
    runs=1
    [ -n "$sizes" ] || sizes="8 4096 1048576"
fi
if [ -z "$sizes" ]; then
    s=8
    while [ "$s" -le "$max_size" ]; do sizes="$sizes $s"; s=$((s * 2)); done
fi
case $runs in ''|*[!0-9]*|0) echo "vs_ucx_perftest: --runs must be >= 1" >&2; exit 2 ;; esac
for t in $transports; do
    case $t in shm|tcp) ;; *) echo "vs_ucx_perftest: unknown transport '$t'" >&2; exit 2 ;; esac
done
for t in $tests; do
    case $t in tag_lat|tag_bw) ;; *) echo "vs_ucx_perftest: unknown test '$t'" >&2; exit 2 ;; esac
done
[ -x "$psel_bin" ] || { echo "vs_ucx_perftest: no $psel_bin (run ./dev.sh build)" >&2; exit 1; }
command -v "$ucx_bin" >/dev/null || { echo "vs_ucx_perftest: no ucx_perftest (apt-get install ucx-utils)" >&2; exit 1; }
command -v ss >/dev/null || { echo "vs_ucx_perftest: needs ss (iproute2)" >&2; exit 1; }

# Each tool gets exactly the environment given below.
for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

if [ -n "$keep" ]; then
    mkdir -p "$keep" && out=$keep
else
    out=$(mktemp -d /tmp/vs_ucx_perftest.XXXXXX)
fi

# Every process we start is recorded and killed, by pid, at exit.
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$keep" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'echo "vs_ucx_perftest: interrupted" >&2; exit 130' INT TERM

ncpu=$(nproc)
srv_pin=() cli_pin=()
if [ $pin = 1 ] && [ "$ncpu" -ge 2 ]; then
    srv_pin=(-c 0) cli_pin=(-c 1)
fi

# Iteration counts: scaled by size so that large messages do not dominate.
iters() {  # TEST SIZE
    local n
    [ -n "$fixed_iters" ] && { echo "$fixed_iters"; return; }
    if [ "$1" = tag_lat ]; then
        n=$(( (1 << 27) / $2 )); [ $n -gt 20000 ] && n=20000; [ $n -lt 200 ] && n=200
    else
        n=$(( (1 << 29) / $2 )); [ $n -gt 20000 ] && n=20000; [ $n -lt 500 ] && n=500
    fi
    echo $n
}

psel_env_extra=()
tool_env() {  # TOOL TRANSPORT ROLE -> prints VAR=VAL, one a line
    if [ "$1" = pucp ]; then   # psel_perftest --ucp: UCP's settings
        tr_env ucx "$2"
        [ ${#ucx_extra[@]} -gt 0 ] && printf '%s\n' "${ucx_extra[@]}"
        return 0
    fi
    tr_env "$1" "$2"   # the setups (lib_perftest.sh)
    if [ "$1" = ucx ]; then
        # both sides: the receiver's tables say how rendezvous runs
        echo UCX_PROTO_INFO=y
        [ ${#ucx_extra[@]} -gt 0 ] && printf '%s\n' "${ucx_extra[@]}"
    else
        [ "$3" = client ] && echo UCX_PSEL_PROTO_INFO=y
        [ ${#psel_extra[@]} -gt 0 ] && printf '%s\n' "${psel_extra[@]}"
    fi
}

# run_once TOOL TRANSPORT TEST SIZE FILE: one server + one client; the
# client's output goes to FILE. Returns 0 when FILE has a final line.
# shellcheck disable=SC2034  # senv, cenv: read by pt_run_pair (namerefs)
run_once() {
    local tool=$1 tr=$2 test=$3 size=$4 file=$5 bin n w
    local senv=() cenv=() extra=()
    [ "$tool" = ucx ] && bin=$ucx_bin || bin=$psel_bin
    [ "$tool" = pucp ] && extra=(--ucp)
    n=$(iters "$test" "$size")
    w=$((n / 10)); [ $w -gt 1000 ] && w=1000
    mapfile -t senv < <(tool_env "$tool" "$tr" server)
    mapfile -t cenv < <(tool_env "$tool" "$tr" client)
    pt_run_pair "$bin" "$file" 60 senv cenv -t "$test" -s "$size" -n "$n" -w "$w" \
        -f "${extra[@]}"
}

npoints=0
for tr in $transports; do for test in $tests; do for size in $sizes; do
    npoints=$((npoints + 1)); done; done; done
echo "vs_ucx_perftest: $npoints points x $runs runs x $(wc -w <<<"$tools") tools; raw output in $out" >&2
echo "  psel_perftest: $psel_bin" >&2
echo "  ucx_perftest:  $(command -v "$ucx_bin") ($(ucx_info -v 2>/dev/null | sed -n 's/^# \(Library version: \|Version \)//p' | head -1))" >&2

results=$out/results.tsv   # tr test size tool run p50 overall bw proto
: >"$results"
start=$SECONDS
point=0
for tr in $transports; do
    for test in $tests; do
        for size in $sizes; do
            point=$((point + 1))
            printf '  [%3d/%d] %s %s %s\n' $point $npoints "$tr" "$test" "$(human "$size")" >&2
            for r in $(seq 1 "$runs"); do
                for tool in $tools; do
                    f=$out/$tr.$test.$size.$tool.$r
                    if run_once "$tool" "$tr" "$test" "$size" "$f"; then
                        read -r _ p50 _ overall _ bw _ _ <<<"$(final_line "$f")"
                        case $tool in
                        psel) proto=$(psel_proto "$f" "$test" "$size") ;;
                        pucp) proto=- ;;
                        *)    proto=$(ucx_proto_chain "$test" "$size" "$f" "$f.server") ;;
                        esac
                        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tr" "$test" "$size" \
                            "$tool" "$r" "$p50" "$overall" "$bw" "$proto" >>"$results"
                    else
                        echo "    $tool run $r failed; last lines of $f:" >&2
                        tail -n 3 "$f" "$f.server" 2>/dev/null | sed 's/^/      /' >&2
                    fi
                done
            done
        done
    done
done

col() {  # TR TEST SIZE TOOL FIELD -> median
    awk -F'\t' -v a="$1" -v b="$2" -v c="$3" -v d="$4" -v f="$5" \
        '$1 == a && $2 == b && $3 == c && $4 == d { print $f }' "$results" | median
}
proto_of() {  # TR TEST SIZE TOOL -> most frequent protocol
    awk -F'\t' -v a="$1" -v b="$2" -v c="$3" -v d="$4" \
        '$1 == a && $2 == b && $3 == c && $4 == d { n[$9]++ }
         END { for (p in n) if (n[p] > m) { m = n[p]; r = p }; print (r == "" ? "?" : r) }' "$results"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
# median over runs of TOOL_A's FIELD / TOOL_B's in the same run: both ran
# within seconds of each other, so a change of the machine's level between
# runs cancels out
run_ratio() {  # TR TEST SIZE TOOL_A TOOL_B FIELD
    awk -F'\t' -v a="$1" -v b="$2" -v c="$3" -v x="$4" -v y="$5" -v f="$6" '
        $1 == a && $2 == b && $3 == c && $4 == x { va[$5] = $f }
        $1 == a && $2 == b && $3 == c && $4 == y { vb[$5] = $f }
        END { for (r in va) if ((r in vb) && vb[r] > 0) print va[r] / vb[r] }' \
        "$results" | median | awk '{ printf "%.3f", $1 }'
}

echo
echo "psel_perftest vs ucx_perftest $(ucx_info -v 2>/dev/null | sed -n 's/^# \(Library version: \|Version \)//p' | head -1), UCX_PROTO_ENABLE=y;" \
     "medians of $runs run(s) each, alternating A/B; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "shm: UCX_PSEL_TLS=posix,sysv,cma vs UCX_TLS=posix,sysv,cma;" \
     "tcp: UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo vs UCX_TLS=tcp UCX_NET_DEVICES=lo"
[ ${#ucx_extra[@]} -gt 0 ] && echo "ucx_perftest also: ${ucx_extra[*]}"
[ ${#psel_extra[@]} -gt 0 ] && echo "psel_perftest also: ${psel_extra[*]}"
echo "ratio > 1 means protosel is slower (latency: psel/UCX; bandwidth: UCX/psel): of the"
echo "medians, and the median of the runs' own ratios (per run), which a change of the"
echo "machine's speed between runs does not move."
for tr in $transports; do
    for test in $tests; do
        echo
        if [ "$test" = tag_lat ]; then
            echo "### $tr $test: latency, usec (50th percentile and overall average of the Final line)"
            echo
            echo "| size | psel p50 | UCX p50 | ratio | per run | psel overall | UCX overall | ratio | per run | psel protocol | UCX protocol | same |"
            echo "|-----:|---------:|--------:|------:|--------:|-------------:|------------:|------:|--------:|---------------|--------------|------|"
        else
            echo "### $tr $test: bandwidth, MB/s (overall of the Final line)"
            echo
            echo "| size | psel MB/s | UCX MB/s | ratio | per run | psel protocol | UCX protocol | same |"
            echo "|-----:|----------:|---------:|------:|--------:|---------------|--------------|------|"
        fi
        for size in $sizes; do
            pp=$(proto_of "$tr" "$test" "$size" psel)
            up=$(proto_of "$tr" "$test" "$size" ucx)
            [ "$pp" = "${up%% *}" ] && same=yes || same=no
            if [ "$test" = tag_lat ]; then
                a=$(col "$tr" "$test" "$size" psel 6); b=$(col "$tr" "$test" "$size" ucx 6)
                c=$(col "$tr" "$test" "$size" psel 7); d=$(col "$tr" "$test" "$size" ucx 7)
                echo "| $(human "$size") | $a | $b | $(ratio "$a" "$b") | $(run_ratio "$tr" "$test" "$size" psel ucx 6) |" \
                     "$c | $d | $(ratio "$c" "$d") | $(run_ratio "$tr" "$test" "$size" psel ucx 7) | $pp | $up | $same |"
            else
                a=$(col "$tr" "$test" "$size" psel 8); b=$(col "$tr" "$test" "$size" ucx 8)
                echo "| $(human "$size") | $a | $b | $(ratio "$b" "$a") |" \
                     "$(run_ratio "$tr" "$test" "$size" ucx psel 8) | $pp | $up | $same |"
            fi
        done
    done
done

if [ "$tools" = "psel ucx pucp" ]; then
    echo
    echo "### Data path or harness: psel_perftest --ucp runs stock UCP in psel_perftest's loops"
    echo
    echo "Latency: medians of per-run ratios of p50 (overall in brackets);" \
         "bandwidth: of UCX/psel. psel/--ucp compares the data paths in one" \
         "harness, --ucp/ucx_perftest the two harnesses over one data path."
    echo
    echo "| transport | test | size | psel / ucx_perftest | psel / --ucp | --ucp / ucx_perftest |"
    echo "|---|---|-----:|---:|---:|---:|"
    for tr in $transports; do for test in $tests; do for size in $sizes; do
        if [ "$test" = tag_lat ]; then
            echo "| $tr | $test | $(human "$size") |" \
                 "$(run_ratio "$tr" "$test" "$size" psel ucx 6) ($(run_ratio "$tr" "$test" "$size" psel ucx 7)) |" \
                 "$(run_ratio "$tr" "$test" "$size" psel pucp 6) ($(run_ratio "$tr" "$test" "$size" psel pucp 7)) |" \
                 "$(run_ratio "$tr" "$test" "$size" pucp ucx 6) ($(run_ratio "$tr" "$test" "$size" pucp ucx 7)) |"
        else
            echo "| $tr | $test | $(human "$size") |" \
                 "$(run_ratio "$tr" "$test" "$size" ucx psel 8) |" \
                 "$(run_ratio "$tr" "$test" "$size" pucp psel 8) |" \
                 "$(run_ratio "$tr" "$test" "$size" ucx pucp 8) |"
        fi
    done; done; done
fi
echo
echo "elapsed: $((SECONDS - start)) s"
exit 0
