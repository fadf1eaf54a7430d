#!/usr/bin/env bash
# protosel inside stock UCX (issue 11): the regret of stock UCP without and
# with libprotosel_ucx.so, against the best of UCX's forced settings.
#
# 1. ucx_perftest (UCP tag_lat and tag_bw; shm and tcp over loopback; the
#    sweep of regret.sh: powers of two up to --max-size and both sides of
#    every boundary of protosel's calibrated table). Candidates, timed in
#    alternation with UCX's forced settings (lib_perftest.sh's discovery,
#    plan and regret):
#      auto    stock UCP (UCX_PROTO_ENABLE=y, as every UCX run here)
#      config  preloaded, UCX_PSEL_TIER=config   (the calibration below)
#      proto   preloaded, UCX_PSEL_TIER=protocol (the calibration below)
#      proto-part  the protocol tier with the calibration partly refused:
#              its rendezvous lines through UCP removed, as when
#              psel_calibrate --ucp refuses them (noise), so that those
#              protocols take protosel's lines where they do the same work
#      proto-psel  (--with-protosel-lines) the protocol tier on the
#              calibration's protosel lines alone, without those measured
#              through UCP: the library before psel_calibrate --ucp
#    The calibration is psel_calibrate's (protosel's data path) and
#    psel_calibrate --ucp's (stock UCP's protocols) in one file: both tiers
#    take the UCP lines first.
# 2. The MPI ping-pong (Open MPI pml ucx, test/tools/mpi_pingpong, 2 ranks)
#    over the same transports: candidates stock (Open MPI's UCX as it
#    comes: protocols v1), auto (v2), config, proto, against the best per
#    size of UCX's forced settings (short, bcopy, zcopy, rndv-get, rndv-put,
#    rndv-am, as for ucx_perftest), all sizes in one run per configuration,
#    at least 3 rounds. Each size warms up for a quarter of its time budget
#    (at least 10 iterations), then runs as many as fit in the budget (40 ms,
#    --quick 10 ms; at least 20): a short fixed count would charge a
#    protocol's one-time costs (first touch of the shared-memory FIFO and
#    bounce buffers) to the first size that uses it.
# 3. Overheads: 8 B tag_lat with and without the library (alternating
#    pairs), and the cost of a new endpoint configuration (bench/ucp_ep_cost:
#    the first endpoint and its first sends, in fresh processes).
# Then a plot (gnuplot) of every candidate's regret against the size.
#
# A benchmark, not a test: it prints tables and exits 0; `make check` does
# not run it. See bench/README.md, "protosel inside stock UCX".
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bench/ucx_runtime.sh [options]
  --quick              smoke run: sizes 8, 4096, 65536, 1048576, one run each,
                       fewer MPI iterations and overhead pairs, a quick
                       calibration
  --calibration FILE   calibration for the library (default: run
                       psel_calibrate -o FILE, then psel_calibrate --ucp -o
                       FILE, --quick with --quick, into the output directory);
                       "none": the library on its attribute lines, as a user
                       gets it without calibrating
  --with-protosel-lines  also time the protocol tier on the calibration's
                       protosel lines alone (candidate proto-psel)
  --runs N             runs of each configuration per point (3)
  --max-size N         largest message size (4194304)
  --sizes "S S ..."    explicit list of sizes (no boundary points added)
  --transports "T ..." among shm tcp (both)
  --tests "T ..."      among tag_lat tag_bw (both)
  --parts "P ..."      among perftest mpi overhead (all)
  --plot FILE          regret plot, .svg or .png (OUT/ucx_runtime.svg)
  --build DIR          protosel's build directory (build): the library, the
                       tools, and the UCX it was built against, with that
                       UCX's ucx_perftest and libraries (./dev.sh ucx X.Y.Z
                       makes build-ucx-X.Y.Z against UCX X.Y.Z)
  --lib PATH           libprotosel_ucx.so (BUILD/src/ucx_runtime/.libs/)
  --psel-perftest P    psel_perftest binary (BUILD/src/tools/psel_perftest);
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
. "$top/bench/lib_perftest.sh" || exit 1
me=ucx_runtime

build=$top/build psel_bin="" lib="" ucx_bin="" psel_info=""
runs=3 max_size=4194304 sizes_opt="" transports="shm tcp" tests="tag_lat tag_bw"
parts="perftest mpi overhead" calibration="" plot="" pin=1 keep="" quick=0
with_psel=0

while [ $# -gt 0 ]; do
    case $1 in
    --quick)          quick=1 ;;
    --calibration)    calibration=${2:?}; shift ;;
    --with-protosel-lines) with_psel=1 ;;
    --runs)           runs=${2:?}; shift ;;
    --max-size)       max_size=${2:?}; shift ;;
    --sizes)          sizes_opt=${2:?}; shift ;;
    --transports)     transports=${2:?}; shift ;;
    --tests)          tests=${2:?}; shift ;;
    --parts)          parts=${2:?}; shift ;;
    --plot)           plot=${2:?}; shift ;;
    --build)          build=${2:?}; shift ;;
    --lib)            lib=${2:?}; shift ;;
    --psel-perftest)  psel_bin=${2:?}; shift ;;
    --ucx-perftest)   ucx_bin=${2:?}; shift ;;
    --no-pin)         pin=0 ;;
    --keep)           keep=${2:?}; shift ;;
    -h|--help)        usage; exit 0 ;;
    *)                echo "$me: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

[ -f "$build/Makefile" ] || { echo "$me: no build directory '$build' (./dev.sh build, or ./dev.sh ucx X.Y.Z)" >&2; exit 1; }
build=$(cd "$build" && pwd)
# the UCX the build is for: its ucx_perftest, ucx_info and libraries, for
# every process here and the MPI ranks (a UCX outside the system's paths)
ucx_bindir=$(sed -n 's/^PSEL_UCX_BINDIR = //p' "$build/Makefile")
ucx_libdir=$(sed -n 's/^PSEL_UCX_LIBDIR = //p' "$build/Makefile")
if [ -n "$ucx_bindir" ] && [ "$ucx_bindir" != /usr/bin ]; then
    export PATH=$ucx_bindir:$PATH
    export LD_LIBRARY_PATH=$ucx_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
[ -n "$psel_bin" ] || psel_bin=$build/src/tools/psel_perftest
[ -n "$lib" ] || lib=$build/src/ucx_runtime/.libs/libprotosel_ucx.so
[ -n "$ucx_bin" ] || ucx_bin=$(command -v ucx_perftest || echo ucx_perftest)
mpi_prog=$build/test/tools/mpi_pingpong
ep_cost=$build/bench/ucp_ep_cost

if [ $quick = 1 ]; then
    runs=1
    [ -n "$sizes_opt" ] || sizes_opt="8 4096 65536 1048576"
fi
# shellcheck disable=SC2086
check_sweep_options $sizes_opt
for t in $parts; do
    case $t in perftest|mpi|overhead) ;; *) echo "$me: unknown part '$t' (perftest, mpi, overhead)" >&2; exit 2 ;; esac
done
has_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
if [ "$calibration" = none ]; then
    [ $with_psel = 0 ] || { echo "$me: --with-protosel-lines needs a calibration, not none" >&2; exit 2; }
elif [ -n "$calibration" ]; then
    [ -r "$calibration" ] && [ -s "$calibration" ] ||
        { echo "$me: cannot read calibration file '$calibration' (psel_calibrate -o FILE writes one)" >&2; exit 1; }
    calibration=$(cd "$(dirname "$calibration")" && pwd)/$(basename "$calibration")
fi
[ -f "$lib" ] || { echo "$me: no $lib (run ./dev.sh build)" >&2; exit 1; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
[ -x "$psel_bin" ] || { echo "$me: no $psel_bin (run ./dev.sh build)" >&2; exit 1; }
psel_info=$(dirname "$psel_bin")/psel_info
psel_resolve_bin
command -v "$ucx_bin" >/dev/null || { echo "$me: no ucx_perftest (apt-get install ucx-utils)" >&2; exit 1; }
command -v ss >/dev/null || { echo "$me: needs ss (iproute2)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "$me: needs python3" >&2; exit 1; }
if has_part mpi && { [ ! -x "$mpi_prog" ] || ! command -v mpirun >/dev/null; }; then
    echo "$me: no $mpi_prog or mpirun (apt-get install openmpi-bin libopenmpi-dev; ./dev.sh build): skipping the MPI part" >&2
    parts=$(echo " $parts " | sed 's/ mpi / /')
fi

clear_ucx_env
bench_workdir
[ -n "$plot" ] || plot=$out/ucx_runtime.svg
start=$SECONDS
ucx_ver=$(timeout 10 ucx_info -v 2>/dev/null | sed -n 's/^# \(Library version: \|Version \)//p' | head -1)

if [ -z "$calibration" ]; then
    calibration=$out/calibration.txt
    max=$max_size
    [ -n "$sizes_opt" ] && max=$(printf '%s\n' $sizes_opt | sort -n | tail -1)
    [ "$max" -lt 65536 ] && max=65536
    # a calibration that refuses every line (noise) is what a user may get:
    # the library then keeps its attribute lines for that part
    psel_calibration "$calibration" $quick "$max" "$transports" $([ $quick = 1 ] && echo 300 || echo 1200)
    [ $? = 1 ] && exit 1
    # stock UCP's own protocols, into the same file: the lines the library
    # puts into UCP first
    psel_calibration "$calibration" $quick "$max" "$transports" $([ $quick = 1 ] && echo 300 || echo 1200) --ucp
    [ $? = 1 ] && exit 1
    if [ ! -s "$calibration" ]; then
        echo "$me: both calibrations refused every line: the library runs on its attribute lines (calibration none)" >&2
        calibration=none
    fi
    echo "$me: calibration took $((SECONDS - start)) s" >&2
fi
psel_env_extra=("UCX_PSEL_CALIBRATION=$calibration")
# protosel's table for stock UCP: the lines measured through UCP first
psel_info_args=(--ucp)
# the calibration without its UCP lines (--with-protosel-lines)
calibration_psel=$out/calibration-protosel-lines.txt
[ "$calibration" = none ] || grep -v '^ucp-' "$calibration" >"$calibration_psel"
# the calibration partly refused: without its rendezvous lines through UCP
calibration_part=$out/calibration-partly-refused.txt
[ "$calibration" = none ] || grep -vE '^ucp-(range|point) rndv/' "$calibration" >"$calibration_part"

# the library's two tiers, as extra UCX configurations of lib_perftest.sh
lib_env() {  # TIER [CALIBRATION] -> VAR=VAL lines
    printf '%s\n' "LD_PRELOAD=$lib" "UCX_PSEL_TIER=$1" "UCX_PSEL_CALIBRATION=${2:-$calibration}"
}
# the library's candidates besides config and proto; proto-part needs a
# calibration with rendezvous lines through UCP to remove
lib_cands=""
[ "$calibration" != none ] && grep -qE '^ucp-(range|point) rndv/' "$calibration" && lib_cands="proto-part"
[ $with_psel = 1 ] && lib_cands="$lib_cands proto-psel"
cands="auto config proto $lib_cands"
for tr in $transports; do
    ucx_extra_env["$tr config"]=$(lib_env config)
    ucx_extra_env["$tr proto"]=$(lib_env protocol)
    ucx_extra_env["$tr proto-psel"]=$(lib_env protocol "$calibration_psel")
    ucx_extra_env["$tr proto-part"]=$(lib_env protocol "$calibration_part")
    # the overhead of the library alone: attribute lines, which select as
    # stock UCP does at 8 B (eager short), whatever the calibration says
    ucx_extra_env["$tr proto-attr"]=$(lib_env protocol none)
done

echo "# protosel inside stock UCX: UCX $ucx_ver, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at start"
if [ "$calibration" = none ]; then
    echo "# calibration: none (the library's attribute lines, copies timed at start); library: $lib"
else
    echo "# calibration: $calibration ($(grep -c '^ucp-range' "$calibration") ranges measured through UCP, $(grep -c '^range' "$calibration") through protosel); library: $lib"
fi

# --------------------------------------------------------------------------
# 1. ucx_perftest

summary=$out/summary.tsv
: >"$summary"
if has_part perftest; then
    echo "$me: ucx_perftest discovery; raw output in $out" >&2
    ok_trs=""
    for tr in $transports; do
        if ! facts=$(psel_info_facts "$tr"); then
            echo "$me: psel_info -e -j failed for $tr: $(head -c 300 "$out/disc/$tr.psel_info.err")" >&2
            continue
        fi
        tr_bounds[$tr]=$(printf '%s\n' "$facts" | awk '$1 == "B" { print $2 }' | sort -nu | tr '\n' ' ')
        tr_sizes[$tr]=$(sweep_sizes "$sizes_opt" "$max_size" "${tr_bounds[$tr]}")
        # shellcheck disable=SC2086  # a list
        discover_ucx "$tr" config proto $lib_cands
        if [ -z "${ucx_cov["$tr auto"]:-}" ]; then
            echo "$me: ucx_perftest does not run on $tr: ${ucx_note["$tr auto"]:-?}; skipping" >&2
            continue
        fi
        ucx_map_sizes "$tr" "${tr_sizes[$tr]}"
        ok_trs="$ok_trs $tr"
    done
    results=$out/results.tsv plan=$out/plan.tsv
    : >"$plan"; : >"$out/ucx_dup.tsv"
    for tr in $ok_trs; do
        for test in $tests; do
            for size in ${tr_sizes[$tr]}; do
                ucx_plan_point "$tr" "$test" "$size" "$plan" "$out/ucx_dup.tsv" \
                    config proto $lib_cands
            done
        done
    done
    echo "$me: $(cut -f1-3 "$plan" | sort -u | wc -l) points, $(( $(wc -l <"$plan") * runs )) runs" >&2
    run_plan "$plan" "$results" "$runs"
    regret_summary "$results" "$summary" "$out/spread.tsv" $cands
fi

# --------------------------------------------------------------------------
# 2. MPI ping-pong

mpi_sizes() {
    if [ -n "$sizes_opt" ]; then echo $sizes_opt; return; fi
    local s=8
    while [ "$s" -le "$max_size" ]; do printf '%s ' "$s"; s=$((s * 4)); done
    for b in 7000 12000 24000 48000 96000; do [ "$b" -le "$max_size" ] && printf '%s ' "$b"; done
}

mpi_run() {  # TRANSPORT CFG ROUND RESULTS: one mpirun, every size
    local tr=$1 cfg=$2 r=$3 res=$4 f x=() line size us bw
    f=$out/mpi.$tr.$cfg.$r
    case $tr in
    shm) x+=(-x UCX_TLS=posix,sysv,cma) ;;
    tcp) x+=(-x UCX_TLS=tcp -x UCX_NET_DEVICES=lo) ;;
    esac
    case $cfg in
    stock) ;;
    auto)   x+=(-x UCX_PROTO_ENABLE=y) ;;
    config) x+=(-x UCX_PROTO_ENABLE=y); while read -r line; do x+=(-x "$line"); done < <(lib_env config) ;;
    proto)  x+=(-x UCX_PROTO_ENABLE=y); while read -r line; do x+=(-x "$line"); done < <(lib_env protocol) ;;
    proto-psel) x+=(-x UCX_PROTO_ENABLE=y); while read -r line; do x+=(-x "$line"); done < <(lib_env protocol "$calibration_psel") ;;
    proto-part) x+=(-x UCX_PROTO_ENABLE=y); while read -r line; do x+=(-x "$line"); done < <(lib_env protocol "$calibration_part") ;;
    *)      x+=(-x UCX_PROTO_ENABLE=y); while read -r line; do x+=(-x "$line"); done < <(ucx_cfg_env "$cfg") ;;
    esac
    [ -n "${LD_LIBRARY_PATH:-}" ] && x+=(-x LD_LIBRARY_PATH)
    timeout -k 5 300 mpirun --oversubscribe -np 2 --mca pml ucx --mca pml_ucx_tls any \
        --mca pml_ucx_devices any --mca btl self "${x[@]}" -x UCX_WARN_UNUSED_ENV_VARS=n \
        "$mpi_prog" -s "$(mpi_sizes)" -n 20 -w 10 -t "$mpi_budget_ms" >"$f" 2>&1 &
    pids+=("$!")
    if ! wait "$!" || ! grep -q '^done$' "$f"; then
        echo "    mpi $tr $cfg run $r failed: $(grep -v '^pingpong' "$f" | head -n 2 | tr '\n' ' ' | cut -c1-200)" >&2
        return 1
    fi
    # as lib_perftest's results: the time goes in as the bandwidth of one
    # message in that time, which regret_summary turns back into time
    while read -r _ size _ _ us; do
        bw=$(awk -v s="$size" -v t="$us" 'BEGIN { printf "%.6f", s / (t * 1e-6) / 1048576 }')
        printf '%s\tmpi_pingpong\t%s\tmpi\t%s\t%s\t-\t-\t%s\t-\t-\n' "$tr" "$size" "$cfg" "$r" "$bw" >>"$res"
    done < <(grep '^pingpong ' "$f")
}

if has_part mpi; then
    [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpi_budget_ms=$([ $quick = 1 ] && echo 10 || echo 40)
    # one mpirun times every size: cheap enough for 3 rounds even in --quick
    mpi_runs=$(( runs < 3 ? 3 : runs ))
    mres=$out/mpi_results.tsv
    : >"$mres"
    mcands="stock $cands"
    mcfgs="$mcands $ucx_cfgs"
    echo "$me: MPI ping-pong, sizes $(mpi_sizes)" >&2
    for tr in $transports; do
        for r in $(seq 1 "$mpi_runs"); do
            for cfg in $mcfgs; do
                echo "  mpi $tr round $r: $cfg ($((SECONDS - start)) s)" >&2
                mpi_run "$tr" "$cfg" "$r" "$mres"
            done
        done
    done
    regret_summary "$mres" "$out/mpi_summary.tsv" "$out/mpi_spread.tsv" $mcands
    cat "$out/mpi_summary.tsv" >>"$summary"
fi

# --------------------------------------------------------------------------
# Tables

print_tables() {  # TEST-NAME TOOL "CANDIDATES"
    local test=$1 tool=$2 cs=$3 tr size c head sep
    for tr in $transports; do
        grep -q "^$tr	$test	" "$summary" || continue
        echo
        echo "#### $tr $test: time in usec, regret = time / best forced UCX setting"
        echo
        head="| size |" sep="|-----:|"
        for c in $cs; do head="$head $c | $c regret |"; sep="$sep----:|----:|"; done
        echo "$head best forced (setting: protocol) |"
        echo "$sep------|"
        for size in $(awk -F'\t' -v a="$tr" -v b="$test" '$1 == a && $2 == b { print $3 }' "$summary" | sort -nu); do
            awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" -v h="$(human "$size")" -v cs="$cs" '
                $1 == a && $2 == b && $3 == c {
                    t[$12] = $5; r[$12] = ($10 > 1.10 ? "**" $10 "**" : $10)
                    best = $7 " (" $8 ": " $9 ")" }
                END {
                    n = split(cs, k, " "); line = "| " h " |"
                    for (i = 1; i <= n; i++)
                        line = line " " (k[i] in t ? t[k[i]] : "-") " | " (k[i] in r ? r[k[i]] : "-") " |"
                    print line " " best " |" }' "$summary"
        done
    done
}

print_summary() {  # TEST-NAME "CANDIDATES"
    local test=$1 cs=$2 tr
    for tr in $transports; do
        awk -F'\t' -v a="$tr" -v b="$test" -v cs="$cs" '
            function h(s) { return (s >= 1048576 && s % 1048576 == 0) ? s / 1048576 " MiB" : \
                                   (s >= 1024 && s % 1024 == 0) ? s / 1024 " KiB" : s " B" }
            $1 == a && $2 == b {
                k = $12; n[k]++; l[k] += log($10)
                if (!(k in w) || $10 > w[k]) { w[k] = $10; ws[k] = $3 } }
            END {
                m = split(cs, c, " ")
                for (i = 1; i <= m; i++) if (n[c[i]])
                    printf "| %s | %s | %s | %d | %.2f (%s) | %.3f |\n", a, b, c[i], n[c[i]],
                        w[c[i]], h(ws[c[i]]), exp(l[c[i]] / n[c[i]]) }' "$summary"
    done
}

echo
echo "regret: the median over the rounds of the configuration's time / the best forced UCX"
echo "setting's time in the same round (> 1: slower than the best UCX setting; < 1 is noise);"
echo "$runs run(s) per configuration, in alternation. tag_lat: 50th percentile latency;"
echo "tag_bw: time per message (size / overall bandwidth); mpi: half round trip (mean)."
for test in $tests; do print_tables "$test" ucx "$cands"; done
print_tables mpi_pingpong mpi "stock $cands"
echo
echo "### Summary"
echo
echo "| transport | test | candidate | sizes | worst regret (size) | geo-mean |"
echo "|-----------|------|-----------|------:|---------------------|---------:|"
for test in $tests; do print_summary "$test" "$cands"; done
print_summary mpi_pingpong "stock $cands"

# every size where a tier stays above 1.10, and why (regret_summary's cause:
# noise when the same protocol as the best forced setting ran, or when the
# regret is within the runs' spread; model when another protocol ran)
echo
echo "### Sizes above 1.10 with the library"
echo
echo "| transport | test | size | candidate | regret | ran (time) | best forced (time) | run spread cand/best | cause |"
echo "|---|---|---:|---|---:|---|---|---|---|"
awk -F'\t' '$12 != "auto" && $12 != "stock" && $10 > 1.10 {
        printf "| %s | %s | %s | %s | %s | %s (%s) | %s: %s (%s) | %s / %s | %s |\n",
               $1, $2, $3, $12, $10, $6, $5, $8, $9, $7, $13, $14, $15
        n[$12 " " $15]++ }
    END { for (k in n) printf "%s\n", "# " k ": " n[k] " size(s)" > "/dev/stderr" }' \
    "$summary" 2>"$out/above.counts"
sort "$out/above.counts" | sed 's/^# /* /'

# --------------------------------------------------------------------------
# 3. Overheads

if has_part overhead; then
    npairs=$([ $quick = 1 ] && echo 5 || echo 15)
    echo
    echo "### Overheads ($npairs alternating pairs each; median, usec)"
    echo
    for tr in $transports; do
        f=$out/lat8.$tr
        : >"$f"
        for r in $(seq 1 "$npairs"); do
            for c in auto proto-attr; do
                if run_cfg ucx "$tr" "$c" tag_lat 8 "$out/lat8.$tr.$c.$r" 20000 2000; then
                    printf '%s %s\n' "$c" "$(final_line "$out/lat8.$tr.$c.$r" | awk '{print $2}')" >>"$f"
                fi
            done
        done
        a=$(awk '$1 == "auto" {print $2}' "$f" | median)
        p=$(awk '$1 == "proto-attr" {print $2}' "$f" | median)
        echo "* $tr 8 B tag_lat (p50): without the library $a, with it $p (protocol tier,"
        echo "  attribute lines: eager short at 8 B on both, as stock UCP)"
    done
    if [ -x "$ep_cost" ]; then
        for tr in $transports; do
            f=$out/epcost.$tr
            : >"$f"
            for r in $(seq 1 "$npairs"); do
                for c in none config proto; do
                    e=(UCX_PROTO_ENABLE=y UCX_WARN_UNUSED_ENV_VARS=n)
                    [ "$tr" = shm ] && e+=(UCX_TLS=posix,sysv,cma) || e+=(UCX_TLS=tcp UCX_NET_DEVICES=lo)
                    case $c in
                    config) e+=(LD_PRELOAD="$lib" UCX_PSEL_TIER=config UCX_PSEL_CALIBRATION="$calibration") ;;
                    proto)  e+=(LD_PRELOAD="$lib" UCX_PSEL_TIER=protocol UCX_PSEL_CALIBRATION="$calibration") ;;
                    esac
                    env "${e[@]}" timeout -k 5 60 "$ep_cost" 8 >"$f.$c.$r" 2>&1 &&
                        awk -v c="$c" '$1 == "first_ep_config_us" || $1 == "first_ep_config_minflt" || $1 == "next_ep_config_us" || $1 == "context_us" { print c, $1, $2 }' "$f.$c.$r" >>"$f"
                done
            done
            for k in context_us first_ep_config_us first_ep_config_minflt next_ep_config_us; do
                line="* $tr $k:"
                for c in none config proto; do
                    line="$line $c $(awk -v c="$c" -v k="$k" '$1 == c && $2 == k {print $3}' "$f" | median)"
                done
                echo "$line"
            done
        done
        echo "  (ucp_ep_cost: context_us = ucp_init (with the library: loading and reading its"
        echo "  settings; the config tier also discovers the resources); first_ep_config_us ="
        echo "  ucp_ep_create + ucp_ep_print_info of the first worker, which selects the tag-send"
        echo "  table and its rendezvous tables of a new endpoint configuration; next_ep_config_us"
        echo "  = the same on 7 more workers (new configurations for UCP, the library's cache"
        echo "  hits: same lanes), median; first_ep_config_minflt = its page faults)"
    fi
fi

# --------------------------------------------------------------------------
# Plot

if command -v gnuplot >/dev/null && [ -s "$summary" ]; then
    pd=$out/plot
    mkdir -p "$pd"
    panels=""
    for tr in $transports; do
        for test in $tests mpi_pingpong; do
            grep -q "^$tr	$test	" "$summary" || continue
            panels="$panels $tr:$test"
            for c in stock $cands; do
                awk -F'\t' -v a="$tr" -v b="$test" -v c="$c" '$1 == a && $2 == b && $12 == c { print $3, $10 }' \
                    "$summary" | sort -n >"$pd/$tr.$test.$c.dat"
            done
        done
    done
    n=$(echo $panels | wc -w)
    case $plot in *.png) term="pngcairo size 1400,$((350 * ((n + 1) / 2)))" ;;
                  *)     term="svg size 1400,$((350 * ((n + 1) / 2))) dynamic" ;; esac
    {
        echo "set terminal $term"
        echo "set output '$plot'"
        echo "set multiplot layout $(((n + 1) / 2)),2 title 'stock UCX $ucx_ver: regret against the best forced UCX setting (1 = best)'"
        echo "set termoption noenhanced"
        echo "set logscale x 2; set logscale y; set grid; set key top left"
        echo "set format x '%.0b%B'"
        echo "set xlabel 'message size [B]'; set ylabel 'regret'"
        for p in $panels; do
            tr=${p%%:*} test=${p#*:}
            echo "set title '$tr $test'"
            cmd="plot 1 title 'best forced' lw 1 dt 2 lc rgb 'black'"
            for c in stock $cands; do
                [ -s "$pd/$tr.$test.$c.dat" ] || continue
                case $c in stock) t="stock (v1)"; col="#999999" ;; auto) t="stock UCP"; col="#d62728" ;;
                           config) t="config tier"; col="#1f77b4" ;; proto) t="protocol tier"; col="#2ca02c" ;;
                           proto-psel) t="protocol tier, protosel lines only"; col="#9467bd" ;;
                           proto-part) t="protocol tier, rendezvous lines through UCP refused"; col="#ff7f0e" ;; esac
                cmd="$cmd, '$pd/$tr.$test.$c.dat' using 1:2 with linespoints title '$t' lc rgb '$col' lw 2"
            done
            echo "$cmd"
        done
        echo "unset multiplot"
    } >"$pd/plot.gp"
    if timeout 60 gnuplot "$pd/plot.gp" 2>"$pd/gnuplot.err"; then
        echo; echo "plot: $plot"
    else
        echo "$me: gnuplot failed: $(head -c 300 "$pd/gnuplot.err")" >&2
    fi
fi
echo
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end; elapsed: $((SECONDS - start)) s"
exit 0
