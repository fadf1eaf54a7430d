#!/usr/bin/env bash
# Model fidelity: the time protosel's cost model predicts for each protocol
# against the time psel_perftest measures with that protocol forced, per
# message size, before and after calibration (issue 6, "Model fidelity").
#
# For each transport setup (shm, tcp over loopback, as bench/regret.sh):
#   predicted  the candidates' cost lines of `psel_info -e -j` (every
#              protocol that applies, whatever the table picks): once with
#              UCX_PSEL_CALIBRATION=none (UCT attributes: "before") and once
#              with the calibration file ("after"); tag_lat is compared with
#              the "single" line, tag_bw with the "multi" line;
#   measured   independent psel_perftest runs (not the calibration's own
#              points), each protocol forced by the UCX_PSEL_PROTOS setting
#              regret.sh's discovery finds (lib_perftest.sh), the protocols of
#              a point in alternation (A B C ... A B C ...), the median of
#              --runs runs. tag_lat: the overall average latency of the run
#              (half a round trip, the statistic psel_calibrate fits; --lat-stat
#              p50 for the 50th percentile); tag_bw: 1 / overall message rate.
# err% = (predicted - measured) / measured. It prints a table per setup, then
# the median |err%| before and after calibration and the worst, per setup and
# overall (target after calibration: median <= 15 %).
#
# The calibration is --calibration FILE, or by default a fresh
# `psel_calibrate` (--quick with --quick) into the output directory.
#
# A benchmark, not a test: it exits 0 once the tables are printed, and
# `make check` does not run it. See bench/README.md, "Model fidelity".
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bench/fidelity.sh [options]
  --quick               smoke run: sizes 8, 4096, 1048576, one run each, and a
                        quick calibration (about 1-2 min on a quiet machine)
  --calibration FILE    calibration file to judge (default: run psel_calibrate,
                        --quick with --quick, into the output directory)
  --runs N              runs of each protocol per point (3)
  --sizes "S S ..."     sizes added to 8 256 4096 65536 1048576 8388608
                        (with --quick: to 8 4096 1048576)
  --only-sizes "S ..."  exactly these sizes
  --transports "T ..."  among shm tcp (both)
  --tests "T ..."       among tag_lat tag_bw (both)
  --lat-stat avg|p50    tag_lat column compared: the run's overall average
                        latency (avg, default; what psel_calibrate fits) or the
                        50th percentile (p50)
  --report FILE         also write the tables as markdown to FILE
  --psel-perftest P     psel_perftest binary (build/src/tools/psel_perftest);
                        psel_info and psel_calibrate are taken next to it
  --no-pin              do not pin the server to CPU 0 and the client to CPU 1
  --keep DIR            keep every raw output in DIR (default: a temporary
                        directory, removed at exit)
  -h, --help            this help
Caller's UCX_* variables are ignored: each run gets only its own settings.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
# pt_run_pair, final_line, tr_env, run_cfg, discover_psel, covers, run_plan,
# psel_calibration, human ...
. "$top/bench/lib_perftest.sh" || exit 1
me=fidelity

psel_bin=$top/build/src/tools/psel_perftest
psel_info=""
ucx_bin=ucx_perftest   # never run here
runs=3
base_sizes="8 256 4096 65536 1048576 8388608"
add_sizes=""
only_sizes=""
transports="shm tcp"
tests="tag_lat tag_bw"
lat_stat=avg
calibration=""
report_md=""
pin=1
keep=""
quick=0

while [ $# -gt 0 ]; do
    case $1 in
    --quick)          quick=1 ;;
    --calibration)    calibration=${2:?}; shift ;;
    --runs)           runs=${2:?}; shift ;;
    --sizes)          add_sizes=${2:?}; shift ;;
    --only-sizes)     only_sizes=${2:?}; shift ;;
    --transports)     transports=${2:?}; shift ;;
    --tests)          tests=${2:?}; shift ;;
    --lat-stat)       lat_stat=${2:?}; shift ;;
    --report)         report_md=${2:?}; shift ;;
    --psel-perftest)  psel_bin=${2:?}; shift ;;
    --no-pin)         pin=0 ;;
    --keep)           keep=${2:?}; shift ;;
    -h|--help)        usage; exit 0 ;;
    *)                echo "fidelity: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ $quick = 1 ]; then
    runs=1
    base_sizes="8 4096 1048576"
fi
sizes=$(printf '%s\n' ${only_sizes:-$base_sizes $add_sizes} | sort -nu | tr '\n' ' ')
# shellcheck disable=SC2086
check_sweep_options $sizes
[ -n "$sizes" ] || { echo "fidelity: no sizes" >&2; exit 2; }
case $lat_stat in avg|p50) ;; *) echo "fidelity: --lat-stat is avg or p50" >&2; exit 2 ;; esac
if [ -n "$calibration" ]; then
    [ -r "$calibration" ] && [ -s "$calibration" ] ||
        { echo "fidelity: cannot read calibration file '$calibration' (psel_calibrate -o FILE writes one)" >&2; exit 1; }
    calibration=$(cd "$(dirname "$calibration")" && pwd)/$(basename "$calibration")
fi
[ -x "$psel_bin" ] || { echo "fidelity: no $psel_bin (run ./dev.sh build)" >&2; exit 1; }
psel_info=$(dirname "$psel_bin")/psel_info
[ -x "$psel_info" ] || { echo "fidelity: no $psel_info (run ./dev.sh build)" >&2; exit 1; }
psel_resolve_bin
command -v ss >/dev/null || { echo "fidelity: needs ss (iproute2)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fidelity: needs python3 (psel_info -j)" >&2; exit 1; }
if [ -n "$report_md" ]; then
    : >"$report_md" 2>/dev/null || { echo "fidelity: cannot write --report $report_md" >&2; exit 1; }
    report_md=$(cd "$(dirname "$report_md")" && pwd)/$(basename "$report_md")
fi

clear_ucx_env
# Measured runs and discovery select on attributes, so that which protocols
# a forced setting runs does not depend on the calibration judged.
psel_env_extra=(UCX_PSEL_CALIBRATION=none)

bench_workdir

start=$SECONDS

# --------------------------------------------------------------------------
# Calibration

if [ -z "$calibration" ]; then
    calibration=$out/calibration.txt
    max=$(printf '%s\n' $sizes | sort -n | tail -1)
    [ "$max" -lt 65536 ] && max=65536
    if [ $quick = 1 ]; then tmo=300; else tmo=1200; fi
    psel_calibration "$calibration" $quick "$max" "$transports" $tmo || exit 1
    echo "fidelity: calibration took $((SECONDS - start)) s" >&2
fi

# --------------------------------------------------------------------------
# Discovery and predictions

echo "fidelity: discovery; raw output in $out" >&2
declare -A pred_err
for tr in $transports; do
    if ! discover_psel "$tr"; then
        echo "fidelity: skipping $tr" >&2
        transports=$(echo " $transports " | sed "s/ $tr / /")
        continue
    fi
    penv=()
    mapfile -t penv < <(tr_env psel "$tr")
    for which in before after; do
        cal=none
        [ $which = after ] && cal=$calibration
        f=$out/disc/$tr.$which.json
        if ! env "${penv[@]}" UCX_PSEL_CALIBRATION="$cal" timeout -k 5 60 "$psel_info" -e -j \
                >"$f" 2>"$f.err"; then
            echo "fidelity: psel_info -e -j failed for $tr with UCX_PSEL_CALIBRATION=$cal: $(head -c 300 "$f.err")" >&2
            echo "fidelity: a malformed calibration file is an error; check it or calibrate again" >&2
            exit 1
        fi
        # psel_info warns, and uses attributes, when the file is stale or from
        # another host: say so, the "after" column is then not calibrated
        if [ $which = after ] && [ -s "$f.err" ]; then
            pred_err[$tr]=$(sed 's/^\[[^]]*\] *\[[^]]*\] *//' "$f.err" | grep -v '^ *$' | head -n 3 | tr '\n' ' ')
            echo "fidelity: psel_info with the calibration on $tr says: ${pred_err[$tr]}" >&2
        fi
    done
done
transports=$(echo $transports)
[ -n "$transports" ] || { echo "fidelity: nothing to run" >&2; exit 1; }

# --------------------------------------------------------------------------
# Measurements

results=$out/results.tsv   # tr test size tool label run p50 overall bw proto rate
plan=$out/plan.tsv         # tr test size tool cfg label
: >"$plan"
for tr in $transports; do
    for test in $tests; do
        for size in $sizes; do
            for name in ${psel_protos[$tr]}; do
                [ -n "${psel_cfg["$tr $name"]:-}" ] || continue
                covers "${psel_cov["$tr $name"]}" "$size" || continue
                printf '%s\t%s\t%s\tpsel\t%s\t%s\n' "$tr" "$test" "$size" "${psel_cfg["$tr $name"]}" "$name" >>"$plan"
            done
        done
    done
done
[ -s "$plan" ] || { echo "fidelity: no protocol can be forced at these sizes" >&2; exit 1; }
npoints=$(cut -f1-3 "$plan" | sort -u | wc -l)
echo "fidelity: $npoints points, $(( $(wc -l <"$plan") * runs )) runs (so far $((SECONDS - start)) s)" >&2
run_plan "$plan" "$results" "$runs"

# --------------------------------------------------------------------------
# Tables

notes=$out/notes.tsv   # tr key text
: >"$notes"
for tr in $transports; do
    for name in ${psel_protos[$tr]}; do
        if [ -n "${psel_cfg["$tr $name"]:-}" ]; then
            cov=$(echo "${psel_cov["$tr $name"]//;/, }" | sed 's/\([0-9]\) \([0-9i]\)/\1..\2/g')
            printf '%s\tforced\t%s: UCX_PSEL_PROTOS=%s (the data path runs it at %s)\n' "$tr" "$name" "${psel_cfg["$tr $name"]}" "$cov" >>"$notes"
        else
            printf '%s\tforced\t%s: not measured: %s\n' "$tr" "$name" "${psel_note["$tr $name"]:-?}" >>"$notes"
        fi
    done
    [ -n "${pred_err[$tr]:-}" ] && printf '%s\twarn\tpsel_info with the calibration: %s\n' "$tr" "${pred_err[$tr]}" >>"$notes"
done

head_txt="Model fidelity: predicted (psel_info -e -j cost lines) against measured (psel_perftest, protocol forced), usec;"
head_txt="$head_txt medians of $runs run(s), protocols alternating; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$out/disc" "$notes" "$lat_stat" "$calibration" "${report_md:-}" "$head_txt" $transports <<'EOF'
import sys, json, statistics, collections, math
res, disc, notesf, lat_stat, calf, mdf, head = sys.argv[1:8]
trs = sys.argv[8:]

def ranges(tr, which):
    """protocol -> (min_length, [(max_length, single(c, m), multi(c, m))])"""
    d = json.load(open("%s/%s.%s.json" % (disc, tr, which)))
    for t in d["tables"]:
        if t.get("operation") == "tag send" and t.get("datatype") == "contig" \
           and t.get("memory_type") == "host":
            out = {}
            for c in t.get("candidates", []):
                if not c.get("applies") or not c.get("ranges"):
                    continue
                rs = []
                for r in c["ranges"]:
                    mx = math.inf if r["max_length"] == "inf" else r["max_length"]
                    rs.append((mx, (r["single"]["c"], r["single"]["m"]),
                               (r["multi"]["c"], r["multi"]["m"])))
                out[c["protocol"]] = (c.get("min_length", 0), rs)
            return out
    return {}

def predict(model, proto, test, size):
    """usec, or None where the model has no line for the size"""
    if proto not in model:
        return None
    lo, rs = model[proto]
    if size < lo:
        return None
    for mx, single, multi in rs:
        if size <= mx:
            c, m = single if test == "tag_lat" else multi
            return (c + m * size) * 1e6
    return None

meas = collections.defaultdict(list)
protos = collections.defaultdict(collections.Counter)
failed = 0
for line in open(res):
    f = line.rstrip("\n").split("\t")
    tr, test, size, tool, label, run, p50, overall, bw, proto, rate = f[:11]
    if proto == "failed":
        failed += 1
        continue
    size = int(size)
    if test == "tag_lat":
        t = float(p50 if lat_stat == "p50" else overall)
    else:
        r = float(rate)
        if r <= 0:
            continue
        t = 1e6 / r
    meas[(tr, test, size, label)].append(t)
    protos[(tr, test, size, label)][proto] += 1

notes = collections.defaultdict(list)
for line in open(notesf):
    tr, kind, text = line.rstrip("\n").split("\t", 2)
    notes[tr].append((kind, text))

def human(s):
    if s >= 1048576 and s % 1048576 == 0: return "%d MiB" % (s // 1048576)
    if s >= 1024 and s % 1024 == 0: return "%d KiB" % (s // 1024)
    return "%d B" % s
def fmt(t):
    if t is None: return "-"
    return "%.0f" % t if t >= 1000 else "%.1f" % t if t >= 100 else \
           "%.2f" % t if t >= 10 else "%.3f" % t
def err(p, m):
    return None if p is None or m <= 0 else (p - m) / m * 100.0
def fe(e):
    return "-" if e is None else "%+.0f%%" % e if abs(e) >= 10 else "%+.1f%%" % e

txt, md = [head], [head.replace("usec;", "usec;\n")]
txt.append("calibration: %s" % calf)
md.append("\ncalibration: `%s`" % calf)
txt.append("err%% = (predicted - measured) / measured; tag_lat: %s latency (half round trip) against the "
           "\"single\" line; tag_bw: 1 / overall message rate against the \"multi\" line."
           % ("overall average" if lat_stat == "avg" else "50th percentile"))
md.append("\n" + txt[-1])
order = {"tag_lat": 0, "tag_bw": 1}
stats = {}
cols = ["protocol", "size", "test", "measured", "before", "err%", "after", "err%", "ran"]
for tr in trs:
    before, after = ranges(tr, "before"), ranges(tr, "after")
    rows = []
    for (t, test, size, proto), v in meas.items():
        if t != tr:
            continue
        m = statistics.median(v)
        pb, pa = predict(before, proto, test, size), predict(after, proto, test, size)
        eb, ea = err(pb, m), err(pa, m)
        same = "" if pb is None or pa is None or abs(pb - pa) > 1e-9 * max(pb, pa, 1) \
            else " (no calibrated line: after = before)"
        ran = protos[(t, test, size, proto)].most_common(1)[0][0]
        rows.append((proto, size, order[test], test, m, pb, eb, pa, ea, ran + same,
                     max(v) / min(v) if len(v) > 1 and min(v) > 0 else 0))
    rows.sort(key=lambda r: (r[0], r[2], r[1]))
    stats[tr] = rows
    table = [cols] + [[r[0], human(r[1]), r[3], fmt(r[4]), fmt(r[5]), fe(r[6]),
                       fmt(r[7]), fe(r[8]), r[9]] for r in rows]
    w = [max(len(x[i]) for x in table) for i in range(len(cols))]
    right = {1, 3, 4, 5, 6, 7}
    txt.append("")
    txt.append("### %s: %s" % (tr, "UCX_PSEL_TLS=posix,sysv,cma" if tr == "shm"
                                else "UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo"))
    md.append("")
    md.append(txt[-1])
    md.append("")
    for kind, text in notes[tr]:
        txt.append("  " + ("warning: " if kind == "warn" else "") + text)
        md.append("* " + ("**warning**: " if kind == "warn" else "") + text)
    txt.append("")
    md.append("")
    for i, x in enumerate(table):
        txt.append("  ".join(x[j].rjust(w[j]) if j in right else x[j].ljust(w[j])
                             for j in range(len(cols))).rstrip())
        if i == 0:
            txt.append("  ".join("-" * w[j] for j in range(len(cols))))
    md.append("| protocol | size | test | measured | predicted before | err% | predicted after | err% | protocol run |")
    md.append("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for x in table[1:]:
        md.append("| " + " | ".join(x) + " |")

def summ(rows, k):
    es = [(abs(r[k]), r) for r in rows if r[k] is not None]
    if not es:
        return None, None, 0
    worst = max(es, key=lambda e: e[0])
    return statistics.median(e[0] for e in es), worst, len(es)
def wtxt(w):
    if w is None: return "-"
    e, r = w
    return "%.0f%% (%s %s %s)" % (e, r[0], human(r[1]), r[3])
srows = []
groups = [(tr, stats[tr]) for tr in trs]
if len(trs) > 1:
    groups.append(("overall", [r for tr in trs for r in stats[tr]]))
for name, rows in groups:
    for test in ["all", "tag_lat", "tag_bw"]:
        sel = [r for r in rows if test == "all" or r[3] == test]
        if not sel or (test != "all" and len({r[3] for r in rows}) < 2):
            continue
        mb, wb, nb = summ(sel, 6)
        ma, wa, na = summ(sel, 8)
        sp = [r[10] for r in sel if r[10]]
        spread = statistics.median(sp) if sp else 0
        srows.append([name, test, str(len(sel)),
                      "-" if mb is None else "%.1f%%" % mb, wtxt(wb),
                      "-" if ma is None else "%.1f%%" % ma, wtxt(wa),
                      "-" if ma is None else ("yes" if ma <= 15 else "no"),
                      "%.2f" % spread if spread else "-"])
scols = ["setup", "test", "points", "median |err| before", "worst before",
         "median |err| after", "worst after", "after <= 15%", "run spread"]
table = [scols] + srows
w = [max(len(x[i]) for x in table) for i in range(len(scols))]
txt.append("")
txt.append("### Summary: median |err%| before and after calibration (target after: <= 15 %)")
txt.append("")
for i, x in enumerate(table):
    txt.append("  ".join(x[j].ljust(w[j]) for j in range(len(scols))).rstrip())
    if i == 0:
        txt.append("  ".join("-" * w[j] for j in range(len(scols))))
txt.append("")
txt.append("run spread: median over the points of max/min of their runs' times (- with one run).")
md.append("")
md.append("### Summary: median |err%| before and after calibration (target after: <= 15 %)")
md.append("")
md.append("| " + " | ".join(scols) + " |")
md.append("|---|---|---:|---:|---|---:|---|---|---:|")
for x in srows:
    md.append("| " + " | ".join(x) + " |")
md.append("")
md.append(txt[-1])
if failed:
    txt.append("%d run(s) failed (see above; --keep DIR keeps their output); their points use the runs that worked." % failed)
    md.append("")
    md.append(txt[-1])
print("\n".join(txt))
if mdf:
    open(mdf, "w").write("\n".join(md) + "\n")
EOF
[ -n "$report_md" ] && echo && echo "report: $report_md"
echo
echo "elapsed: $((SECONDS - start)) s"
exit 0
