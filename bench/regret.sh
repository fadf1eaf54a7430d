#!/usr/bin/env bash
# Selection regret: automatic protocol selection against the best protocol
# forced by hand, for protosel (psel_perftest) and for UCX (ucx_perftest, UCP,
# UCX_PROTO_ENABLE=y), per message size (issue 5, "Benchmark").
#
# For each transport (shm, tcp over loopback), test (tag_lat, tag_bw) and
# size (powers of two from 1 B to --max-size, plus both sides of every
# boundary of protosel's tag-send table), it times automatic selection and
# every protocol that applies at that size, forced, in alternation (A B C ...
# A B C ...), --runs times each, and prints per size the medians, the best
# forced protocol (lowest median) and the regret: auto / best forced, the
# median over the rounds of the ratio within a round. Then the worst regret
# and the geometric mean per transport and test, for both tools.
#
# Which protocols apply comes from the tools themselves, so the script follows
# protosel's data path as protocols become runnable:
#   protosel  `psel_info -e -j` (which protocols apply, their sizes, the
#             table's boundaries), then one discovery run of psel_perftest per
#             protocol with UCX_PSEL_PROTOS=<it> and UCX_PSEL_PROTO_INFO=y
#             (is it runnable, which sizes it takes in the data path);
#   UCX       one discovery run per knob setting with UCX_PROTO_INFO=y: the
#             setting applies at a size when UCX's tables show the protocol
#             it aims at there.
#
#   bench/regret.sh [--quick] [options]
#
# A benchmark, not a test: it exits 0 once the tables are printed, and
# `make check` does not run it. See bench/README.md, "Selection regret".
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bench/regret.sh [options]
  --quick              smoke run: sizes 8, 4096, 1048576, one run each
  --runs N             runs of each configuration per point (3)
  --max-size N         largest message size (16777216)
  --sizes "S S ..."    explicit list of sizes (no boundary points added)
  --transports "T ..." among shm tcp (both)
  --tests "T ..."      among tag_lat tag_bw (both)
  --no-ucx             time protosel only
  --cold               from 64 KiB, protosel's runs use buffers out of cache
                       (psel_perftest --cold), as psel_calibrate measures them
                       (CAL_COLD_MIN); implies --no-ucx (ucx_perftest has no
                       such mode)
  --calibration FILE   protosel selects on these measured cost lines
                       (psel_calibrate); default: the advertised attributes
  --plot FILE.svg      also draw regret vs size with gnuplot (if installed)
  --psel-perftest P    psel_perftest binary (build/src/tools/psel_perftest)
  --psel-info P        psel_info binary (next to psel_perftest)
  --ucx-perftest P     ucx_perftest binary (ucx_perftest in PATH)
  --no-pin             do not pin the server to CPU 0 and the client to CPU 1
  --keep DIR           keep every raw output and results.tsv in DIR (default:
                       a temporary directory, removed at exit)
  --report DIR         print the tables (and --plot) again from a --keep DIR,
                       without running anything
  -h, --help           this help
Caller's UCX_* variables are ignored: each run gets only its own settings.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
# pt_run_pair, final_line, the setups, run_cfg, discover_psel, discover_ucx,
# ucx_plan_point, run_plan, regret_summary, human ...
. "$top/bench/lib_perftest.sh" || exit 1
me=regret
psel_env_extra=(UCX_PSEL_CALIBRATION=none)
psel_args_extra=()

psel_bin=$top/build/src/tools/psel_perftest
psel_info=""
ucx_bin=$(command -v ucx_perftest || echo ucx_perftest)
runs=3
max_size=16777216
sizes_opt=""
transports="shm tcp"
tests="tag_lat tag_bw"
pin=1
keep=""
quick=0
with_ucx=1
plot=""
report=""

while [ $# -gt 0 ]; do
    case $1 in
    --quick)          quick=1 ;;
    --runs)           runs=${2:?}; shift ;;
    --max-size)       max_size=${2:?}; shift ;;
    --sizes)          sizes_opt=${2:?}; shift ;;
    --transports)     transports=${2:?}; shift ;;
    --tests)          tests=${2:?}; shift ;;
    --no-ucx)         with_ucx=0 ;;
    --cold)           with_ucx=0; psel_args_extra=(--cold); psel_args_min=65536 ;;
    --calibration)    [ -r "${2:?}" ] || { echo "regret: cannot read calibration file '$2' (psel_calibrate -o FILE writes one)" >&2; exit 2; }
                      psel_env_extra=("UCX_PSEL_CALIBRATION=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift ;;
    --plot)           plot=${2:?}; shift ;;
    --psel-perftest)  psel_bin=${2:?}; shift ;;
    --psel-info)      psel_info=${2:?}; shift ;;
    --ucx-perftest)   ucx_bin=${2:?}; shift ;;
    --no-pin)         pin=0 ;;
    --keep)           keep=${2:?}; shift ;;
    --report)         report=${2:?}; shift ;;
    -h|--help)        usage; exit 0 ;;
    *)                echo "regret: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ $quick = 1 ]; then
    runs=1
    [ -n "$sizes_opt" ] || sizes_opt="8 4096 1048576"
fi
[ -n "$psel_info" ] || psel_info=$(dirname "$psel_bin")/psel_info
# shellcheck disable=SC2086
check_sweep_options $sizes_opt
if [ -n "$report" ]; then
    [ -f "$report/state.sh" ] && [ -f "$report/results.tsv" ] ||
        { echo "regret: $report is not a --keep directory of a finished run" >&2; exit 1; }
    psel_bin=/ with_ucx=0   # nothing runs
fi
[ -x "$psel_bin" ] || { echo "regret: no $psel_bin (run ./dev.sh build)" >&2; exit 1; }
[ -n "$report" ] || [ -x "$psel_info" ] || { echo "regret: no $psel_info (run ./dev.sh build)" >&2; exit 1; }
psel_resolve_bin
if [ $with_ucx = 1 ]; then
    command -v "$ucx_bin" >/dev/null || { echo "regret: no ucx_perftest (apt-get install ucx-utils, or --no-ucx)" >&2; exit 1; }
fi
command -v ss >/dev/null || { echo "regret: needs ss (iproute2)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "regret: needs python3 (psel_info -j)" >&2; exit 1; }
if [ -n "$plot" ] && ! command -v gnuplot >/dev/null; then
    echo "regret: no gnuplot (apt-get install gnuplot-nox): no plot" >&2
    plot=""
fi

# Each tool gets exactly the environment tr_env and run_cfg give it.
clear_ucx_env

[ -n "$report" ] && keep=$report
# every process started is recorded and killed, by pid, at exit
bench_workdir

# --------------------------------------------------------------------------

start=$SECONDS
results=$out/results.tsv   # tr test size tool label run p50 overall bw proto rate
plan=$out/plan.tsv         # tr test size tool cfg label
if [ -z "$report" ]; then
    ucx_ver=$(timeout 10 ucx_info -v 2>/dev/null | sed -n 's/^# \(Library version: \|Version \)//p' | head -1)
    echo "regret: discovery; raw output in $out" >&2
    for tr in $transports; do
        discover_psel "$tr" || { echo "regret: skipping $tr" >&2; transports=$(echo " $transports " | sed "s/ $tr / /"); continue; }
        tr_sizes[$tr]=$(sweep_sizes "$sizes_opt" "$max_size" "${tr_bounds[$tr]}")
        if [ $with_ucx = 1 ]; then
            discover_ucx "$tr"
            ucx_map_sizes "$tr" "${tr_sizes[$tr]}"
        fi
    done
    transports=$(echo $transports)
    [ -n "$transports" ] || { echo "regret: nothing to run" >&2; exit 1; }

    # The plan: every (transport, test, size) point with its configurations.
    : >"$plan"
    : >"$out/ucx_dup.tsv"  # tr test size cfg protocol: not timed, an earlier setting runs it
    for tr in $transports; do
        for test in $tests; do
            for size in ${tr_sizes[$tr]}; do
                printf '%s\t%s\t%s\tpsel\tauto\tauto\n' "$tr" "$test" "$size" >>"$plan"
                for name in ${psel_protos[$tr]}; do
                    [ -n "${psel_cfg["$tr $name"]:-}" ] || continue
                    covers "${psel_cov["$tr $name"]}" "$size" || continue
                    printf '%s\t%s\t%s\tpsel\t%s\t%s\n' "$tr" "$test" "$size" "${psel_cfg["$tr $name"]}" "$name" >>"$plan"
                done
                [ $with_ucx = 1 ] || continue
                ucx_plan_point "$tr" "$test" "$size" "$plan" "$out/ucx_dup.tsv"
            done
        done
    done
    declare -p transports tests runs max_size with_ucx ucx_ver tr_sizes tr_bounds \
        psel_protos psel_cfg psel_cov psel_note ucx_cov ucx_note >"$out/state.sh"
    npoints=$(cut -f1-3 "$plan" | sort -u | wc -l)
    nruns=$(( $(wc -l <"$plan") * runs ))
    echo "regret: $npoints points, $nruns runs (discovery took $((SECONDS - start)) s)" >&2
    echo "  psel_perftest: $psel_bin" >&2
    [ $with_ucx = 1 ] && echo "  ucx_perftest:  $(command -v "$ucx_bin") ($ucx_ver)" >&2

    run_plan "$plan" "$results" "$runs"

else
    . "$out/state.sh"
fi

# --------------------------------------------------------------------------
# Tables

# time: tag_lat p50 latency (us); tag_bw us per message from the overall
# bandwidth (MB/s of 2^20 B, as both tools print).
summary=$out/summary.tsv   # tr test size tool auto_t auto_proto best_t best_label best_proto regret same auto auto_spread best_spread cause
spread=$out/spread.tsv     # tr test tool median-of-(max/min over a configuration's runs)
regret_summary "$results" "$summary" "$spread"

echo
echo "Selection regret: auto / best forced protocol, medians of $runs run(s) each, alternating;" \
     "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "protosel: psel_perftest, forced by UCX_PSEL_PROTOS; UCX $ucx_ver: ucx_perftest, UCX_PROTO_ENABLE=y, forced by its knobs."
echo "protosel selects on: ${psel_env_extra[*]} (none: the advertised attributes)"
[ ${#psel_args_extra[@]} -gt 0 ] && echo "protosel runs with: ${psel_args_extra[*]} (buffers out of cache) from $psel_args_min B"
echo "shm: UCX_PSEL_TLS=posix,sysv,cma / UCX_TLS=posix,sysv,cma;" \
     "tcp: UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo / UCX_TLS=tcp UCX_NET_DEVICES=lo"
echo "time: tag_lat 50th percentile latency, tag_bw time per message (size / overall bandwidth), in usec."
echo "best forced: the forced protocol with the lowest median; regret: median over the rounds of auto / that protocol"
echo "in the same round (A B C ... run back to back). regret > 1: automatic selection is slower; < 1 is noise."
[ $with_ucx = 1 ] && echo "UCX protocols from UCX_PROTO_INFO=y: the sender's ucp_tag_send*() table (tag_bw: *(multi)), for rendezvous then the receiver's \"rendezvous data fetch()\" and the sender's \"rendezvous data send()\" tables."
for tr in $transports; do
    echo
    echo "### $tr: what can be forced"
    echo
    for name in ${psel_protos[$tr]}; do
        if [ -n "${psel_cfg["$tr $name"]:-}" ]; then
            cov=${psel_cov["$tr $name"]//;/, }
            echo "* protosel $name: UCX_PSEL_PROTOS=${psel_cfg["$tr $name"]}; the data path uses it at sizes $(echo "$cov" | sed 's/\([0-9]\) \([0-9i]\)/\1..\2/g')"
        else
            echo "* protosel $name: not timed: ${psel_note["$tr $name"]:-?}"
        fi
    done
    echo "* protosel boundaries (psel_info -e and the data path): ${tr_bounds[$tr]}"
    if [ $with_ucx = 1 ]; then
        for cfg in $ucx_cfgs; do
            e=$(ucx_cfg_env "$cfg" | tr '\n' ' ')
            if [ -n "${ucx_cov["$tr $cfg"]:-}" ]; then
                line="* UCX $cfg (${e% }):"
                for test in $tests; do
                    n=$(awk -F'\t' -v a="$tr" -v b="$test" -v c="$cfg" '$1 == a && $2 == b && $4 == "ucx" && $6 == c' "$plan" | wc -l)
                    d=$(awk -F'\t' -v a="$tr" -v b="$test" -v c="$cfg" '$1 == a && $2 == b && $4 == c { print $5 }' "$out/ucx_dup.tsv" | sort -u | paste -sd, -)
                    line="$line $test timed at $n sizes${d:+ (elsewhere an earlier setting runs the same $d)};"
                done
                echo "${line%;}"
            else
                echo "* UCX $cfg (${e% }): not timed: ${ucx_note["$tr $cfg"]:-?}"
            fi
        done
    fi
done

for tr in $transports; do
    for test in $tests; do
        echo
        echo "### $tr $test: time in usec (tag_lat: p50 latency; tag_bw: per message)"
        echo
        if [ $with_ucx = 1 ]; then
            echo "| size | psel auto | psel protocol | best forced | best protocol | regret | spread auto/best | UCX auto | UCX protocol | UCX best forced | UCX best (setting: protocol) | UCX regret | UCX spread auto/best |"
            echo "|-----:|----------:|---------------|------------:|---------------|-------:|------:|---------:|--------------|----------------:|------------------------------|-----------:|------:|"
        else
            echo "| size | psel auto | psel protocol | best forced | best protocol | regret | spread auto/best |"
            echo "|-----:|----------:|---------------|------------:|---------------|-------:|------:|"
        fi
        for size in ${tr_sizes[$tr]}; do
            a=$(awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" '$1 == a && $2 == b && $3 == c && $4 == "psel" {
                  r = $10 > 1.10 ? "**" $10 "** " $15 : $10
                  print "| " $5 " | " $6 " | " $7 " | " $9 " | " r " | " $13 "/" $14 " |" }' "$summary")
            [ -n "$a" ] || a="| - | - | - | - | - | - |"
            if [ $with_ucx = 1 ]; then
                u=$(awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" '$1 == a && $2 == b && $3 == c && $4 == "ucx" {
                      r = $10 > 1.10 ? "**" $10 "** " $15 : $10
                      print " " $5 " | " $6 " | " $7 " | " $8 ": " $9 " | " r " | " $13 "/" $14 " |" }' "$summary")
                [ -n "$u" ] || u=" - | - | - | - | - | - |"
                echo "| $(human "$size") $a$u"
            else
                echo "| $(human "$size") $a"
            fi
        done
    done
done

echo
echo "### Summary: regret = auto / best forced (target <= 1.10 at every size)"
echo
echo "| transport | test | tool | sizes | worst regret (size) | geo-mean | sizes > 1.10 | of which auto ran another protocol than the best | of which the cause is the model (beyond the spread) | run spread |"
echo "|-----------|------|------|------:|---------------------|---------:|-------------:|------------------|------------------|-----------:|"
awk -F'\t' 'FILENAME == ARGV[1] { spr[$1 "\t" $2 "\t" $3] = $4; next }
    { k = $1 "\t" $2 "\t" $4; n[k]++; l[k] += log($10)
      if (!(k in w) || $10 > w[k]) { w[k] = $10; ws[k] = $3 }
      if ($10 > 1.10) { over[k]++; if ($11 == "no") wrong[k]++; if ($15 == "model") model[k]++ }
      if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
    END { for (i = 1; i <= m; i++) { k = order[i]; split(k, f, "\t")
            s = ws[k]
            s = (s >= 1048576 && s % 1048576 == 0) ? s / 1048576 " MiB" : (s >= 1024 && s % 1024 == 0) ? s / 1024 " KiB" : s " B"
            printf "| %s | %s | %s | %d | %.2f (%s) | %.3f | %d | %d | %d | %s |\n", f[1], f[2], \
                (f[3] == "psel" ? "protosel" : "UCX"), n[k], w[k], s, exp(l[k] / n[k]), over[k], wrong[k], \
                model[k], (k in spr ? spr[k] : "-") } }' \
    "$spread" <(sort -t$'\t' -k1,1 -k2,2r -k4,4 -k3,3n "$summary")
echo
echo "run spread: median over the configurations of max/min of their runs' times (- with one run)."
echo "spread auto/best: max/min of that point's runs; a regret above 1.10 is marked noise (the same protocol ran, or the regret is within the spreads) or model (auto chose another protocol, beyond the spreads)."

fails=$(awk -F'\t' '$10 == "failed"' "$results" | wc -l)
[ "$fails" -gt 0 ] && { echo; echo "$fails run(s) failed (see above and --keep); their points use the runs that worked."; }

if [ -n "$plot" ]; then
    pdat=$out/plot.dat
    : >"$pdat"
    for tr in $transports; do
        for test in $tests; do
            for tool in psel ucx; do
                echo "# $tr $test $tool" >>"$pdat"
                awk -F'\t' -v a="$tr" -v b="$test" -v t="$tool" '$1 == a && $2 == b && $4 == t { print $3, $10 }' \
                    "$summary" | sort -n >>"$pdat"
                printf '\n\n' >>"$pdat"
            done
        done
    done
    ntr=$(echo $transports | wc -w) nte=$(echo $tests | wc -w)
    ymin=$(awk -F'\t' 'BEGIN { m = 0.8 } $10 + 0 > 0 && $10 * 0.9 < m { m = $10 * 0.9 } END { print m }' "$summary")
    ymax=$(awk -F'\t' 'BEGIN { m = 1.5 } $10 * 1.2 > m { m = $10 * 1.2 } END { print m }' "$summary")
    xt=$(awk -v mx="$max_size" 'BEGIN { for (e = 0; 2 ^ e <= mx * 1.01; e += 3) {
             v = 2 ^ e; l = (v >= 1048576) ? v / 1048576 "M" : (v >= 1024) ? v / 1024 "K" : v
             printf "%s\"%s\" %d", (e ? ", " : ""), l, v } }')
    {
        echo "set terminal svg size $((520 * nte)),$((340 * ntr)) dynamic noenhanced font 'sans,11'"
        echo "set output '$plot'"
        echo "set multiplot layout $ntr,$nte title 'regret = auto / best forced protocol (medians of $runs runs), $(date +%F), UCX $ucx_ver'"
        echo "set logscale x 2; set xrange [0.8:$((max_size * 5 / 4))]; set xtics ($xt)"
        echo "set logscale y; set yrange [$ymin:$ymax]; set ytics (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10, 20, 50)"
        echo "set grid; set key top left"
        echo "set ylabel 'regret'; set xlabel 'message size (B)'"
        echo "set arrow 1 from graph 0, first 1.10 to graph 1, first 1.10 nohead dt 2 lc rgb 'red'"
        echo "set label 1 '1.10' at graph 1.01, first 1.10 left tc rgb 'red' font 'sans,9'"
        idx=0
        for tr in $transports; do
            for test in $tests; do
                echo "set title '$tr $test'"
                if [ $with_ucx = 1 ]; then
                    echo "plot '$pdat' index $idx using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 title 'protosel', \\"
                    echo "     '$pdat' index $((idx + 1)) using 1:2 with linespoints pt 5 ps 0.5 lw 1.5 title 'UCX'"
                else
                    echo "plot '$pdat' index $idx using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 title 'protosel'"
                fi
                idx=$((idx + 2))
            done
        done
        echo "unset multiplot"
    } >"$out/plot.gp"
    if timeout 60 gnuplot "$out/plot.gp" 2>"$out/plot.err"; then
        # gnuplot writes many empty groups: drop them (a third of the file)
        command -v perl >/dev/null && perl -0pi -e 's/<g [^>]*>\s*<\/g>\n?//g' "$plot"
        echo; echo "plot: $plot"
    else
        echo "regret: gnuplot failed: $(head -c 300 "$out/plot.err")" >&2
    fi
fi

echo
echo "elapsed: $((SECONDS - start)) s"
exit 0
