#!/usr/bin/env bash
# libprotosel_ucx.so is harmless where it cannot or must not act: preloaded
# into programs that never call UCP it prints nothing, loads nothing and
# changes nothing; UCX_PSEL_ENABLE=n, a malformed calibration, a bad
# UCX_PSEL_* value and another UCX version each give stock UCP (with one
# warning where something is wrong; another major.minor loads nothing of
# protosel, another release or build of libucp keeps the protocol tier
# out); UCP opened RTLD_LOCAL works; threads creating endpoints at the same
# time work. TAP output; a point this machine cannot check says why (SKIP);
# no speed is asserted.
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
rows() { # rows FILE OUT: UCP's table rows of FILE into OUT; fails if none
    $tables ucx-rows "$1" >"$2" 2>"$tmp/rows.err" && [ -s "$2" ]
}
check "stock ucx_info -e (no library)" env "${stock_env[@]}" ucx_info -e -u t
check "... prints UCP's table" rows "$tmp/all" "$tmp/stock.rows"
is_stock() { # is_stock DESC FILE: FILE holds stock UCP's table
    if rows "$2" "$tmp/rows"; then
        check "$1" cmp "$tmp/stock.rows" "$tmp/rows"
    else
        result "$1 (no UCP table in the output)" 1 "$2" "$tmp/rows.err"
    fi
}

check "UCX_PSEL_ENABLE=n" env LD_PRELOAD="$lib" UCX_PSEL_ENABLE=n UCX_PSEL_PROTO_INFO=y \
    "${stock_env[@]}" ucx_info -e -u t
cp "$tmp/all" "$tmp/disabled"
absent "... protosel says nothing" "protosel" "$tmp/disabled"
is_stock "... and UCP's table is stock" "$tmp/disabled"

if [ "$proto_tier" = yes ]; then
    check "with the library, the table is not stock (shm: protosel moves rendezvous)" \
        env LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION=none "${stock_env[@]}" ucx_info -e -u t
    check "... (UCP's table is printed)" rows "$tmp/all" "$tmp/rows"
    check "... (the comparison below can fail)" bash -c "! cmp -s '$tmp/stock.rows' '$tmp/rows'"
else
    skip "with the library, the table is not stock" "no protocol tier built (configure --with-ucx-src)"
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

# another UCX release (major.minor): nothing of protosel is loaded, one
# warning names both versions
fake=${PSEL_FAKE_UCP_VERSION:-}
if [ -f "$fake" ]; then
    check "UCP reporting version 1.99.0" env LD_PRELOAD="$fake:$lib" UCX_PSEL_CALIBRATION=none \
        UCX_PSEL_PROTO_INFO=y LD_DEBUG=files "${stock_env[@]}" ucx_info -e -u t
    grep -v '^ *[0-9]*:' "$tmp/all" >"$tmp/version"   # without the loader's lines
    expect "... one warning names both versions and what to do" \
        "^\\[protosel\\] warning: libprotosel_ucx.so: UCX 1\\.99\\.0 is loaded, and it was built for UCX $ucx_built_re .*rebuild protosel against this UCX" \
        "$tmp/version"
    check "... once" test "$(grep -c 'UCX 1.99.0 is loaded' "$tmp/version")" -eq 1
    absent "... the impl is never loaded" "file=.*libprotosel_ucx_impl" "$tmp/all"
    absent "... protosel does not act" "protosel: " "$tmp/version"
    is_stock "... and UCP's table is stock" "$tmp/version"
else
    skip "UCP reporting another version" "no $fake (make check builds it)"
fi

# proto_tier_refused FILE DESC REGEX: FILE shows one warning (REGEX after
# "the protocol tier cannot act: "), no protocol tier, the config tier
proto_tier_refused() {
    expect "... one warning names $2" "UCX  WARN  protosel: the protocol tier cannot act: $3" "$1"
    check "... once" test "$(grep -c 'protocol tier cannot act' "$1")" -eq 1
    absent "... the protocol tier does not act" "protosel: protocol tier" "$1"
    expect "... the config tier does (public UCP API only)" "protosel: config tier" "$1"
}

# another release of the same major.minor: the protocol tier (UCP's
# internal structures) stays out, the config tier (public API) acts
other=${ucx_built%.*}.99
if [ "$proto_tier" = yes ] && [ -f "$fake" ]; then
    check "UCP reporting version $other" env LD_PRELOAD="$fake:$lib" PSEL_FAKE_UCP_VERSION_IS="$other" \
        UCX_PSEL_CALIBRATION=none UCX_PSEL_PROTO_INFO=y "${stock_env[@]}" ucx_info -e -u t
    cp "$tmp/all" "$tmp/version"
    proto_tier_refused "$tmp/version" "both versions" \
        "UCX ${other//./\\.} is loaded, and libprotosel_ucx.so was built for UCX $ucx_built_re"
else
    skip "UCP reporting version $other" "no protocol tier built or no $fake"
fi

# a protocol the mapping does not know (a later release's name): it keeps
# UCP's lines and is reported once; the mapped ones still take protosel's
rename=${PSEL_FAKE_UCP_PROTO_NAME:-}
if [ "$proto_tier" = yes ] && [ -f "$rename" ]; then
    check "UCP's egr/single/bcopy renamed egr/single/bcopy.next" \
        env LD_PRELOAD="$rename:$lib" PSEL_FAKE_UCP_PROTO_RENAME=egr/single/bcopy=egr/single/bcopy.next \
            UCX_PSEL_CALIBRATION=none UCX_PSEL_PROTO_INFO=y "${stock_env[@]}" ucx_info -e -u t
    cp "$tmp/all" "$tmp/renamed"
    expect "... the mapping's name is missing" \
        "protosel: UCP has no protocol egr/single/bcopy of protosel's mapping" "$tmp/renamed"
    expect "... the new name keeps UCP's lines" \
        "protosel: UCP's protocol egr/single/bcopy.next serves tag_send and is not in protosel's mapping of UCX .*: it keeps UCP's lines" \
        "$tmp/renamed"
    check "... said once" test "$(grep -c "egr/single/bcopy.next serves" "$tmp/renamed")" -eq 1
    expect "... the protocol tier acts" "protosel: protocol tier" "$tmp/renamed"
    expect "... on the other protocols" "#   egr/multi/bcopy   protosel's egr/bcopy" "$tmp/renamed"
    absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/renamed"
    check "... and UCP prints its table" rows "$tmp/renamed" "$tmp/rows"
else
    skip "a protocol the mapping does not know" "no protocol tier built or no $rename"
fi

# another build's library (another UCX): one warning naming both versions
# and what to rebuild, nothing of protosel acts, stock UCP. The installed
# UCX's build (./dev.sh's build/) against a matrix build's UCX, both ways
other_build=${PSEL_TOP_SRCDIR:-.}/build
other_lib=$other_build/src/ucx_runtime/.libs/libprotosel_ucx.so
other_ucx=$(sed -n 's/^PSEL_UCX_VERSION = //p' "$other_build/Makefile" 2>/dev/null)
other_bin=$(sed -n 's/^PSEL_UCX_BINDIR = //p' "$other_build/Makefile" 2>/dev/null)
if [ -f "$other_lib" ] && [ -n "$other_ucx" ] && [ "$other_ucx" != "$ucx_built" ] &&
   [ -x "$other_bin/ucx_info" ]; then
    # the other UCX's programs find their own libraries (not this build's
    # LD_LIBRARY_PATH)
    for way in "$other_lib $ucx_built $other_ucx ucx_info" "$lib $other_ucx $ucx_built $other_bin/ucx_info"; do
        read -r l loaded built prog <<<"$way"
        check "UCX $loaded's ucx_info with the library built for UCX $built" \
            env $([ "$loaded" = "$ucx_built" ] || echo -u LD_LIBRARY_PATH) LD_PRELOAD="$l" \
                UCX_PSEL_CALIBRATION=none UCX_PSEL_PROTO_INFO=y "${stock_env[@]}" "$prog" -e -u t
        cp "$tmp/all" "$tmp/mixed"
        expect "... one warning names both versions and what to rebuild" \
            "warning: libprotosel_ucx.so: UCX ${loaded//./\\.} is loaded, and it was built for UCX ${built//./\\.} .*rebuild protosel against this UCX \(./dev.sh ucx ${loaded//./\\.}" \
            "$tmp/mixed"
        check "... once" test "$(grep -c 'is loaded, and it was built for' "$tmp/mixed")" -eq 1
        absent "... protosel does not act" "protosel: " "$tmp/mixed"
        check "... UCP prints its table" rows "$tmp/mixed" "$tmp/rows"
    done
else
    skip "a library of another UCX's build" "no build of protosel against another UCX in $other_build (./dev.sh builds it)"
fi

# the same version, another build of libucp (its GNU build id differs):
# the protocol tier stays out, the config tier acts
ucp_so=$(ldd "$(command -v ucx_info)" | awk '$1 == "libucp.so.0" { print $3 }')
if [ "$proto_tier" = yes ] && [ -f "$ucp_so" ]; then
    mkdir -p "$tmp/ucp"
    check "a copy of $ucp_so with another build id" python3 -c '
import re, subprocess, sys
src, dst = sys.argv[1:3]
out = subprocess.run(["readelf", "-n", src], capture_output=True, text=True).stdout
note = b"GNU\0" + bytes.fromhex(re.search(r"Build ID: ([0-9a-f]+)", out).group(1))
data = bytearray(open(src, "rb").read())
assert data.count(note) == 1, "the build id note is not unique"
i = data.find(note) + 4
data[i] ^= 0xff
open(dst, "wb").write(data)
' "$ucp_so" "$tmp/ucp/libucp.so.0"
    check "UCP of another build" env LD_LIBRARY_PATH="$tmp/ucp" LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION=none \
        UCX_PSEL_PROTO_INFO=y "${stock_env[@]}" ucx_info -e -u t
    cp "$tmp/all" "$tmp/build"
    proto_tier_refused "$tmp/build" "both libraries and build ids" \
        "the loaded $tmp/ucp/libucp.so.0 \\(build id [0-9a-f]+\\) is not the libucp libprotosel_ucx.so was built against \\(.*, build id [0-9a-f]+\\)"
else
    skip "UCP of another build" "no protocol tier built, or ucx_info's libucp not found"
fi

# UCP opened RTLD_LOCAL (as Open MPI's pml ucx component is): the impl
# resolves nothing from the global scope, so it loads and acts
local_prog=${PSEL_UCP_LOCAL:-}
if [ -x "$local_prog" ]; then
    check "libucp opened RTLD_LOCAL, with the library" env LD_PRELOAD="$lib" UCX_TLS=posix,sysv,cma \
        UCX_PSEL_CALIBRATION=none UCX_PSEL_PROTO_INFO=y "$local_prog"
    cp "$tmp/all" "$tmp/local"
    expect "... every message arrives intact" "^ok libucp RTLD_LOCAL, 3 messages$" "$tmp/local"
    absent "... without a warning" "warning|UCX  *(WARN|ERROR) " "$tmp/local"
    if [ "$proto_tier" = yes ]; then
        expect "... and the protocol tier acted" "protosel: protocol tier" "$tmp/local"
        expect "... on the endpoint UCP made" "protosel ep_cfg\\[0\\]" "$tmp/local"
    else
        expect "... and the config tier acted" "protosel: config tier" "$tmp/local"
    fi
else
    skip "libucp opened RTLD_LOCAL" "no ucp_local program (make check builds it)"
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
    skip "threads connecting at once" "no ucp_threads program (make check builds it)"
fi

tap_done
