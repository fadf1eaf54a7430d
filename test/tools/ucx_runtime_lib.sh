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
#   wait_listen PID PORT [PREFIX...]  until server PID listens on PORT
#   perftest_pair DIR SENV CENV ARGS...  a stock ucx_perftest server and
#                        client (env arrays SENV, CENV) on a free port;
#                        DIR/server and DIR/client hold their output

lib=${PSEL_UCX_RUNTIME:-./src/ucx_runtime/.libs/libprotosel_ucx.so}
# How the library enters a stock UCX program: through UCX_PLUGIN_PATH where
# this build has the UCS plugin (UCX >= 1.22), else LD_PRELOAD
plugin_dir=${PSEL_UCS_PLUGIN_BUILD:+$PSEL_UCS_PLUGIN_BUILD/src/ucx_runtime/.libs}
if [ -n "$plugin_dir" ] && [ -f "$plugin_dir/libucs_protosel.so.0" ]; then
    lib_env=(UCX_PLUGIN_PATH="$plugin_dir")
    lib_how="the UCS plugin (UCX_PLUGIN_PATH)"
else
    lib_env=(LD_PRELOAD="$lib")
    lib_how=LD_PRELOAD
fi
# The UCX this build is for, as ucx_info -v and UCP's messages write it
ucx_built=${PSEL_UCX_VERSION:-$(pkg-config --modversion ucx 2>/dev/null)}
ucx_built_re=$(printf '%s' "$ucx_built" | sed 's/\./\\./g')
# same_host_thresh N: UCX_RNDV_THRESH for peers on this host as protosel
# writes it for this UCX: from 1.17 a value per kind of peer
same_host_thresh() {
    local major=${ucx_built%%.*} minor=${ucx_built#*.}
    minor=${minor%%.*}
    if [ "$major" -gt 1 ] || [ "$minor" -ge 17 ]; then
        echo "intra:$1,inter:auto"
    else
        echo "$1"
    fi
}
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
    ver=$(ucx_info -v | sed -n 's/^# \(Library version: \|Version \)//p')
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

# transports TRANSPORT...: those of shm and tcp that stock UCX itself can
# connect between two processes here; for the others, says why once.
# UCX 1.20.1 cannot over tcp/lo ("no route to" a garbled address: its
# loopback reachability check, fixed after 1.20 by openucx/ucx#11202)
transports() {
    local tr out
    for tr in "$@"; do
        if [ "$tr" = tcp ]; then
            out=$(stock_pair_error UCX_TLS=tcp UCX_NET_DEVICES=lo)
            if [ -n "$out" ]; then
                echo "# $me: skipped tcp: stock UCX $ucx_built itself cannot connect two processes over tcp/lo here ($out)" >&2
                continue
            fi
        fi
        echo "$tr"
    done
}

# stock_pair_error ENV...: empty if a stock ucx_perftest pair of 8 B
# completes with ENV, else UCX's first error line
stock_pair_error() {
    local dir senv cenv out
    dir=$(mktemp -d "$tmp/stock.XXXXXX")
    senv=("$@" UCX_WARN_UNUSED_ENV_VARS=n) cenv=("$@" UCX_WARN_UNUSED_ENV_VARS=n)
    if ! perftest_pair "$dir" senv cenv -t tag_lat -s 8 -n 10 >/dev/null 2>&1; then
        out=$(grep -h -m1 -o "UCX  ERROR .*" "$dir/client" "$dir/server" 2>/dev/null |
              head -n 1)
        echo "${out:-ucx_perftest failed}"
    fi
}

free_port() {
    local _i p
    for _i in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        [ -z "$(ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null)" ] && { echo "$p"; return 0; }
    done
    return 1
}

# wait_listen PID PORT [PREFIX...]: up to 10 s for server PID to listen on
# PORT, as `PREFIX... ss` sees it (a network namespace: in_a); returns at
# once if PID ends
wait_listen() {
    local pid=$1 port=$2 _i
    shift 2
    for _i in $(seq 1 250); do
        kill -0 "$pid" 2>/dev/null || return 1
        [ -n "$("$@" ss -Htln "sport = :$port" 2>/dev/null)" ] && return 0
        sleep 0.04
    done
    return 1
}

perftest_pair() { # perftest_pair DIR SENV CENV ARGS...
    local dir=$1 port spid cpid s
    local -n _se=$2 _ce=$3
    shift 3
    port=$(free_port) || return 1
    env "${_se[@]}" timeout -k 5 60 ucx_perftest -p "$port" >"$dir/server" 2>&1 &
    spid=$!; pids+=("$spid")
    wait_listen "$spid" "$port"
    env "${_ce[@]}" timeout -k 5 60 ucx_perftest 127.0.0.1 -p "$port" "$@" >"$dir/client" 2>&1 &
    cpid=$!; pids+=("$cpid")
    wait "$cpid"; s=$?
    wait "$spid" || s=1
    cat "$dir/client" "$dir/server" >"$tmp/all"
    return $s
}
