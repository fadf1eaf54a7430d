#!/usr/bin/env bash
# Tuning stock UCX (issue 6): UCX's selection regret with its defaults and
# with the UCX_* settings `psel_info --ucx-env` derives from protosel's
# calibrated choice.
#
# For each transport setup (shm, tcp over loopback, as bench/regret.sh), test
# (tag_lat, tag_bw) and size (the sweep of regret.sh: powers of two up to
# --max-size and both sides of every boundary of protosel's calibrated
# table), it runs ucx_perftest (UCP, UCX_PROTO_ENABLE=y) with UCX's defaults
# ("default"), with protosel's settings ("tuned") and with each of UCX's
# forced protocol settings, in alternation (A B C ... A B C ...), --runs
# times each. UCX's regret for a configuration is its time over the best
# forced setting's time at that size (the median over the rounds of the
# ratio within a round), as in regret.sh; it prints both per size, then the
# worst and the geometric mean of each.
#
# The tuned settings are the NAME=VALUE lines that --ucx-env-cmd prints
# (default `psel_info --ucx-env`), run with the setup's UCX_PSEL_* variables
# and UCX_PSEL_CALIBRATION=<the calibration>; they are added after the
# setup's UCX_TLS / UCX_NET_DEVICES, so a setting of those wins.
#
# Discovery, forced settings, the timed plan and the regret are
# lib_perftest.sh's, shared with regret.sh.
#
# A benchmark, not a test: it exits 0 once the tables are printed, and
# `make check` does not run it. See bench/README.md, "Tuning stock UCX".
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bench/ucx_tuned.sh [options]
  --quick              smoke run: sizes 8, 4096, 1048576, one run each, and a
                       quick calibration
  --calibration FILE   calibration for psel_info --ucx-env (default: run
                       psel_calibrate, --quick with --quick, into the output
                       directory)
  --ucx-env-cmd CMD    command (sh -c) printing the tuned UCX_* settings, one
                       NAME=VALUE a line; run with the setup's UCX_PSEL_*
                       variables and UCX_PSEL_CALIBRATION set (default:
                       psel_info --ucx-env)
  --runs N             runs of each configuration per point (3)
  --max-size N         largest message size (16777216)
  --sizes "S S ..."    explicit list of sizes (no boundary points added)
  --transports "T ..." among shm tcp (both)
  --tests "T ..."      among tag_lat tag_bw (both)
  --psel-perftest P    psel_perftest binary (build/src/tools/psel_perftest);
                       psel_info and psel_calibrate are taken next to it
  --ucx-perftest P     ucx_perftest binary (ucx_perftest in PATH)
  --no-pin             do not pin the server to CPU 0 and the client to CPU 1
  --keep DIR           keep every raw output in DIR (default: a temporary
                       directory, removed at exit)
  -h, --help           this help
Caller's UCX_* variables are ignored: each run gets only its own settings.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
# pt_run_pair, tr_env, psel_info_facts, discover_ucx, ucx_map_sizes,
# sweep_sizes, ucx_plan_point, run_plan, regret_summary, psel_calibration ...
. "$top/bench/lib_perftest.sh" || exit 1
me=ucx_tuned

psel_bin=$top/build/src/tools/psel_perftest
psel_info=""
ucx_bin=$(command -v ucx_perftest || echo ucx_perftest)
runs=3
max_size=16777216
sizes_opt=""
transports="shm tcp"
tests="tag_lat tag_bw"
calibration=""
env_cmd=""
pin=1
keep=""
quick=0

while [ $# -gt 0 ]; do
    case $1 in
    --quick)          quick=1 ;;
    --calibration)    calibration=${2:?}; shift ;;
    --ucx-env-cmd)    env_cmd=${2:?}; shift ;;
    --runs)           runs=${2:?}; shift ;;
    --max-size)       max_size=${2:?}; shift ;;
    --sizes)          sizes_opt=${2:?}; shift ;;
    --transports)     transports=${2:?}; shift ;;
    --tests)          tests=${2:?}; shift ;;
    --psel-perftest)  psel_bin=${2:?}; shift ;;
    --ucx-perftest)   ucx_bin=${2:?}; shift ;;
    --no-pin)         pin=0 ;;
    --keep)           keep=${2:?}; shift ;;
    -h|--help)        usage; exit 0 ;;
    *)                echo "ucx_tuned: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ $quick = 1 ]; then
    runs=1
    [ -n "$sizes_opt" ] || sizes_opt="8 4096 1048576"
fi
# shellcheck disable=SC2086
check_sweep_options $sizes_opt
if [ -n "$calibration" ]; then
    [ -r "$calibration" ] && [ -s "$calibration" ] ||
        { echo "ucx_tuned: cannot read calibration file '$calibration' (psel_calibrate -o FILE writes one)" >&2; exit 1; }
    calibration=$(cd "$(dirname "$calibration")" && pwd)/$(basename "$calibration")
fi
[ -x "$psel_bin" ] || { echo "ucx_tuned: no $psel_bin (run ./dev.sh build)" >&2; exit 1; }
psel_info=$(dirname "$psel_bin")/psel_info
[ -x "$psel_info" ] || { echo "ucx_tuned: no $psel_info (run ./dev.sh build)" >&2; exit 1; }
[ -n "$env_cmd" ] || env_cmd="'$psel_info' --ucx-env"
psel_resolve_bin
command -v "$ucx_bin" >/dev/null || { echo "ucx_tuned: no ucx_perftest (apt-get install ucx-utils)" >&2; exit 1; }
command -v ss >/dev/null || { echo "ucx_tuned: needs ss (iproute2)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "ucx_tuned: needs python3 (psel_info -j)" >&2; exit 1; }

clear_ucx_env

bench_workdir

start=$SECONDS

if [ -z "$calibration" ]; then
    calibration=$out/calibration.txt
    max=$max_size
    [ -n "$sizes_opt" ] && max=$(printf '%s\n' $sizes_opt | sort -n | tail -1)
    [ "$max" -lt 65536 ] && max=65536
    if [ $quick = 1 ]; then tmo=300; else tmo=1200; fi
    psel_calibration "$calibration" $quick "$max" "$transports" $tmo || exit 1
    echo "ucx_tuned: calibration took $((SECONDS - start)) s" >&2
fi
# protosel's tables (boundaries for the sweep, --ucx-env) are the calibrated ones
psel_env_extra=("UCX_PSEL_CALIBRATION=$calibration")

# tuned_env TRANSPORT: run the --ucx-env-cmd for a setup, check its lines and
# set ucx_extra_env["TRANSPORT tuned"].
tuned_env() {
    local tr=$1 f=$out/disc/$1.ucx_env penv=() line n=0 lines=""
    mapfile -t penv < <(tr_env psel "$tr")
    if ! env "${penv[@]}" timeout -k 5 60 sh -c "$env_cmd" >"$f" 2>"$f.err"; then
        echo "ucx_tuned: the tuned settings for $tr failed: $env_cmd: $(grep -v '^ *$' "$f.err" | head -n 2 | tr '\n' ' ' | cut -c1-300)" >&2
        echo "ucx_tuned: does psel_info have --ucx-env yet? Otherwise pass --ucx-env-cmd CMD" >&2
        return 1
    fi
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        case $line in ''|'#'*) continue ;; esac
        if ! [[ $line =~ ^UCX_[A-Za-z0-9_]+=[^[:space:]]*$ ]]; then
            echo "ucx_tuned: $env_cmd, for $tr, line $n: '$line' is not UCX_NAME=VALUE (no spaces)" >&2
            return 1
        fi
        lines+=$line$'\n'
    done <"$f"
    [ -n "$lines" ] || echo "ucx_tuned: note: no tuned settings for $tr: tuned = UCX's defaults" >&2
    ucx_extra_env["$tr tuned"]=$lines
    return 0
}

# --------------------------------------------------------------------------

ucx_ver=$(timeout 10 ucx_info -v 2>/dev/null | sed -n 's/^# \(Library version: \|Version \)//p' | head -1)
echo "ucx_tuned: discovery; raw output in $out" >&2
for tr in $transports; do
    if ! tuned_env "$tr"; then exit 1; fi
    echo "  $tr tuned: $(printf '%s' "${ucx_extra_env["$tr tuned"]}" | tr '\n' ' ')" >&2
    if ! facts=$(psel_info_facts "$tr"); then
        echo "ucx_tuned: psel_info -e -j failed for $tr: $(head -c 300 "$out/disc/$tr.psel_info.err")" >&2
        exit 1
    fi
    tr_bounds[$tr]=$(printf '%s\n' "$facts" | awk '$1 == "B" { print $2 }' | sort -nu | tr '\n' ' ')
    tr_sizes[$tr]=$(sweep_sizes "$sizes_opt" "$max_size" "${tr_bounds[$tr]}")
    discover_ucx "$tr" tuned
    if [ -z "${ucx_cov["$tr auto"]:-}" ] || [ -z "${ucx_cov["$tr tuned"]:-}" ]; then
        echo "ucx_tuned: ucx_perftest does not run on $tr: default: ${ucx_note["$tr auto"]:-ok}; tuned: ${ucx_note["$tr tuned"]:-ok}" >&2
        echo "ucx_tuned: skipping $tr" >&2
        transports=$(echo " $transports " | sed "s/ $tr / /")
        continue
    fi
    ucx_map_sizes "$tr" "${tr_sizes[$tr]}"
done
transports=$(echo $transports)
[ -n "$transports" ] || { echo "ucx_tuned: nothing to run" >&2; exit 1; }

results=$out/results.tsv   # tr test size tool label run p50 overall bw proto rate
plan=$out/plan.tsv         # tr test size tool cfg label
: >"$plan"
: >"$out/ucx_dup.tsv"
for tr in $transports; do
    for test in $tests; do
        for size in ${tr_sizes[$tr]}; do
            ucx_plan_point "$tr" "$test" "$size" "$plan" "$out/ucx_dup.tsv" tuned
        done
    done
done
npoints=$(cut -f1-3 "$plan" | sort -u | wc -l)
echo "ucx_tuned: $npoints points, $(( $(wc -l <"$plan") * runs )) runs (so far $((SECONDS - start)) s)" >&2
echo "  ucx_perftest: $(command -v "$ucx_bin") ($ucx_ver)" >&2
run_plan "$plan" "$results" "$runs"

# --------------------------------------------------------------------------
# Tables

summary=$out/summary.tsv   # tr test size tool t proto best_t best_label best_proto regret same cfg
spread=$out/spread.tsv
regret_summary "$results" "$summary" "$spread" auto tuned

echo
echo "UCX's regret with its defaults and with protosel's settings (psel_info --ucx-env): time / best forced UCX setting;"
echo "medians of $runs run(s), configurations alternating; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "UCX $ucx_ver: ucx_perftest, UCX_PROTO_ENABLE=y; shm: UCX_TLS=posix,sysv,cma; tcp: UCX_TLS=tcp UCX_NET_DEVICES=lo."
echo "time: tag_lat 50th percentile latency, tag_bw time per message (size / overall bandwidth), in usec."
echo "regret: median over the rounds of the configuration's time / the best forced setting's time in the same round;"
echo "> 1: slower than the best UCX setting at that size; < 1 is noise. Calibration: $calibration"
for tr in $transports; do
    echo
    echo "### $tr"
    echo
    echo "* tuned settings (${env_cmd}): $(printf '%s' "${ucx_extra_env["$tr tuned"]}" | tr '\n' ' ')"
    echo "* protosel's calibrated boundaries (psel_info -e -j): ${tr_bounds[$tr]:-none}"
    for test in $tests; do
        echo
        echo "#### $tr $test: time in usec"
        echo
        echo "| size | UCX default | protocol | UCX tuned | protocol | best forced | best (setting: protocol) | default regret | tuned regret |"
        echo "|-----:|------------:|----------|----------:|----------|------------:|--------------------------|---------------:|-------------:|"
        for size in ${tr_sizes[$tr]}; do
            awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" -v h="$(human "$size")" '
                $1 == a && $2 == b && $3 == c && $4 == "ucx" {
                    t[$12] = $5; p[$12] = $6; r[$12] = ($10 > 1.10 ? "**" $10 "**" : $10)
                    best = $7 " | " $8 ": " $9 }
                END {
                    if (best == "") { print "| " h " | - | - | - | - | - | - | - | - |"; exit }
                    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", h,
                        ("auto" in t ? t["auto"] : "-"), ("auto" in p ? p["auto"] : "-"),
                        ("tuned" in t ? t["tuned"] : "-"), ("tuned" in p ? p["tuned"] : "-"),
                        best, ("auto" in r ? r["auto"] : "-"), ("tuned" in r ? r["tuned"] : "-") }' "$summary"
        done
    done
done

echo
echo "### Summary: UCX's regret, defaults against protosel's settings"
echo
echo "| transport | test | sizes | default: worst (size) | default: geo-mean | tuned: worst (size) | tuned: geo-mean | sizes where tuned is better / worse by > 10 % |"
echo "|-----------|------|------:|-----------------------|------------------:|---------------------|----------------:|------------------|"
for tr in $transports; do
    for test in $tests; do
        awk -F'\t' -v a="$tr" -v b="$test" '
            function h(s) { return (s >= 1048576 && s % 1048576 == 0) ? s / 1048576 " MiB" : \
                                   (s >= 1024 && s % 1024 == 0) ? s / 1024 " KiB" : s " B" }
            $1 == a && $2 == b && $4 == "ucx" {
                k = $12; n[k]++; l[k] += log($10); reg[k, $3] = $10; sz[$3] = 1
                if (!(k in w) || $10 > w[k]) { w[k] = $10; ws[k] = $3 } }
            END {
                if (!n["auto"] && !n["tuned"]) exit
                better = worse = 0
                for (s in sz) if (((("auto", s) in reg)) && (("tuned", s) in reg)) {
                    if (reg["tuned", s] < reg["auto", s] / 1.10) better++
                    else if (reg["tuned", s] > reg["auto", s] * 1.10) worse++ }
                printf "| %s | %s | %d | %s | %s | %s | %s | %d / %d |\n", a, b, n["auto"],
                    (n["auto"] ? sprintf("%.2f (%s)", w["auto"], h(ws["auto"])) : "-"),
                    (n["auto"] ? sprintf("%.3f", exp(l["auto"] / n["auto"])) : "-"),
                    (n["tuned"] ? sprintf("%.2f (%s)", w["tuned"], h(ws["tuned"])) : "-"),
                    (n["tuned"] ? sprintf("%.3f", exp(l["tuned"] / n["tuned"])) : "-"), better, worse }' "$summary"
    done
done
fails=$(awk -F'\t' '$10 == "failed"' "$results" | wc -l)
[ "$fails" -gt 0 ] && { echo; echo "$fails run(s) failed (see above and --keep); their points use the runs that worked."; }
echo
echo "elapsed: $((SECONDS - start)) s"
exit 0
