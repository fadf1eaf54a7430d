#!/usr/bin/env bash
# libprotosel_ucx.so is harmless where it cannot or must not act: preloaded
# into programs that never call UCP it prints nothing, loads nothing and
# changes nothing; UCX_PSEL_ENABLE=n, a malformed calibration, a bad
# UCX_PSEL_* value and another UCX version each give stock UCP (with one
# warning where something is wrong); threads creating endpoints at the same
# time work. TAP output; no speed is asserted.
set -u
me=test_ucx_runtime_safe
tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"
trap 'cleanup_pids; rm -rf "$tmp"' EXIT
tables="python3 $(dirname "$0")/ucx_tables.py"
need_lib

# programs that never call UCP
check "preloaded into /bin/true" env LD_PRELOAD="$lib" UCX_PSEL_PROTO_INFO=y /bin/true
check "... prints nothing" test ! -s "$tmp/all"
fails "preloaded into /bin/false, the exit status stays" env LD_PRELOAD="$lib" /bin/false
check "preloaded into a shell pipeline" env LD_PRELOAD="$lib" UCX_PSEL_PROTO_INFO=y \
    UCX_PSEL_CALIBRATION=/no/such/file bash -c 'echo hello | tr a-z A-Z | cat'
check "... whose output is unchanged and alone" bash -c "[ \"\$(cat '$tmp/all')\" = HELLO ]"
check "preloaded into cat /proc/self/maps" env LD_PRELOAD="$lib" cat /proc/self/maps
cp "$tmp/all" "$tmp/maps"
expect "... the library is mapped" "libprotosel_ucx\\.so" "$tmp/maps"
absent "... but no UCX library nor protosel's own" "libuc[pst]|libprotosel_ucx_impl|libprotosel\\.so" "$tmp/maps"

# stock UCP, for comparison
stock_env=(UCX_TLS=posix,sysv,cma UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y)
check "stock ucx_info -e (no library)" env "${stock_env[@]}" ucx_info -e -u t
$tables ucx-rows "$tmp/all" >"$tmp/stock.rows"
is_stock() { # is_stock DESC FILE: FILE holds stock UCP's table
    $tables ucx-rows "$2" >"$tmp/rows" 2>&1
    check "$1" cmp "$tmp/stock.rows" "$tmp/rows"
}

check "UCX_PSEL_ENABLE=n" env LD_PRELOAD="$lib" UCX_PSEL_ENABLE=n UCX_PSEL_PROTO_INFO=y \
    "${stock_env[@]}" ucx_info -e -u t
cp "$tmp/all" "$tmp/disabled"
absent "... protosel says nothing" "protosel" "$tmp/disabled"
is_stock "... and UCP's table is stock" "$tmp/disabled"

if [ "$proto_tier" = yes ]; then
    check "with the library, the table is not stock (shm: protosel moves rendezvous)" \
        env LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION=none "${stock_env[@]}" ucx_info -e -u t
    $tables ucx-rows "$tmp/all" >"$tmp/rows"
    check "... (the comparison below can fail)" bash -c "! cmp -s '$tmp/stock.rows' '$tmp/rows'"
fi

# a malformed calibration: one warning that names file and line, stock UCP
host=$(hostname | tr ' \t' '__')
printf 'protosel-calibration 1\nhost %s -\nucx 1.13.1\nrange egr/short sysv/memory host inf 1000 zero 500 0\n' \
    "$host" >"$tmp/bad.txt"
check "a malformed calibration file" env LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION="$tmp/bad.txt" \
    UCX_PSEL_PROTO_INFO=y "${stock_env[@]}" ucx_info -e -u t
cp "$tmp/all" "$tmp/badcal"
expect "... is named with its line" "bad.txt:4: " "$tmp/badcal"
expect "... with a warning that UCX runs without protosel" \
    "UCX  WARN  protosel: .*UCX runs without protosel" "$tmp/badcal"
check "... once" test "$(grep -c 'UCX runs without protosel' "$tmp/badcal")" -eq 1
absent "... protosel does not act" "protosel: (protocol|config) tier" "$tmp/badcal"
is_stock "... and UCP's table is stock" "$tmp/badcal"

check "a bad UCX_PSEL_RNDV_PERF_DIFF" env LD_PRELOAD="$lib" UCX_PSEL_RNDV_PERF_DIFF=200 \
    "${stock_env[@]}" ucx_info -e -u t
cp "$tmp/all" "$tmp/badvar"
expect "... is named" "UCX_PSEL_RNDV_PERF_DIFF" "$tmp/badvar"
expect "... and UCX runs without protosel" "UCX runs without protosel" "$tmp/badvar"
is_stock "... with stock UCP's table" "$tmp/badvar"

# another UCX version: the protocol tier stays out, the config tier acts
fake=${PSEL_FAKE_UCP_VERSION:-}
if [ "$proto_tier" = yes ] && [ -f "$fake" ]; then
    check "UCP reporting version 1.99.0" env LD_PRELOAD="$fake:$lib" UCX_PSEL_CALIBRATION=none \
        UCX_PSEL_PROTO_INFO=y "${stock_env[@]}" ucx_info -e -u t
    cp "$tmp/all" "$tmp/version"
    expect "... one warning names both versions" \
        "UCX  WARN  protosel: the protocol tier cannot act: UCX 1.99.0 is loaded, and libprotosel_ucx.so was built for UCX 1\\.13\\.1" \
        "$tmp/version"
    check "... once" test "$(grep -c 'protocol tier cannot act' "$tmp/version")" -eq 1
    absent "... the protocol tier does not act" "protosel: protocol tier" "$tmp/version"
    expect "... the config tier does (public UCP API only)" "protosel: config tier" "$tmp/version"
fi

# threads creating endpoints and selecting protocols at the same time
threads=${PSEL_UCP_THREADS:-}
if [ -x "$threads" ]; then
    for tls in posix,sysv,cma tcp; do
        check "4 threads connecting to each other at once over $tls, with the library" \
            env LD_PRELOAD="$lib" UCX_TLS="$tls" UCX_PSEL_CALIBRATION=none \
                UCX_PSEL_PROTO_INFO=y "$threads" 4
        cp "$tmp/all" "$tmp/threads"
        expect "... every message arrives intact" "^ok 4 threads, 96 messages$" "$tmp/threads"
        absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/threads"
        expect "... and protosel acted" "protosel: (protocol|config) tier" "$tmp/threads"
    done
else
    echo "# $me: no ucp_threads program: thread test not run"
fi

tap_done
