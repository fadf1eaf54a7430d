# shellcheck shell=bash disable=SC2154
# (srv_pin, cli_pin and pids are the caller's, see below)
# Shell functions shared by bench/vs_ucx_perftest.sh and bench/regret.sh:
# starting a psel_perftest / ucx_perftest server and client pair, parsing
# their output, small statistics. Sourced, never run.
#
# The caller defines:
#   pids=()              every process started is appended (the caller's EXIT
#                        trap kills them by pid)
#   srv_pin=() cli_pin=()  extra server / client arguments (-c CPU)

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
        wait "$cpid"
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

# Protocol protosel used: rows of the UCX_PSEL_PROTO_INFO=used table.
psel_proto() {  # FILE
    awk -F'|' '/protocols used/ { on = 1; next }
        on && NF >= 6 && $2 ~ /[a-z]+\/[a-z]+/ && $5 ~ /[0-9]/ {
            p = $2; gsub(/ /, "", p); r = r (r == "" ? "" : "+") p }
        END { print (r == "" ? "?" : r) }' "$1"
}

# Protocol UCX selected for SIZE: the row of the last "ucp_tag_send*()" table
# (tag_lat) or "ucp_tag_send*(multi)" table (tag_bw: ucx_perftest sends with
# UCP_OP_ATTR_FLAG_MULTI_SEND) that covers SIZE; "name transport/device".
ucx_proto() {  # FILE TEST SIZE
    awk -F'|' -v test="$2" -v size="$3" '
        function num(s,   m) {
            if (s == "inf") return 1e300
            m = 1
            if (s ~ /K$/) m = 1024; else if (s ~ /M$/) m = 1048576; else if (s ~ /G$/) m = 1073741824
            sub(/[KMG]$/, "", s); return s * m
        }
        function short(n) {
            gsub(/^ +| +$/, "", n); sub(/^\(\?\) */, "", n)
            if (n == "eager short") return "egr/short"
            if (n == "eager copy-in copy-out") return "egr/bcopy"
            if (n == "eager zero-copy copy-out") return "egr/zcopy"
            if (n == "rendezvous zero-copy read from remote") return "rndv/get"
            if (n == "rendezvous zero-copy write to remote") return "rndv/put"
            if (n == "rendezvous fragmented copy-in copy-out") return "rndv/am"
            gsub(/ /, "_", n); return n
        }
        /ep_cfg\[/ {
            cur = ""
            if ($0 ~ /ucp_tag_send\*\(\)/) cur = "single"
            else if ($0 ~ /ucp_tag_send\*\(multi\)/) cur = "multi"
            if (cur != "") { got[cur] = ""; fresh[cur] = 1 }
            next
        }
        cur != "" && NF >= 5 && $2 ~ /[0-9]+\.\.[0-9a-zKMG]+/ {
            rg = $2; gsub(/ /, "", rg); split(rg, b, /\.\./)
            if (size + 0 >= num(b[1]) && size + 0 <= num(b[2])) {
                tl = $4; gsub(/ /, "", tl)
                got[cur] = short($3) " " tl
            }
        }
        END {
            r = ""
            if (test == "tag_bw" && ("multi" in got)) r = got["multi"]
            else if ("single" in got) r = got["single"]
            print (r == "" ? "?" : r)
        }' "$1"
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
