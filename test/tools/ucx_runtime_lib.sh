# shellcheck shell=bash
# Shared by the test_ucx_runtime_*.sh scripts (sourced): TAP checks that
# keep each command's output, the library under test, a hand-made
# calibration of this host, and a stock ucx_perftest pair on loopback.
#
# The caller sets `me` and `tmp` (a fresh directory it removes at exit)
# and appends every process it starts to `pids` (killed at exit).
#
#   check DESC CMD...    the command must succeed (at most 60 s)
#   fails DESC CMD...    it must fail, not time out
#   expect DESC REGEX [FILE]   FILE (default: the last output) matches
#   absent DESC REGEX [FILE]   it does not
#   need_proto_tier      exit 77 with the reason if the protocol tier is
#                        not built
#   make_calibration FILE SETUP...  write a calibration of this host whose
#                        lines cover what psel_info -e -j selects from for
#                        each SETUP (UCX_PSEL_TLS values); flat lines far
#                        from the attribute ones, so thresholds move
#   perftest_pair DIR SENV CENV ARGS...  a stock ucx_perftest server and
#                        client (env arrays SENV, CENV) on a free port;
#                        DIR/server and DIR/client hold their output

lib=${PSEL_UCX_RUNTIME:-./src/ucx_runtime/.libs/libprotosel_ucx.so}
info=${PSEL_INFO:-./src/tools/psel_info}
proto_tier=${PSEL_PROTO_TIER:-unknown}
pids=()
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"   # result DESC STATUS FILE..., tap_done

run() { # a shell function runs as it is, a command under a time bound
    local s
    if declare -F "$1" >/dev/null; then "$@" >"$tmp/out" 2>"$tmp/err"
    else timeout -k 5 60 "$@" >"$tmp/out" 2>"$tmp/err"; fi
    s=$?; cat "$tmp/out" "$tmp/err" >"$tmp/all"; return $s
}
check() { local d=$1; shift; run "$@"; result "$d" $? "$tmp/all"; }
fails() { local d=$1 s; shift; run "$@"; s=$?; result "$d" $(( (s == 0) || (s == 124) )) "$tmp/all"; }
expect() { grep -qE -- "$2" "${3:-$tmp/all}"; result "$1" $? "${3:-$tmp/all}"; }
absent() { ! grep -qE -- "$2" "${3:-$tmp/all}"; result "$1" $? "${3:-$tmp/all}"; }

cleanup_pids() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
}

need_lib() {
    [ -f "$lib" ] || { echo "# $me: skipped: no $lib (build first)"; exit 77; }
}

need_proto_tier() {
    if [ "$proto_tier" != yes ]; then
        echo "# $me: skipped: libprotosel_ucx.so has no protocol tier (configure --with-ucx-src=DIR; ./dev.sh does it)"
        exit 77
    fi
}

make_calibration() { # make_calibration FILE SETUP...
    local file=$1 tls host mid ver
    shift
    host=$(hostname | tr ' \t' '__')
    mid=$(awk 'NR == 1 {print $1}' /etc/machine-id 2>/dev/null)
    ver=$(ucx_info -v | sed -n 's/^# Version //p')
    {
        printf 'protosel-calibration 1\nhost %s %s\nucx %s\n' "$host" "${mid:--}" "$ver"
        printf 'created 2026-01-01T00:00:00Z\nduration 1\nmode quick\n'
    } >"$file"
    for tls in "$@"; do
        UCX_PSEL_CALIBRATION=none UCX_PSEL_TLS=$tls timeout 60 "$info" -e -j --same-process |
            python3 -c '
import json, sys
# c [ns] and m [ns/KB] of each protocol: flat and far from the attributes
lines = {"egr/short": (600, 0), "egr/bcopy": (800, 300), "egr/zcopy": (3000, 150),
         "rndv/am": (9000, 60), "rndv/get": (9000, 40), "rndv/put": (9000, 40)}
for c in json.load(sys.stdin)["tables"][0]["candidates"]:
    if c["applies"] and c["protocol"] in lines:
        cc, m = lines[c["protocol"]]
        key = c["protocol"] + " " + c["lanes"].replace(" ", "") + " host"
        print("range %s inf %d %d %d %d" % (key, cc, m, cc, m))
        print("point %s 1024 %.1f %.1f" % (key, cc + m, cc + m))
' >>"$file" || return 1
    done
}

free_port() {
    local _i p
    for _i in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        [ -z "$(ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null)" ] && { echo "$p"; return 0; }
    done
    return 1
}

perftest_pair() { # perftest_pair DIR SENV CENV ARGS...
    local dir=$1 port spid cpid _i s
    local -n _se=$2 _ce=$3
    shift 3
    port=$(free_port) || return 1
    env "${_se[@]}" timeout -k 5 60 ucx_perftest -p "$port" >"$dir/server" 2>&1 &
    spid=$!; pids+=("$spid")
    for _i in $(seq 1 250); do
        kill -0 "$spid" 2>/dev/null || break
        [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && break
        sleep 0.04
    done
    env "${_ce[@]}" timeout -k 5 60 ucx_perftest 127.0.0.1 -p "$port" "$@" >"$dir/client" 2>&1 &
    cpid=$!; pids+=("$cpid")
    wait "$cpid"; s=$?
    wait "$spid" || s=1
    cat "$dir/client" "$dir/server" >"$tmp/all"
    return $s
}
