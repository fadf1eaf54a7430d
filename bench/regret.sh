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
# free_port, wait_listen, pt_run_pair, final_line, psel_proto, median, human
. "$top/bench/lib_perftest.sh" || exit 1

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
case $runs in ''|*[!0-9]*|0) echo "regret: --runs must be >= 1" >&2; exit 2 ;; esac
case $max_size in ''|*[!0-9]*|0) echo "regret: --max-size must be >= 1" >&2; exit 2 ;; esac
for s in $sizes_opt; do
    case $s in ''|*[!0-9]*|0) echo "regret: bad size '$s' (bytes, >= 1)" >&2; exit 2 ;; esac
done
for t in $transports; do
    case $t in shm|tcp) ;; *) echo "regret: unknown transport '$t'" >&2; exit 2 ;; esac
done
for t in $tests; do
    case $t in tag_lat|tag_bw) ;; *) echo "regret: unknown test '$t'" >&2; exit 2 ;; esac
done
if [ -n "$report" ]; then
    [ -f "$report/state.sh" ] && [ -f "$report/results.tsv" ] ||
        { echo "regret: $report is not a --keep directory of a finished run" >&2; exit 1; }
    psel_bin=/ with_ucx=0   # nothing runs
fi
[ -x "$psel_bin" ] || { echo "regret: no $psel_bin (run ./dev.sh build)" >&2; exit 1; }
[ -n "$report" ] || [ -x "$psel_info" ] || { echo "regret: no $psel_info (run ./dev.sh build)" >&2; exit 1; }
# A libtool wrapper script costs 0.1 s a start: run the real binary with the
# library path the wrapper would set.
psel_ldpath=""
if [ -x "$(dirname "$psel_bin")/.libs/$(basename "$psel_bin")" ] &&
   grep -q 'libtool' "$psel_bin" 2>/dev/null; then
    psel_ldpath=$(sed -n 's/^ *LD_LIBRARY_PATH="\(.*\):\$LD_LIBRARY_PATH"$/\1/p' "$psel_bin" | head -1)
    [ -n "$psel_ldpath" ] && psel_bin=$(dirname "$psel_bin")/.libs/$(basename "$psel_bin")
fi
if [ $with_ucx = 1 ]; then
    command -v "$ucx_bin" >/dev/null || { echo "regret: no ucx_perftest (apt-get install ucx-utils, or --no-ucx)" >&2; exit 1; }
fi
command -v ss >/dev/null || { echo "regret: needs ss (iproute2)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "regret: needs python3 (psel_info -j)" >&2; exit 1; }
if [ -n "$plot" ] && ! command -v gnuplot >/dev/null; then
    echo "regret: no gnuplot (apt-get install gnuplot-nox): no plot" >&2
    plot=""
fi

# Each tool gets exactly the environment given below.
for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

[ -n "$report" ] && keep=$report
if [ -n "$keep" ]; then
    mkdir -p "$keep" && out=$keep
else
    out=$(mktemp -d /tmp/regret.XXXXXX)
fi
mkdir -p "$out/disc"

# Every process we start is recorded and killed, by pid, at exit.
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$keep" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'echo "regret: interrupted" >&2; exit 130' INT TERM

srv_pin=() cli_pin=()
if [ $pin = 1 ] && [ "$(nproc)" -ge 2 ]; then
    srv_pin=(-c 0) cli_pin=(-c 1)
fi

# --------------------------------------------------------------------------
# Environments

tr_env() {  # TOOL TRANSPORT -> VAR=VAL lines
    case $1/$2 in
    psel/shm) printf '%s\n' UCX_PSEL_TLS=posix,sysv,cma ;;
    psel/tcp) printf '%s\n' UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo ;;
    ucx/shm)  printf '%s\n' UCX_TLS=posix,sysv,cma ;;
    ucx/tcp)  printf '%s\n' UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
    esac
    if [ "$1" = ucx ]; then printf '%s\n' UCX_PROTO_ENABLE=y UCX_WARN_UNUSED_ENV_VARS=n
    elif [ -n "$psel_ldpath" ]; then echo "LD_LIBRARY_PATH=$psel_ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
}

# UCX's settings: name, the protocol (class) it aims at, knobs (ucx_info -c).
# Rendezvous settings aim at "rndv": UCX_RNDV_SCHEME is a wish, what runs is
# read from the tables (see ucx_proto_chain).
ucx_cfgs="short bcopy zcopy rndv-get rndv-put rndv-am"
ucx_cfg_env() {  # NAME -> VAR=VAL lines
    case $1 in
    auto)     ;;
    short)    printf '%s\n' UCX_RNDV_THRESH=inf UCX_BCOPY_THRESH=inf UCX_ZCOPY_THRESH=inf ;;
    bcopy)    printf '%s\n' UCX_RNDV_THRESH=inf UCX_BCOPY_THRESH=0 UCX_ZCOPY_THRESH=inf ;;
    zcopy)    printf '%s\n' UCX_RNDV_THRESH=inf UCX_ZCOPY_THRESH=0 ;;
    rndv-get) printf '%s\n' UCX_RNDV_THRESH=0 UCX_RNDV_SCHEME=get_zcopy ;;
    rndv-put) printf '%s\n' UCX_RNDV_THRESH=0 UCX_RNDV_SCHEME=put_zcopy ;;
    rndv-am)  printf '%s\n' UCX_RNDV_THRESH=0 UCX_RNDV_SCHEME=am ;;
    esac
}
ucx_cfg_aim() {  # NAME -> protocol class its tables must show
    case $1 in
    short) echo egr/short ;; bcopy) echo egr/bcopy ;; zcopy) echo egr/zcopy ;;
    rndv-*) echo rndv ;; *) echo any ;;
    esac
}

# Iterations: about 25 ms of messages by a rough estimate of a message's
# time (shm 0.4 us + size / 3000 MB/s, tcp 8 us + size / 1000 MB/s; a
# round trip is two), so that large sizes and slow forced protocols do not
# dominate the run time; at least 8 round trips (tag_lat) or 64 messages,
# two windows (tag_bw).
iters() {  # TRANSPORT TEST SIZE
    awk -v tr="$1" -v test="$2" -v s="$3" 'BEGIN {
        us = (tr == "shm") ? 0.4 + s / 3000 : 8 + s / 1000
        if (test == "tag_lat") us *= 2
        n = int(25000 / us)
        mx = (test == "tag_lat") ? 20000 : 100000
        mn = (test == "tag_lat") ? 8 : 64
        if (n > mx) n = mx; if (n < mn) n = mn
        print n }'
}

# run_cfg TOOL TRANSPORT CFG TEST SIZE FILE [ITERS WARMUP]: one timed or
# discovery run. CFG: "auto", a protosel UCX_PSEL_PROTOS value, or a UCX
# setting name. Discovery runs pass ITERS and print the tables
# (UCX_PSEL_PROTO_INFO=y / UCX_PROTO_INFO=y on both sides); timed runs print
# what protosel used (UCX_PSEL_PROTO_INFO=used, client) or UCX's tables.
run_cfg() {
    local tool=$1 tr=$2 cfg=$3 test=$4 size=$5 file=$6 n=${7:-} w=${8:-} disc=0 bin
    local senv=() cenv=() tmo=60
    [ -n "$n" ] && { disc=1; tmo=30; }
    if [ -z "$n" ]; then
        n=$(iters "$tr" "$test" "$size")
        w=$((n / 10)); [ $w -gt 1000 ] && w=1000; [ $w -lt 1 ] && w=1
    fi
    mapfile -t senv < <(tr_env "$tool" "$tr")
    if [ "$tool" = psel ]; then
        bin=$psel_bin
        [ "$cfg" != auto ] && senv+=("UCX_PSEL_PROTOS=$cfg")
        cenv=("${senv[@]}")
        if [ $disc = 1 ]; then cenv+=(UCX_PSEL_PROTO_INFO=y)
        else cenv+=(UCX_PSEL_PROTO_INFO=used); fi
    else
        bin=$ucx_bin
        mapfile -t -O ${#senv[@]} senv < <(ucx_cfg_env "$cfg")
        senv+=(UCX_PROTO_INFO=y)
        cenv=("${senv[@]}")
    fi
    pt_run_pair "$bin" "$file" "$tmo" senv cenv -t "$test" -s "$size" -n "$n" -w "$w" -f
}

# --------------------------------------------------------------------------
# Table parsers

# psel_rows FILE: the rows of the UCX_PSEL_PROTO_INFO=y tag-send table as
# "START END PROTOCOL" (END "inf" = unbounded).
psel_rows() {
    awk -F'|' '/\| *protosel *\| *tag send, contig host memory/ { on = 1; n = 0; next }
        on && /\+-/ { if (n) on = 0; next }
        on && NF >= 4 && $2 ~ /^ *[0-9]+\.\.[0-9a-z]+ *$/ {
            rg = $2; gsub(/ /, "", rg); split(rg, b, /\.\./)
            p = $3; sub(/.*\[/, "", p); sub(/\].*/, "", p)
            print b[1], b[2], p; n++ }' "$1"
}

# ucx_proto_chain TEST SIZE FILE...: the protocol UCX runs for SIZE, read
# from UCX_PROTO_INFO=y tables on both sides, as "name transport/device".
# UCX's sender table ("ucp_tag_send*()", or "(multi)" for tag_bw: ucx_perftest
# sends with UCP_OP_ATTR_FLAG_MULTI_SEND) only says eager or rendezvous: its
# rendezvous description is an estimate of the remote side. The receiver then
# picks from "rendezvous data fetch()": a read from remote is rndv/get; any
# other row goes through an RTR, and the sender's "rendezvous data send()"
# table says whether the data moves by put (rndv/put) or by active messages
# (rndv/am).
ucx_proto_chain() {  # TEST SIZE FILE...
    local test=$1 size=$2; shift 2
    ucx_proto_chain_sizes "$test" "$size" "$@" | cut -f2
}

# ucx_proto_chain_sizes TEST "SIZE..." FILE...: "SIZE<tab>protocol" lines.
ucx_proto_chain_sizes() {
    local test=$1 sizes=$2; shift 2
    sed 's/^\[[^]]*\] *\[[^]]*\] *//' "$@" 2>/dev/null | awk -F'|' -v test="$test" -v sizes="$sizes" '
        function num(s,   m) {
            if (s == "inf") return 1e300
            m = 1
            if (s ~ /K$/) m = 1024; else if (s ~ /M$/) m = 1048576; else if (s ~ /G$/) m = 1073741824
            sub(/[KMG]$/, "", s); return s * m
        }
        function name(n) {
            gsub(/^ +| +$/, "", n); sub(/^\(\?\) */, "", n)
            if (n == "eager short") return "egr/short"
            if (n == "eager copy-in copy-out") return "egr/bcopy"
            if (n == "eager zero-copy copy-out") return "egr/zcopy"
            if (n ~ /^rendezvous/) return "rndv"
            if (n ~ /read from remote/) return "rndv/get"
            if (n ~ /write to remote/) return "rndv/put"
            if (n ~ /fragmented copy-in copy-out/) return "rndv/am"
            if (n == "no data fetch") return "none"
            gsub(/ /, "_", n); return n
        }
        function look(t, s,   i) {
            for (i = 1; i <= nr[t]; i++)
                if (s + 0 >= lo[t, i] && s + 0 <= hi[t, i]) return v[t, i]
            return ""
        }
        /ep_cfg\[/ {
            cur = ""
            if ($0 ~ /ucp_tag_send\*\(\)/) cur = "single"
            else if ($0 ~ /ucp_tag_send\*\(multi\)/) cur = "multi"
            else if ($0 ~ /rendezvous data fetch\(\)/) cur = "fetch"
            else if ($0 ~ /rendezvous data send\(\)/) cur = "send"
            if (cur != "") nr[cur] = 0
            next
        }
        cur != "" && NF >= 5 && $2 ~ /^ *[0-9]+(\.\.[0-9a-zKMG]+)? *$/ {
            rg = $2; gsub(/ /, "", rg)
            if (rg !~ /\.\./) rg = rg ".." rg
            split(rg, b, /\.\./)
            tl = $4; gsub(/ /, "", tl)
            k = ++nr[cur]; lo[cur, k] = num(b[1]); hi[cur, k] = num(b[2])
            v[cur, k] = name($3) (tl == "" ? "" : " " tl)
        }
        END {
            n = split(sizes, ss, " ")
            for (j = 1; j <= n; j++) {
                s = ss[j]
                r = (test == "tag_bw" && ("multi" in nr)) ? look("multi", s) : look("single", s)
                if (r ~ /^rndv/) {
                    f = look("fetch", s)
                    if (f == "") r = "rndv/? (no receiver table)"
                    else if (f ~ /^rndv\/get/) r = f
                    else if (look("send", s) != "") r = look("send", s)
                    else r = f " (receiver estimate)"
                }
                print s "\t" (r == "" ? "?" : r)
            }
        }'
}

# Every PROTO_INFO table of a run, without timestamps, pids and addresses:
# two UCX settings with the same tables select the same way at every size.
ucx_tables_key() {  # FILE...
    sed 's/^\[[^]]*\] *\[[^]]*\] *//; s/0x[0-9a-f]* //' "$@" 2>/dev/null |
        grep -E '^\|' | sort -u | md5sum | cut -d' ' -f1
}

# --------------------------------------------------------------------------
# Discovery

# psel_info's view, per transport: "B <boundary>" for every table boundary
# and "C <name> <applies 0|1> <min> <max|inf> <status>" per protocol.
psel_info_facts() {  # TRANSPORT
    local penv=()
    mapfile -t penv < <(tr_env psel "$1")
    env "${penv[@]}" timeout -k 5 60 "$psel_info" -e -j >"$out/disc/$1.psel_info.json" 2>"$out/disc/$1.psel_info.err" || return 1
    python3 - "$out/disc/$1.psel_info.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["tables"]:
    if t.get("operation") != "tag send" or t.get("datatype") != "contig" \
       or t.get("memory_type") != "host":
        continue
    for b in t.get("boundaries", []):
        print("B", b["at"])
    for c in t.get("candidates", []):
        lo, hi = c.get("min_length", 0), "inf"
        if c.get("ranges"):
            hi = c["ranges"][-1]["max_length"]
        print("C", c["protocol"], 1 if c.get("applies") else 0, lo, hi,
              c.get("status", "").replace("\n", " "))
    break
EOF
}

# last_error FILE...: the most telling error line of a failed run.
last_error() {
    sed 's/^\[[^]]*\] *\[[^]]*\] *//' "$@" 2>/dev/null |
        grep -E 'ERROR|psel_perftest:|ucx_perftest:|error' | grep -v 'see above' |
        head -n 2 | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-200 | sed 's/ *$//'
}

declare -A psel_cfg      # "tr proto" -> UCX_PSEL_PROTOS value
declare -A psel_cov      # "tr proto" -> "START END" rows (data path), ';'-joined
declare -A psel_note     # "tr proto" -> why it is not timed
declare -A ucx_cov       # "tr cfg" -> 1 when its tables are its own
declare -A ucx_note      # "tr cfg" -> why it is not timed
declare -A tr_sizes      # tr -> sizes
declare -A tr_bounds     # tr -> "b b ..." boundaries (psel_info + data path)
declare -A psel_protos   # tr -> protocols from psel_info, in order
declare -A pi_lo pi_hi   # "tr proto" -> psel_info's sizes for it

covers() {  # "S E;S E;..." SIZE -> 0 when SIZE is in a range
    local r a b IFS=';'
    for r in $1; do
        a=${r%% *} b=${r##* }
        [ -n "$a" ] && [ "$2" -ge "$a" ] && { [ "$b" = inf ] || [ "$2" -le "$b" ]; } && return 0
    done
    return 1
}

# A size inside START..END to probe a protocol with.
probe_size() {  # START END
    local s=8
    [ "$s" -lt "$1" ] && s=$1
    [ "$2" != inf ] && [ "$s" -gt "$2" ] && s=$2
    [ "$s" -lt 1 ] && s=1
    echo "$s"
}

discover_psel() {  # TRANSPORT
    local tr=$1 facts tag name applies lo hi status f ok q cand=() bounds=""
    local try cov
    facts=$(psel_info_facts "$tr") || {
        echo "regret: psel_info -e -j failed for $tr: $(head -c 300 "$out/disc/$tr.psel_info.err")" >&2
        return 1; }
    printf '%s\n' "$facts" >"$out/disc/$tr.psel_info.facts"
    bounds=$(printf '%s\n' "$facts" | awk '$1 == "B" { print $2 }')
    while read -r tag name applies lo hi status; do
        [ "$tag" = C ] || continue
        psel_protos[$tr]="${psel_protos[$tr]:-} $name"
        if [ "$applies" = 1 ]; then cand+=("$name"); else psel_note["$tr $name"]="$status"; fi
        pi_lo["$tr $name"]=$lo pi_hi["$tr $name"]=$hi
    done <<<"$facts"

    # the data path's own table (runnable protocols only)
    f=$out/disc/$tr.psel.auto
    if run_cfg psel "$tr" auto tag_lat 8 "$f" 20 2; then
        bounds="$bounds $(psel_rows "$f" | awk '$1 > 0 { print $1 }')"
    else
        echo "regret: psel_perftest does not run on $tr: $(last_error "$f" "$f.server")" >&2
        return 1
    fi
    tr_bounds[$tr]=$(printf '%s\n' $bounds | sort -nu | tr '\n' ' ')

    # each protocol forced: alone, or with a second protocol that covers the
    # sizes it does not (an endpoint must cover every size)
    for name in "${cand[@]}"; do
        lo=${pi_lo["$tr $name"]} hi=${pi_hi["$tr $name"]}
        ok=0
        for q in "" "${cand[@]}"; do
            [ "$q" = "$name" ] && continue
            try=$name${q:+,$q}
            f=$out/disc/$tr.psel.${try//\//_}
            if run_cfg psel "$tr" "$try" tag_lat "$(probe_size "$lo" "$hi")" "$f" 20 2; then
                cov=$(psel_rows "$f" | awk -v p="$name" '$3 == p { printf "%s%s %s", (n++ ? ";" : ""), $1, $2 }')
                if [ -n "$cov" ]; then
                    psel_cfg["$tr $name"]=$try psel_cov["$tr $name"]=$cov ok=1
                    break
                fi
            elif ! grep -q 'no protocol for' "$f" "$f.server" 2>/dev/null; then
                psel_note["$tr $name"]="applies (psel_info: sizes $lo..$hi) but does not run in the data path: $(last_error "$f" "$f.server")"
                ok=2
                break
            fi
        done
        [ $ok = 0 ] && psel_note["$tr $name"]="applies (psel_info: sizes $lo..$hi) but no UCX_PSEL_PROTOS setting made the data path use it"
    done
    return 0
}

# UCX: one tag_bw run per setting at 1 MiB, where every setting that can goes
# rendezvous: it prints the single and multi-send tables and the receiver's.
declare -A ucx_key ucx_file
discover_ucx() {  # TRANSPORT
    local tr=$1 cfg f key c seen
    for cfg in auto $ucx_cfgs; do
        f=$out/disc/$tr.ucx.$cfg
        if ! run_cfg ucx "$tr" "$cfg" tag_bw 1048576 "$f" 4 1; then
            ucx_note["$tr $cfg"]="does not run: $(last_error "$f" "$f.server")"
            continue
        fi
        ucx_file["$tr $cfg"]=$f
        key=$(ucx_tables_key "$f" "$f.server")
        seen=""
        for c in $ucx_cfgs; do
            [ "$c" = "$cfg" ] && break
            [ "${ucx_key["$tr $c"]:-}" = "$key" ] && [ -n "${ucx_cov["$tr $c"]:-}" ] && { seen=$c; break; }
        done
        ucx_key["$tr $cfg"]=$key
        if [ "$cfg" != auto ] && [ -n "$seen" ]; then
            ucx_note["$tr $cfg"]="same tables as $seen"
            continue
        fi
        ucx_cov["$tr $cfg"]=1
    done
}

# ucx_forced TR TEST SIZE CFG: the protocol UCX setting CFG runs at SIZE by
# its discovery tables (ucx_map), or nothing when that is not what CFG aims at.
declare -A ucx_map   # "tr test cfg size" -> protocol
ucx_forced() {
    local aim p
    [ -n "${ucx_cov["$1 $4"]:-}" ] || return 1
    aim=$(ucx_cfg_aim "$4")
    p=${ucx_map["$1 $2 $4 $3"]:-?}
    case $aim in
    any)  ;;
    rndv) [ "${p%%/*}" = rndv ] || return 1 ;;
    *)    [ "${p%% *}" = "$aim" ] || return 1 ;;
    esac
    echo "$p"
}

# --------------------------------------------------------------------------

start=$SECONDS
results=$out/results.tsv   # tr test size tool label run p50 overall bw proto
plan=$out/plan.tsv         # tr test size tool cfg label
if [ -z "$report" ]; then
    ucx_ver=$(timeout 10 ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1)
    echo "regret: discovery; raw output in $out" >&2
    for tr in $transports; do
        discover_psel "$tr" || { echo "regret: skipping $tr" >&2; transports=$(echo " $transports " | sed "s/ $tr / /"); continue; }
        if [ -n "$sizes_opt" ]; then
            sizes=$(printf '%s\n' $sizes_opt | sort -nu | tr '\n' ' ')
        else
            sizes=$( { s=1; while [ "$s" -le "$max_size" ]; do echo $s; s=$((s * 2)); done
                       for b in ${tr_bounds[$tr]}; do
                           [ "$b" -ge 2 ] && [ "$b" -le "$max_size" ] && { echo $((b - 1)); echo "$b"; }
                       done; } | sort -nu | tr '\n' ' ')
        fi
        tr_sizes[$tr]=$sizes
        if [ $with_ucx = 1 ]; then
            discover_ucx "$tr"
            for test in $tests; do
                for cfg in $ucx_cfgs; do
                    [ -n "${ucx_cov["$tr $cfg"]:-}" ] || continue
                    f=${ucx_file["$tr $cfg"]}
                    while IFS=$'\t' read -r size p; do
                        ucx_map["$tr $test $cfg $size"]=$p
                    done < <(ucx_proto_chain_sizes "$test" "$sizes" "$f" "$f.server")
                done
            done
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
                [ -n "${ucx_cov["$tr auto"]:-}" ] &&
                    printf '%s\t%s\t%s\tucx\tauto\tauto\n' "$tr" "$test" "$size" >>"$plan"
                # one setting per protocol: the rendezvous settings often run
                # the same one whatever UCX_RNDV_SCHEME says
                ran=()
                for cfg in $ucx_cfgs; do
                    p=$(ucx_forced "$tr" "$test" "$size" "$cfg") || continue
                    if printf '%s\n' "${ran[@]}" | grep -qxF -- "$p"; then
                        printf '%s\t%s\t%s\t%s\t%s\n' "$tr" "$test" "$size" "$cfg" "$p" >>"$out/ucx_dup.tsv"
                        continue
                    fi
                    ran+=("$p")
                    printf '%s\t%s\t%s\tucx\t%s\t%s\n' "$tr" "$test" "$size" "$cfg" "$cfg" >>"$plan"
                done
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

    : >"$results"
    point=0
    tstart=$SECONDS
    mapfile -t points < <(cut -f1-3 "$plan" | awk '!seen[$0]++')
    for pt in "${points[@]}"; do
        IFS=$'\t' read -r tr test size <<<"$pt"
        point=$((point + 1))
        mapfile -t cfgs < <(awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" \
            '$1 == a && $2 == b && $3 == c { print $4 "\t" $5 "\t" $6 }' "$plan")
        printf '  [%3d/%d] %s %s %s: %d configurations (%d s)\n' $point "$npoints" "$tr" "$test" \
            "$(human "$size")" ${#cfgs[@]} $((SECONDS - tstart)) >&2
        for r in $(seq 1 "$runs"); do
            for c in "${cfgs[@]}"; do
                IFS=$'\t' read -r tool cfg label <<<"$c"
                f=$out/$tr.$test.$size.$tool.${label//\//_}.$r
                if run_cfg "$tool" "$tr" "$cfg" "$test" "$size" "$f"; then
                    read -r _ p50 _ overall _ bw _ _ <<<"$(final_line "$f")"
                    if [ "$tool" = psel ]; then proto=$(psel_proto "$f")
                    else proto=$(ucx_proto_chain "$test" "$size" "$f" "$f.server"); fi
                    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tr" "$test" "$size" \
                        "$tool" "$label" "$r" "$p50" "$overall" "$bw" "$proto" >>"$results"
                else
                    echo "    $tool $label run $r failed: $(last_error "$f" "$f.server")" >&2
                    printf '%s\t%s\t%s\t%s\t%s\t%s\t-\t-\t-\tfailed\n' "$tr" "$test" "$size" \
                        "$tool" "$label" "$r" >>"$results"
                fi
            done
        done
    done

else
    . "$out/state.sh"
fi

# --------------------------------------------------------------------------
# Tables

# time: tag_lat p50 latency (us); tag_bw us per message from the overall
# bandwidth (MB/s of 2^20 B, as both tools print).
summary=$out/summary.tsv   # tr test size tool auto_t auto_proto best_t best_label best_proto regret same
spread=$out/spread.tsv     # tr test tool median-of-(max/min over a configuration's runs)
python3 - "$results" "$summary" "$spread" <<'EOF'
import sys, statistics, collections
res, outp, spr = sys.argv[1], sys.argv[2], sys.argv[3]
times = collections.defaultdict(list)
byrun = collections.defaultdict(dict)
protos = collections.defaultdict(collections.Counter)
for line in open(res):
    tr, test, size, tool, label, run, p50, overall, bw, proto = line.rstrip("\n").split("\t")
    if proto == "failed":
        continue
    size = int(size)
    if test == "tag_lat":
        t = float(p50)
    else:
        b = float(bw)
        if b <= 0:
            continue
        t = size / (b * 1048576.0) * 1e6
    k = (tr, test, size, tool, label)
    times[k].append(t)
    byrun[k][run] = t
    protos[k][proto] += 1
def fmt(t):
    return "%.0f" % t if t >= 1000 else "%.1f" % t if t >= 100 else \
           "%.2f" % t if t >= 10 else "%.3f" % t
points = sorted({k[:4] for k in times}, key=lambda k: (k[0], k[1], k[3], k[2]))
with open(outp, "w") as o:
    for p in points:
        tr, test, size, tool = p
        auto = times.get(p + ("auto",))
        forced = {k[4]: statistics.median(v) for k, v in times.items()
                  if k[:4] == p and k[4] != "auto"}
        if not auto or not forced:
            continue
        a = statistics.median(auto)
        ap = protos[p + ("auto",)].most_common(1)[0][0]
        bl = min(forced, key=forced.get)
        b = forced[bl]
        bp = protos[p + (bl,)].most_common(1)[0][0]
        # regret: the median over the rounds of auto / best, both from the
        # same round (run back to back, so a change of the machine's state
        # between rounds does not enter a ratio)
        ra, rb = byrun[p + ("auto",)], byrun[p + (bl,)]
        pairs = [ra[r] / rb[r] for r in ra if r in rb and rb[r] > 0]
        reg = statistics.median(pairs) if pairs else a / b
        # did auto run the protocol of the fastest forced configuration?
        same = "yes" if ap.split(" ")[0] == bp.split(" ")[0] else "no"
        o.write("\t".join(map(str, (tr, test, size, tool, fmt(a), ap,
                                     fmt(b), bl, bp, "%.3f" % reg, same))) + "\n")
sp = collections.defaultdict(list)
for k, v in times.items():
    if len(v) > 1 and min(v) > 0:
        sp[(k[0], k[1], k[3])].append(max(v) / min(v))
with open(spr, "w") as o:
    for k, v in sp.items():
        o.write("\t".join(k) + "\t%.2f\n" % statistics.median(v))
EOF

echo
echo "Selection regret: auto / best forced protocol, medians of $runs run(s) each, alternating;" \
     "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "protosel: psel_perftest, forced by UCX_PSEL_PROTOS; UCX $ucx_ver: ucx_perftest, UCX_PROTO_ENABLE=y, forced by its knobs."
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
            echo "| size | psel auto | psel protocol | best forced | best protocol | regret | UCX auto | UCX protocol | UCX best forced | UCX best (setting: protocol) | UCX regret |"
            echo "|-----:|----------:|---------------|------------:|---------------|-------:|---------:|--------------|----------------:|------------------------------|-----------:|"
        else
            echo "| size | psel auto | psel protocol | best forced | best protocol | regret |"
            echo "|-----:|----------:|---------------|------------:|---------------|-------:|"
        fi
        for size in ${tr_sizes[$tr]}; do
            a=$(awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" '$1 == a && $2 == b && $3 == c && $4 == "psel" {
                  r = $10 > 1.10 ? "**" $10 "**" : $10
                  print "| " $5 " | " $6 " | " $7 " | " $9 " | " r " |" }' "$summary")
            [ -n "$a" ] || a="| - | - | - | - | - |"
            if [ $with_ucx = 1 ]; then
                u=$(awk -F'\t' -v a="$tr" -v b="$test" -v c="$size" '$1 == a && $2 == b && $3 == c && $4 == "ucx" {
                      r = $10 > 1.10 ? "**" $10 "**" : $10
                      print " " $5 " | " $6 " | " $7 " | " $8 ": " $9 " | " r " |" }' "$summary")
                [ -n "$u" ] || u=" - | - | - | - | - |"
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
echo "| transport | test | tool | sizes | worst regret (size) | geo-mean | sizes > 1.10 | of which auto ran another protocol than the best | run spread |"
echo "|-----------|------|------|------:|---------------------|---------:|-------------:|------------------|-----------:|"
awk -F'\t' 'FILENAME == ARGV[1] { spr[$1 "\t" $2 "\t" $3] = $4; next }
    { k = $1 "\t" $2 "\t" $4; n[k]++; l[k] += log($10)
      if (!(k in w) || $10 > w[k]) { w[k] = $10; ws[k] = $3 }
      if ($10 > 1.10) { over[k]++; if ($11 == "no") wrong[k]++ }
      if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
    END { for (i = 1; i <= m; i++) { k = order[i]; split(k, f, "\t")
            s = ws[k]
            s = (s >= 1048576 && s % 1048576 == 0) ? s / 1048576 " MiB" : (s >= 1024 && s % 1024 == 0) ? s / 1024 " KiB" : s " B"
            printf "| %s | %s | %s | %d | %.2f (%s) | %.3f | %d | %d | %s |\n", f[1], f[2], \
                (f[3] == "psel" ? "protosel" : "UCX"), n[k], w[k], s, exp(l[k] / n[k]), over[k], wrong[k], \
                (k in spr ? spr[k] : "-") } }' \
    "$spread" <(sort -t$'\t' -k1,1 -k2,2r -k4,4 -k3,3n "$summary")
echo
echo "run spread: median over the configurations of max/min of their runs' times (- with one run)."

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
