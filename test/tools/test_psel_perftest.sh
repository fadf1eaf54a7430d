#!/usr/bin/env bash
# Integration test of psel_perftest: a server and a client over loopback, on
# shared memory and on tcp, for tag_lat and tag_bw; the Final line must parse
# with positive numbers. Also checks that bad options and an absent or
# foreign peer end with exit status 1 and a message, within a time bound.
# A benchmark is not a test: no speed is checked. TAP output.
set -u
perftest=${PSEL_PERFTEST:-./src/tools/psel_perftest}
tmp=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
iters=2000

. "$(dirname "$0")/tap.sh"
TAP_FILES=("$tmp/server" "$tmp/client")

# start_server [ENV...]: start a server on a free port, set $port and
# $server_pid once it listens; retries other ports if bind fails. The
# server's extra options are in the array server_args.
server_args=()
start_server() {
    local try
    for try in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 40000))
        env "$@" timeout 90 "$perftest" -p "$port" "${server_args[@]}" \
            >"$tmp/server" 2>&1 &
        server_pid=$!
        wait_server_ready "$tmp/server" "$server_pid" 10 && return 0
        kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
        server_pid=
    done
    return 1
}

# wait_server: the server's exit status
wait_server() {
    wait "$server_pid"
    local status=$?
    server_pid=
    return $status
}

# final_ok ITERS: the Final line has ITERS and 7 positive numbers
final_ok() {
    awk -v iters="$1" '
        $1 == "Final:" {
            found = 1
            if (NF != 9 || $2 != iters) exit 1
            for (i = 3; i <= 9; ++i) if (!($i + 0 > 0)) exit 1
        }
        END { exit !found }' "$tmp/client"
}

# pair DESCRIPTION "ENV..." CLIENT-ARGS...: server and client over loopback
pair() {
    local desc=$1 envs=$2; shift 2
    rm -f "$tmp/client"
    # shellcheck disable=SC2086
    if ! start_server $envs; then
        echo "server did not start" >"$tmp/client"
        result "$desc: server starts" 1
        return 1
    fi
    # shellcheck disable=SC2086
    env $envs timeout 90 "$perftest" localhost -p "$port" "$@" \
        >"$tmp/client" 2>&1
    local cstatus=$?
    wait_server
    local sstatus=$?
    result "$desc: client exits 0" $cstatus
    result "$desc: server exits 0" $sstatus
}

for tls in posix,sysv,cma tcp; do
    envs="UCX_PSEL_TLS=$tls"
    pair "tag_lat 8 B over $tls" "$envs" -t tag_lat -s 8 -n $iters -w 100
    final_ok $iters
    result "tag_lat 8 B over $tls: Final line parses, numbers positive" $?
    grep -q "^|    Stage     | # iterations | 50.0%ile | average | overall |" \
        "$tmp/client"
    result "tag_lat over $tls: ucx_perftest's table header" $?
    grep -q "latency (usec)" "$tmp/client"
    result "tag_lat over $tls: the latency column" $?
    grep -q "^| Test:         tag match latency  " "$tmp/server"
    result "tag_lat over $tls: server prints the test box" $?

    pair "tag_bw 64 KiB over $tls" "$envs" -t tag_bw -s 65536 -n $iters -w 10
    final_ok $iters
    result "tag_bw 64 KiB over $tls: Final line parses, numbers positive" $?
    grep -q "overhead (usec)" "$tmp/client"
    result "tag_bw over $tls: the overhead column" $?
    grep -q "^| Message size: 65536  " "$tmp/server"
    result "tag_bw over $tls: the server learned the size from the client" $?

    pair "tag_bw 8 B -O 4 over $tls" "$envs" -t tag_bw -s 8 -O 4 -n $iters
    final_ok $iters
    result "tag_bw 8 B -O 4 over $tls: Final line parses" $?
done

# --ucp: the same loops over stock UCP on both sides (the server follows
# the client), with UCP's own transport settings
for tls in posix tcp; do
    envs="UCX_TLS=$tls"
    pair "--ucp tag_lat 8 B over $tls" "$envs" --ucp -t tag_lat -s 8 \
        -n $iters -w 100
    final_ok $iters
    result "--ucp tag_lat over $tls: Final line parses" $?
    grep -q "^| API:          UCP (stock, --ucp) " "$tmp/server"
    result "--ucp tag_lat over $tls: the server runs UCP's data path" $?
    pair "--ucp tag_bw 64 KiB over $tls" "$envs" --ucp -t tag_bw -s 65536 \
        -n $iters -w 10
    final_ok $iters
    result "--ucp tag_bw 64 KiB over $tls: Final line parses" $?
done

# --cold: the server rotates its buffers as the client asks (psel_calibrate's
# mode from 64 KiB)
pair "--cold tag_lat 128 KiB" "UCX_PSEL_TLS=posix,sysv,cma" --cold \
    -t tag_lat -s 131072 -n $iters -w 10
final_ok $iters
result "--cold tag_lat 128 KiB: Final line parses" $?
grep -q "^| Recv memory:  host, out of cache (--cold) " "$tmp/server"
result "--cold: the server's buffers are out of cache too" $?

# 0-byte messages: bandwidth is 0, iterations complete
pair "tag_lat 0 B" "" -t tag_lat -s 0 -n $iters -w 10
grep -q "^Final: *$iters " "$tmp/client"
result "tag_lat 0 B: Final line" $?

# -f: the header says Test, one unlabeled final line; -v: CSV
pair "tag_lat -f" "" -t tag_lat -n $iters -w 10 -f -R 99
grep -q "^|     Test     | # iterations | 99.0%ile |" "$tmp/client" &&
    [ "$(grep -c "^  *$iters  *[0-9]" "$tmp/client")" -eq 1 ] &&
    ! grep -q "Final:" "$tmp/client"
result "-f prints the Test header and only an unlabeled final line" $?

pair "tag_bw -v -f" "" -t tag_bw -n $iters -w 10 -v -f
awk -F, -v iters=$iters '
    NR == 1 { ok = ($0 == "iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr") }
    NR == 2 { ok = ok && NF == 8 && $1 == iters && $8 > 0 }
    END { exit !(ok && NR == 2) }' "$tmp/client"
result "-v -f prints the CSV header and one CSV line" $?

# bad options: exit 1 and a message naming the option
badopt() { # badopt PATTERN ARGS...
    local pattern=$1; shift
    timeout 10 "$perftest" localhost "$@" >"$tmp/client" 2>&1
    local status=$?
    [ $status -eq 1 ] && grep -q -- "$pattern" "$tmp/client"
    result "'$*' exits 1: $pattern" $?
}
badopt "option -x is not supported (UCT-only)" -t tag_lat -x tcp
badopt "option -d is not supported (UCT-only)" -t tag_lat -d mlx5_0:1
badopt "option -l is not supported (not implemented)" -t tag_lat -l
badopt "unknown test 'foo' for -t (accepted: tag_lat, tag_bw)" -t foo
badopt "test 'am_lat' of ucx_perftest is not supported" -t am_lat
badopt "invalid value 'abc' for -s (message size)" -t tag_lat -s abc
badopt "invalid value '0' for -n (iterations)" -t tag_lat -n 0
badopt "invalid value 'x' for -w" -t tag_lat -w x
badopt "invalid value '0' for -p (port)" -t tag_lat -p 0
badopt "invalid value '101' for -R" -t tag_lat -R 101
badopt "option -t needs a value" -t
badopt "unknown option -k" -t tag_lat -k
badopt "--bind is a server option" -t tag_lat --bind 127.0.0.1
timeout 10 "$perftest" --ucp -p 1 >"$tmp/server" 2>&1
[ $? -eq 1 ] && grep -q -- "--ucp is a client option" "$tmp/server"
result "'--ucp' on a server exits 1: a client option" $?
timeout 10 "$perftest" --cold -p 1 >"$tmp/server" 2>&1
[ $? -eq 1 ] && grep -q -- "--cold is a client option" "$tmp/server"
result "'--cold' on a server exits 1: a client option" $?

# bad settings are refused before any connection, on stderr, naming the
# cause; nothing on stdout (where ucx_perftest's table goes)
printf 'garbage\n' >"$tmp/bad.cal"
UCX_PSEL_CALIBRATION="$tmp/bad.cal" timeout 10 "$perftest" localhost \
    -p 1 -t tag_lat >"$tmp/client.out" 2>"$tmp/client"
st=$?
[ $st -eq 1 ] && [ ! -s "$tmp/client.out" ] &&
    grep -q "^psel_perftest: error: UCX_PSEL_CALIBRATION: $tmp/bad.cal is not a valid calibration file" "$tmp/client" &&
    grep -q "^psel_perftest: error: $tmp/bad.cal:1: expected 'protosel-calibration" "$tmp/client" &&
    ! grep -q "cannot connect\|UCX_PSEL_TLS and UCX_PSEL_NET_DEVICES" "$tmp/client"
result "a malformed UCX_PSEL_CALIBRATION on a client: exit 1, the file's error on stderr, nothing on stdout" $?
UCX_PSEL_NUM_EPS=0 timeout 10 "$perftest" -p 1 >"$tmp/server.out" 2>"$tmp/server"
st=$?
[ $st -eq 1 ] && [ ! -s "$tmp/server.out" ] &&
    grep -q "^psel_perftest: error: invalid value for UCX_PSEL_NUM_EPS" "$tmp/server" &&
    grep -q "^psel_perftest: fix the variable above" "$tmp/server"
result "a bad UCX_PSEL_NUM_EPS on a server: exit 1 before listening, naming the variable" $?
# a client without transports: the server names the client's cause
if start_server UCX_PSEL_TLS=tcp; then
    UCX_PSEL_TLS=nosuchtl timeout 60 "$perftest" localhost -p "$port" \
        -t tag_lat -n 10 >"$tmp/client" 2>&1
    wait_server
    grep -q "the client could not set up its side: cannot create the protosel context: No such device: UCX_PSEL_TLS=nosuchtl and UCX_PSEL_NET_DEVICES=all leave none of the" "$tmp/server"
    result "a client without transports: the server prints the client's cause" $?
else
    result "a client without transports: the server starts" 1
fi

# a server that cannot create its worker: the client prints the server's cause
if start_server UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=nonexistent0; then
    timeout 60 "$perftest" localhost -p "$port" -t tag_lat -n 10 \
        >"$tmp/client" 2>&1
    cstatus=$?
    wait_server
    [ $cstatus -eq 1 ] &&
        grep -q "the server could not set up its side: cannot create the protosel context: No such device: UCX_PSEL_TLS=tcp and UCX_PSEL_NET_DEVICES=nonexistent0 leave none of the [0-9]* resources of this machine: its transports are .*, its network devices .*lo" \
            "$tmp/client"
    result "a server without a worker: the client exits 1 naming the server's cause" $?
else
    result "a server without a worker: the server starts" 1
fi

# --bind: the server listens on that address only, and serves a client there
server_args=(--bind 127.0.0.1)
if start_server; then
    ss -Htln "sport = :$port" >"$tmp/listen" 2>&1
    timeout 60 "$perftest" 127.0.0.1 -p "$port" -t tag_lat -n 100 -w 10 \
        >"$tmp/client" 2>&1
    cstatus=$?
    wait_server
    sstatus=$?
    [ $cstatus -eq 0 ] && [ $sstatus -eq 0 ] &&
        grep -q "127.0.0.1:$port " "$tmp/listen" &&
        [ "$(wc -l <"$tmp/listen")" -eq 1 ]
    st=$? # (a $(...) in result's arguments would reset $?)
    result "--bind 127.0.0.1: the server listens there only ($(tr -s ' ' <"$tmp/listen")) and serves a client" $st
else
    result "--bind 127.0.0.1: the server starts" 1
fi
server_args=()
timeout 10 "$perftest" --bind 192.0.2.1 -p 1 >"$tmp/server" 2>&1
[ $? -eq 1 ] && grep -q "cannot listen on 192.0.2.1:1: bind() failed" "$tmp/server"
result "--bind to an address of another host: exit 1, says which address" $?
badopt "missing test name" -s 8
badopt "-O 4 applies to tag_bw only" -t tag_lat -O 4

# no server: the client fails at once (refused) or within its 30 s bound
port=$((20000 + RANDOM % 40000))
start=$SECONDS
timeout 45 "$perftest" localhost -t tag_lat -n 10 -p "$port" \
    >"$tmp/client" 2>&1
status=$?
[ $status -eq 1 ] && [ $((SECONDS - start)) -le 35 ] &&
    grep -q "cannot connect to localhost:$port" "$tmp/client"
result "a client without a server fails with a clear message" $?

# the server validates what the client sends: garbage, then a 0-iteration test
foreign_client() { # foreign_client HEX-BYTES: send them to the server
    start_server || { result "a psel_perftest server starts (5 tries)" 1;
                      return 1; }
    python3 - "$port" "$1" <<'PY' >"$tmp/client" 2>&1
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(bytes.fromhex(sys.argv[2]))
time.sleep(0.5)
print("reply:", s.recv(4096))
PY
    wait_server
}
foreign_client "$(printf '%080x' 0)"
[ $? -eq 1 ] && grep -q "rejected the client's test: not a psel_perftest client" \
    "$tmp/server"
result "the server rejects a foreign client and exits 1" $?

# magic PSPT, then little-endian: version 2, tag_lat, no flags, window 0,
# size 8, 0 iterations, 0 warm-up
foreign_client "50535054020000000000000000000000$(printf '08%014x' 0)$(printf '%032x' 0)"
[ $? -eq 1 ] && grep -q "rejected the client's test: iterations 0 out of range" \
    "$tmp/server"
result "the server rejects 0 iterations from the client" $?

# the UCP data path flag (4) in a calibration session's parameters (test 2)
foreign_client "50535054020002000400000000000000$(printf '08%014x' 0)$(printf '01%014x' 0)$(printf '%016x' 0)"
[ $? -eq 1 ] && grep -q "rejected the client's test: the UCP data path flag (--ucp) applies to tag_lat and tag_bw" \
    "$tmp/server"
result "the server rejects the UCP flag on a calibration session" $?

tap_done
