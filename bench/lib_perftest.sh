# shellcheck shell=bash disable=SC2154,SC2034
# (the variables below are the caller's; the arrays discovery fills are the caller's to read)
# Shell functions shared by the bench/ scripts (vs_ucx_perftest.sh,
# regret.sh, fidelity.sh, ucx_tuned.sh): starting a psel_perftest /
# ucx_perftest server and client pair, parsing their output, small
# statistics; and, for the scripts that force protocols, the transport
# setups, the forced configurations of both tools and how they are
# discovered, the timed plan and its regret summary. Sourced, never run.
#
# The caller defines:
#   pids=()              every process started is appended (the caller's EXIT
#                        trap kills them by pid)
#   srv_pin=() cli_pin=()  extra server / client arguments (-c CPU)
# and, for the functions from "Setups" on:
#   me                   the script's name, for messages
#   out                  the output directory (with a disc/ subdirectory)
#   psel_bin psel_info   psel_perftest and psel_info (psel_resolve_bin)
#   ucx_bin              ucx_perftest
#   psel_env_extra=()    VAR=VAL added to every protosel run (may be empty)
#   psel_args_extra=()   optional: client arguments of the timed protosel
#                        runs from psel_args_min bytes on (regret.sh --cold)
#   psel_args_min        optional: that size (0)
#   ucx_extra_env[]      optional: "TRANSPORT NAME" -> VAR=VAL lines of an
#                        extra, not forced, UCX configuration NAME

# A port nobody listens on or uses, drawn at random (bounded tries).
free_port() {
    local _i p
    for _i in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        [ -z "$(ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null)" ] && { echo "$p"; return 0; }
    done
    return 1
}

# wait_listen PORT PID: up to 10 s for PID to listen on PORT.
wait_listen() {
    local _i
    for _i in $(seq 1 500); do
        kill -0 "$2" 2>/dev/null || return 1
        [ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ] && return 0
        sleep 0.02
    done
    return 1
}

# pt_run_pair BIN FILE TIMEOUT SENV CENV CLIENT-ARGS...: one server and one
# client of BIN on a fresh port, each under `timeout -k 5 TIMEOUT`. SENV and
# CENV name arrays of VAR=VAL (the whole environment of the tool besides the
# caller's non-UCX variables). The client's output goes to FILE, the
# server's to FILE.server. Two tries; returns 0 when FILE has a final line.
pt_run_pair() {
    local bin=$1 file=$2 tmo=$3 port spid cpid _try
    local -n _senv=$4 _cenv=$5
    shift 5
    for _try in 1 2; do
        port=$(free_port) || return 1
        env "${_senv[@]}" timeout -k 5 "$tmo" \
            "$bin" -p "$port" "${srv_pin[@]}" >"$file.server" 2>&1 &
        spid=$!; pids+=("$spid")
        if ! wait_listen "$port" "$spid"; then
            kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
            continue
        fi
        env "${_cenv[@]}" timeout -k 5 "$tmo" \
            "$bin" 127.0.0.1 -p "$port" "${cli_pin[@]}" "$@" >"$file" 2>&1 &
        cpid=$!; pids+=("$cpid")
        # a client that failed leaves its server waiting: ended at once
        wait "$cpid" 2>/dev/null || kill "$spid" 2>/dev/null
        wait "$spid" 2>/dev/null
        final_line "$file" >/dev/null && return 0
    done
    return 1
}

# The -f final line: 8 numeric columns (iterations, percentile, average and
# overall latency or overhead, bandwidth average/overall, rate average/overall).
final_line() {
    awk 'NF == 8 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ && $8 ~ /^[0-9]+$/ { l = $0 }
         END { if (l == "") exit 1; print l }' "$1"
}

# Protocol protosel selects for SIZE: the row of the UCX_PSEL_PROTO_INFO=y
# table that covers SIZE, "protosel streamed" for tag_bw (psel_perftest
# streams tag_bw sends, as ucx_perftest does with UCP_OP_ATTR_FLAG_MULTI_SEND)
# and "protosel" for tag_lat. Timed runs read the tables, printed once at
# endpoint creation, and not UCX_PSEL_PROTO_INFO=used, which counts every
# message on the send path: UCX's side prints tables too.
psel_proto() {  # FILE TEST SIZE
    awk -F'|' -v test="$2" -v size="$3" '
        /\| *protosel( streamed)? *\| *tag send, contig host memory/ {
            cur = ($0 ~ /protosel streamed/) ? "multi" : "single"; next }
        cur != "" && /\+-/ { next }
        cur != "" && NF >= 4 && $2 ~ /^ *[0-9]+\.\.[0-9a-z]+ *$/ {
            rg = $2; gsub(/ /, "", rg); split(rg, b, /\.\./)
            if (size + 0 >= b[1] + 0 && (b[2] == "inf" || size + 0 <= b[2] + 0)) {
                p = $3; sub(/.*\[/, "", p); sub(/\].*/, "", p); got[cur] = p }
            next }
        { cur = "" }
        END {
            r = (test == "tag_bw" && ("multi" in got)) ? got["multi"] : got["single"]
            print (r == "" ? "?" : r) }' "$1"
}

# ucx_lib_setup: the UCX that protosel build $build is for, and how
# protosel goes into its ucx_perftest: sets bindir, libdir, bin (that
# ucx_perftest), libs, mode (plugin where the build has the plugin, else
# preload, unless the caller set it) and psel_env; exports LD_LIBRARY_PATH.
# Exits with a message when the build or its UCX is missing.
ucx_lib_setup() {
    [ -f "$build/Makefile" ] || { echo "$me: no build directory $build (./dev.sh ucx 1.22.0)" >&2; exit 1; }
    bindir=$(sed -n 's/^PSEL_UCX_BINDIR = //p' "$build/Makefile")
    libdir=$(sed -n 's/^PSEL_UCX_LIBDIR = //p' "$build/Makefile")
    bin=$bindir/ucx_perftest
    libs=$build/src/ucx_runtime/.libs
    [ -x "$bin" ] || { echo "$me: no $bin (./dev.sh ucx X.Y.Z, or apt-get install ucx-utils)" >&2; exit 1; }
    if [ -z "$mode" ]; then
        [ -f "$libs/libucs_protosel.so.0" ] && mode=plugin || mode=preload
    fi
    case $mode in
    plugin)
        [ -f "$libs/libucs_protosel.so.0" ] ||
            { echo "$me: no $libs/libucs_protosel.so.0: $build is not built against a UCX with plugins (>= 1.22); use -m preload" >&2; exit 1; }
        psel_env=(UCX_PLUGIN_PATH="$libs") ;;
    preload)
        [ -f "$libs/libprotosel_ucx.so" ] || { echo "$me: no $libs/libprotosel_ucx.so (make -C $build)" >&2; exit 1; }
        psel_env=(LD_PRELOAD="$libs/libprotosel_ucx.so") ;;
    *)  echo "$me: -m $mode: plugin or preload" >&2; exit 2 ;;
    esac
    export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# ucx_time TEST SIZE FILE: the time per message [us] of a ucx_perftest run:
# a *_lat test's average latency, size / bandwidth of the others
ucx_time() {
    final_line "$3" | awk -v t="$1" -v s="$2" \
        '{ print (t ~ /_lat$/) ? $3 : s / ($5 * 1048576) * 1e6 }'
}

median() {  # numbers on stdin
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

human() {  # SIZE
    if [ "$1" -ge 1048576 ] && [ $(( $1 % 1048576 )) = 0 ]; then echo "$(( $1 / 1048576 )) MiB"
    elif [ "$1" -ge 1024 ] && [ $(( $1 % 1024 )) = 0 ]; then echo "$(( $1 / 1024 )) KiB"
    else echo "$1 B"; fi
}

# check_sweep_options SIZE...: the options every sweep takes ($runs,
# $max_size when the script has one, the sizes, $transports, $tests);
# a bad one stops the script with its name ($me), exit 2.
check_sweep_options() {
    local v
    case $runs in ''|*[!0-9]*|0) echo "$me: --runs must be >= 1" >&2; exit 2 ;; esac
    if [ -n "${max_size+set}" ]; then
        case $max_size in ''|*[!0-9]*|0) echo "$me: --max-size must be >= 1" >&2; exit 2 ;; esac
    fi
    for v in "$@"; do
        case $v in ''|*[!0-9]*|0) echo "$me: bad size '$v' (bytes, >= 1)" >&2; exit 2 ;; esac
    done
    for v in $transports; do
        case $v in shm|tcp) ;; *) echo "$me: unknown transport '$v' (shm, tcp)" >&2; exit 2 ;; esac
    done
    for v in $tests; do
        case $v in tag_lat|tag_bw) ;; *) echo "$me: unknown test '$v' (tag_lat, tag_bw)" >&2; exit 2 ;; esac
    done
}

# --------------------------------------------------------------------------
# Setups

# psel_resolve_bin: a libtool wrapper script costs 0.1 s a start, so run the
# real binary with the library path the wrapper would set (psel_bin,
# psel_ldpath).
psel_ldpath=""
psel_resolve_bin() {
    if [ -x "$(dirname "$psel_bin")/.libs/$(basename "$psel_bin")" ] &&
       grep -q 'libtool' "$psel_bin" 2>/dev/null; then
        psel_ldpath=$(sed -n 's/^ *LD_LIBRARY_PATH="\(.*\):\$LD_LIBRARY_PATH"$/\1/p' "$psel_bin" | head -1)
        [ -n "$psel_ldpath" ] && psel_bin=$(dirname "$psel_bin")/.libs/$(basename "$psel_bin")
    fi
    return 0
}

# Each tool gets exactly the environment the functions below give it.
clear_ucx_env() {
    local v
    for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
}

# The transport setups, the same for both tools.

tr_env() {  # TOOL TRANSPORT -> VAR=VAL lines
    case $1/$2 in
    psel/shm) printf '%s\n' UCX_PSEL_TLS=posix,sysv,cma ;;
    psel/tcp) printf '%s\n' UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo ;;
    ucx/shm)  printf '%s\n' UCX_TLS=posix,sysv,cma ;;
    ucx/tcp)  printf '%s\n' UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
    esac
    if [ "$1" = ucx ]; then printf '%s\n' UCX_PROTO_ENABLE=y UCX_WARN_UNUSED_ENV_VARS=n; return 0; fi
    [ -n "$psel_ldpath" ] && echo "LD_LIBRARY_PATH=$psel_ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    [ ${#psel_env_extra[@]} -eq 0 ] || printf '%s\n' "${psel_env_extra[@]}"
}

# UCX's settings: name, the protocol (class) it aims at, knobs (ucx_info -c).
# Rendezvous settings aim at "rndv": UCX_RNDV_SCHEME is a wish, what runs is
# read from the tables (see ucx_proto_chain).
ucx_cfgs="short bcopy zcopy rndv-get rndv-put rndv-am"
# Any other NAME is an extra configuration: ucx_extra_env["TRANSPORT NAME"].
declare -A ucx_extra_env
ucx_cfg_env() {  # NAME [TRANSPORT] -> VAR=VAL lines
    case $1 in
    auto)     ;;
    short)    printf '%s\n' UCX_RNDV_THRESH=inf UCX_BCOPY_THRESH=inf UCX_ZCOPY_THRESH=inf ;;
    bcopy)    printf '%s\n' UCX_RNDV_THRESH=inf UCX_BCOPY_THRESH=0 UCX_ZCOPY_THRESH=inf ;;
    zcopy)    printf '%s\n' UCX_RNDV_THRESH=inf UCX_ZCOPY_THRESH=0 ;;
    rndv-get) printf '%s\n' UCX_RNDV_THRESH=0 UCX_RNDV_SCHEME=get_zcopy ;;
    rndv-put) printf '%s\n' UCX_RNDV_THRESH=0 UCX_RNDV_SCHEME=put_zcopy ;;
    rndv-am)  printf '%s\n' UCX_RNDV_THRESH=0 UCX_RNDV_SCHEME=am ;;
    *)        printf '%s\n' "${ucx_extra_env["${2:-} $1"]:-}" | sed '/^$/d' ;;
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
# setting name. Discovery runs pass ITERS. Both kinds print the selection
# tables, once at endpoint creation (UCX_PSEL_PROTO_INFO=y on protosel's
# client, UCX_PROTO_INFO=y on both of UCX's sides): see psel_proto().
run_cfg() {
    local tool=$1 tr=$2 cfg=$3 test=$4 size=$5 file=$6 n=${7:-} w=${8:-} bin
    local senv=() cenv=() args=() tmo=60
    [ -n "$n" ] && tmo=30
    if [ -z "$n" ]; then
        n=$(iters "$tr" "$test" "$size")
        w=$((n / 10)); [ $w -gt 1000 ] && w=1000; [ $w -lt 1 ] && w=1
    fi
    mapfile -t senv < <(tr_env "$tool" "$tr")
    if [ "$tool" = psel ]; then
        bin=$psel_bin
        [ "$cfg" != auto ] && senv+=("UCX_PSEL_PROTOS=$cfg")
        cenv=("${senv[@]}")
        cenv+=(UCX_PSEL_PROTO_INFO=y)
        [ "$size" -ge "${psel_args_min:-0}" ] &&
            args=(${psel_args_extra[@]+"${psel_args_extra[@]}"})
    else
        bin=$ucx_bin
        mapfile -t -O ${#senv[@]} senv < <(ucx_cfg_env "$cfg" "$tr")
        senv+=(UCX_PROTO_INFO=y)
        cenv=("${senv[@]}")
    fi
    pt_run_pair "$bin" "$file" "$tmo" senv cenv -t "$test" -s "$size" -n "$n" -w "$w" -f \
        ${args[@]+"${args[@]}"}
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
# rendezvous description is an estimate of the remote side. One exception
# for tag_bw: ucp_tag_send_nbx first tries its inline egr/short, bounded by
# the one-message table (ucp_proto_select_short_init, op_attr_mask 0), and
# only a send the transport refuses goes through the "(multi)" table. So a
# size that the one-message table sends by egr/short runs egr/short. The
# receiver then picks from "rendezvous data fetch()": a read from remote is rndv/get; any
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
            sub(/^multi-frag /, "", n)   # UCX 1.16 on
            if (n == "eager short") return "egr/short"
            if (n == "eager copy-in copy-out") return "egr/bcopy"
            if (n == "eager zero-copy copy-out") return "egr/zcopy"
            if (n ~ /^rendezvous/) return "rndv"
            if (n ~ /read from remote/) return "rndv/get"
            if (n ~ /write to remote/) return "rndv/put"
            if (n ~ /fragmented copy-in copy-out/ || n == "zero-copy") return "rndv/am"
            if (n == "no data fetch") return "none"
            gsub(/ /, "_", n); return n
        }
        function look(t, s,   i) {
            for (i = 1; i <= nr[t]; i++)
                if (s + 0 >= lo[t, i] && s + 0 <= hi[t, i]) return v[t, i]
            return ""
        }
        # a title: UCX 1.13 writes "op() ", later releases "op "; 1.22 puts
        # it on a line of its own, after the endpoint
        /tagged message by ucp_tag_send|rendezvous data (fetch|send)/ {
            cur = ""
            if ($0 ~ /ucp_tag_send\*(\(\))? from/) cur = "single"
            else if ($0 ~ /ucp_tag_send\*\(multi\) from/) cur = "multi"
            else if ($0 ~ /rendezvous data fetch(\(\))? into/) cur = "fetch"
            else if ($0 ~ /rendezvous data send(\(\))? from/) cur = "send"
            if (cur != "") nr[cur] = 0
            next
        }
        cur != "" && NF >= 5 && $2 ~ /^ *[0-9]+[KMG]?(\.\.[0-9a-zKMG]+)? *$/ {
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
                r = look("single", s)
                if (test == "tag_bw" && ("multi" in nr) && r !~ /^egr\/short/)
                    r = look("multi", s)
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
# psel_info_args=(...): extra psel_info options (--ucp: the table stock UCP
# gets under libprotosel_ucx.so)
psel_info_args=()
psel_info_facts() {  # TRANSPORT
    local penv=()
    mapfile -t penv < <(tr_env psel "$1")
    env "${penv[@]}" timeout -k 5 60 "$psel_info" -e -j "${psel_info_args[@]}" >"$out/disc/$1.psel_info.json" 2>"$out/disc/$1.psel_info.err" || return 1
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
# streamed sends (tag_bw) select on their own table: its boundaries too
for b in d.get("streamed", {}).get("boundaries", []):
    print("B", b["at"])
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
        echo "$me: psel_info -e -j failed for $tr: $(head -c 300 "$out/disc/$tr.psel_info.err")" >&2
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
        echo "$me: psel_perftest does not run on $tr: $(last_error "$f" "$f.server")" >&2
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
# discover_ucx TRANSPORT [EXTRA...]: EXTRA configurations (ucx_extra_env)
# are discovered like auto: they run, whatever their tables.
declare -A ucx_key ucx_file
discover_ucx() {  # TRANSPORT [EXTRA...]
    local tr=$1 cfg f key c seen
    shift
    for cfg in auto "$@" $ucx_cfgs; do
        f=$out/disc/$tr.ucx.$cfg
        if ! run_cfg ucx "$tr" "$cfg" tag_bw 1048576 "$f" 4 1; then
            ucx_note["$tr $cfg"]="does not run: $(last_error "$f" "$f.server")"
            continue
        fi
        ucx_file["$tr $cfg"]=$f
        key=$(ucx_tables_key "$f" "$f.server")
        seen=""
        case " $ucx_cfgs " in *" $cfg "*) ;; *) ucx_cov["$tr $cfg"]=1; continue ;; esac
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
# Plans: a plan is lines "tr test size tool cfg label"; the timing loop runs
# the configurations of each point in turn (A B C ... A B C ...), RUNS times.

# sweep_sizes "SIZES" MAX "BOUNDARIES": SIZES if given, else the powers of
# two up to MAX and both sides of every boundary up to MAX.
sweep_sizes() {
    local s b
    if [ -n "$1" ]; then
        printf '%s\n' $1 | sort -nu | tr '\n' ' '
        return 0
    fi
    { s=1; while [ "$s" -le "$2" ]; do echo $s; s=$((s * 2)); done
      for b in $3; do
          [ "$b" -ge 2 ] && [ "$b" -le "$2" ] && { echo $((b - 1)); echo "$b"; }
      done; } | sort -nu | tr '\n' ' '
}

# ucx_plan_point TR TEST SIZE PLAN DUPS [EXTRA...]: UCX's configurations at
# one point: auto, the EXTRA ones, and one forced setting per protocol (the
# rendezvous settings often run the same one whatever UCX_RNDV_SCHEME says;
# the others go to DUPS as "tr test size cfg protocol").
ucx_plan_point() {
    local tr=$1 test=$2 size=$3 plan=$4 dups=$5 cfg p ran=()
    shift 5
    for cfg in auto "$@"; do
        [ -n "${ucx_cov["$tr $cfg"]:-}" ] &&
            printf '%s\t%s\t%s\tucx\t%s\t%s\n' "$tr" "$test" "$size" "$cfg" "$cfg" >>"$plan"
    done
    for cfg in $ucx_cfgs; do
        p=$(ucx_forced "$tr" "$test" "$size" "$cfg") || continue
        if [ ${#ran[@]} -gt 0 ] && printf '%s\n' "${ran[@]}" | grep -qxF -- "$p"; then
            printf '%s\t%s\t%s\t%s\t%s\n' "$tr" "$test" "$size" "$cfg" "$p" >>"$dups"
            continue
        fi
        ran+=("$p")
        printf '%s\t%s\t%s\tucx\t%s\t%s\n' "$tr" "$test" "$size" "$cfg" "$cfg" >>"$plan"
    done
}

# ucx_map_sizes TR "SIZES" [EXTRA...]: after discover_ucx, which protocol
# each forced setting runs at each size and test (ucx_map, for ucx_forced).
ucx_map_sizes() {
    local tr=$1 sizes=$2 test cfg f size p
    for test in $tests; do
        for cfg in $ucx_cfgs; do
            [ -n "${ucx_cov["$tr $cfg"]:-}" ] || continue
            f=${ucx_file["$tr $cfg"]}
            while IFS=$'\t' read -r size p; do
                ucx_map["$tr $test $cfg $size"]=$p
            done < <(ucx_proto_chain_sizes "$test" "$sizes" "$f" "$f.server")
        done
    done
}

# run_plan PLAN RESULTS RUNS: time every point of PLAN, RUNS rounds, and
# write "tr test size tool label run p50 overall bw proto rate" lines
# (p50 and overall latency in usec, overall bandwidth in MB/s, overall
# message rate in msg/s; "- - - failed -" for a run that failed).
run_plan() {
    local plan=$1 results=$2 runs=$3 point=0 tstart=$SECONDS npoints pt tr test size
    local r c tool cfg label f p50 overall bw rate proto cfgs=() points=()
    : >"$results"
    mapfile -t points < <(cut -f1-3 "$plan" | awk '!seen[$0]++')
    npoints=${#points[@]}
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
                    read -r _ p50 _ overall _ bw _ rate <<<"$(final_line "$f")"
                    if [ "$tool" = psel ]; then proto=$(psel_proto "$f" "$test" "$size")
                    else proto=$(ucx_proto_chain "$test" "$size" "$f" "$f.server"); fi
                    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tr" "$test" "$size" \
                        "$tool" "$label" "$r" "$p50" "$overall" "$bw" "$proto" "$rate" >>"$results"
                else
                    echo "    $tool $label run $r failed: $(last_error "$f" "$f.server")" >&2
                    printf '%s\t%s\t%s\t%s\t%s\t%s\t-\t-\t-\tfailed\t-\n' "$tr" "$test" "$size" \
                        "$tool" "$label" "$r" >>"$results"
                fi
            done
        done
    done
}

# regret_summary RESULTS SUMMARY SPREAD [CANDIDATE...]: per point and tool,
# each CANDIDATE configuration (default: auto) against the best of the
# others (the forced ones). SUMMARY lines: "tr test size tool cand_t
# cand_proto best_t best_label best_proto regret same candidate
# cand_spread best_spread cause" (spreads: max/min of the runs; cause of a
# regret above 1.10: "noise" when the same protocol ran or the regret is
# within the spreads, "model" otherwise, "-" at or below 1.10); SPREAD:
# "tr test tool median-of-(max/min of a configuration's runs)".
# time: tag_lat p50 latency (us); tag_bw us per message from the overall
# bandwidth (MB/s of 2^20 B, as both tools print).
regret_summary() {
    local res=$1 sum=$2 spr=$3
    shift 3
    python3 - "$res" "$sum" "$spr" "${@:-auto}" <<'PYEOF'
import sys, statistics, collections
res, outp, spr = sys.argv[1], sys.argv[2], sys.argv[3]
cands = sys.argv[4:]
times = collections.defaultdict(list)
byrun = collections.defaultdict(dict)
protos = collections.defaultdict(collections.Counter)
for line in open(res):
    tr, test, size, tool, label, run, p50, overall, bw, proto = line.rstrip("\n").split("\t")[:10]
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
        forced = {k[4]: statistics.median(v) for k, v in times.items()
                  if k[:4] == p and k[4] not in cands}
        if not forced:
            continue
        bl = min(forced, key=forced.get)
        b = forced[bl]
        bp = protos[p + (bl,)].most_common(1)[0][0]
        for cand in cands:
            auto = times.get(p + (cand,))
            if not auto:
                continue
            a = statistics.median(auto)
            ap = protos[p + (cand,)].most_common(1)[0][0]
            # regret: the median over the rounds of auto / best, both from the
            # same round (run back to back, so a change of the machine's state
            # between rounds does not enter a ratio)
            ra, rb = byrun[p + (cand,)], byrun[p + (bl,)]
            pairs = [ra[r] / rb[r] for r in ra if r in rb and rb[r] > 0]
            reg = statistics.median(pairs) if pairs else a / b
            # did the candidate run the protocol of the fastest forced one?
            same = "yes" if ap.split(" ")[0] == bp.split(" ")[0] else "no"
            # run spread of each side: max / min of its runs' times
            sa = max(auto) / min(auto) if min(auto) > 0 else float("nan")
            sb = max(times[p + (bl,)]) / min(times[p + (bl,)]) \
                 if min(times[p + (bl,)]) > 0 else float("nan")
            # above 1.10: noise when the same protocol ran, or when the
            # regret is within the runs' spread; else the model chose wrong
            if reg <= 1.10:
                cause = "-"
            elif same == "yes" or reg <= max(sa, sb):
                cause = "noise"
            else:
                cause = "model"
            o.write("\t".join(map(str, (tr, test, size, tool, fmt(a), ap,
                                         fmt(b), bl, bp, "%.3f" % reg, same,
                                         cand, "%.2f" % sa, "%.2f" % sb,
                                         cause))) + "\n")
sp = collections.defaultdict(list)
for k, v in times.items():
    if len(v) > 1 and min(v) > 0:
        sp[(k[0], k[1], k[3])].append(max(v) / min(v))
with open(spr, "w") as o:
    for k, v in sp.items():
        o.write("\t".join(k) + "\t%.2f\n" % statistics.median(v))
PYEOF
}

# --------------------------------------------------------------------------
# Calibration

# bench_workdir: the working directory and process bookkeeping of a driver.
# Sets $out ($keep, or a temporary directory removed at exit) with out/disc,
# $pids (every process started, killed at exit), the interrupt message, and
# srv_pin / cli_pin (-c 0 / -c 1 when $pin = 1 and there are 2 CPUs).
bench_workdir() {
    if [ -n "$keep" ]; then
        mkdir -p "$keep" && out=$keep
    else
        out=$(mktemp -d "/tmp/$me.XXXXXX")
    fi
    out=$(cd "$out" && pwd)
    mkdir -p "$out/disc"
    pids=()
    trap bench_cleanup EXIT
    trap 'echo "$me: interrupted" >&2; exit 130' INT TERM
    srv_pin=() cli_pin=()
    if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ]; then
        srv_pin=(-c 0) cli_pin=(-c 1)
    fi
}

bench_cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$keep" ] || rm -rf "$out"
}

# psel_calibration FILE QUICK MAX-SIZE "TRANSPORTS" TIMEOUT [--ucp]: run
# psel_calibrate (next to psel_info) into FILE for the transports asked
# (shm, tcp or both), under TIMEOUT seconds; its output goes to FILE.log
# (FILE.ucp.log with --ucp: stock UCP's protocols, added to FILE).
# Returns 0 when it wrote lines, 2 when it refused every line (noise:
# nothing written), 1 when it failed.
psel_calibration() {
    local file=$1 quick=$2 max=$3 trs=$4 tmo=$5 ucp=${6:-} cal args=() rc log
    cal=$(dirname "$psel_info")/psel_calibrate
    [ -x "$cal" ] || { echo "$me: no $cal (run ./dev.sh build)" >&2; return 1; }
    [ "$quick" = 1 ] && args+=(--quick)
    [ -n "$ucp" ] && args+=(--ucp)
    log=$file${ucp:+.ucp}.log
    case $(echo $trs) in shm|tcp) args+=(-t "$(echo $trs)") ;; esac
    args+=(-m "$max" -o "$file")
    echo "$me: calibrating: psel_calibrate ${args[*]} (at most $tmo s)" >&2
    timeout -k 5 "$tmo" "$cal" "${args[@]}" >"$log" 2>&1 &
    pids+=("$!")
    wait "$!"; rc=$?
    if [ $rc = 1 ] && grep -q '^psel_calibrate: refused: ' "$log"; then
        echo "$me: psel_calibrate refused every line (noise), nothing written:" \
             "$(grep '^psel_calibrate: refused: ' "$log" | cut -c1-200); see $log" >&2
        return 2
    fi
    if [ $rc != 0 ] || [ ! -s "$file" ]; then
        echo "$me: psel_calibrate failed (exit $rc$([ $rc = 124 ] && echo ": timed out after $tmo s")):" \
             "$(grep -v '^#' "$log" | tail -n 3 | tr '\n' ' ' | cut -c1-300)" >&2
        echo "$me: see $log; or pass a calibration file with --calibration FILE" >&2
        return 1
    fi
    return 0
}
