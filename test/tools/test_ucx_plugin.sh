#!/usr/bin/env bash
# libucs_protosel.so.0, protosel as a UCS plugin, in the real programs of a
# UCX >= 1.22 (docs/runtime-library.md): loaded from UCX_PLUGIN_PATH by
# libucs's constructor, it redirects UCP's entry points; the protocol tier
# acts by default (test_ucx_runtime_info.sh compares its tables through the
# plugin), and the config tier's settings (UCX_PSEL_TIER=config) show in the
# tables UCP prints (UCX_PROTO_INFO=y) for ucx_info and for a ucx_perftest
# pair on shared memory and tcp over loopback; the same settings psel_info
# --ucx-env of that build computes in another process; a user's
# UCX_RNDV_THRESH wins; UCX_PSEL_ENABLE=n, another UCX version and programs
# without libucp get stock UCX; libucp opened RTLD_LOCAL (as Open MPI's
# pml) works.
#
# Runs in a build against a UCX >= 1.22 (./dev.sh ucx 1.22.0), the only
# builds that make the plugin (test/tools/ucx_runtime.inc). TAP output; no
# speed is asserted.
set -u
me=test_ucx_plugin
top=$(cd "$(dirname "$0")/../.." && pwd)

prefix=$(dirname "${PSEL_UCX_BINDIR:-/nonexistent/bin}")
ver=$("$prefix/bin/ucx_info" -v 2>/dev/null | sed -n 's/^# Library version: *//p')
case $ver in
    1.2[2-9].*|1.[3-9][0-9].*|[2-9].*) ;;
    *) echo "# $me: skipped: $prefix/bin/ucx_info reports UCX '${ver:-nothing}', not >= 1.22"; exit 77 ;;
esac
build=${PSEL_UCS_PLUGIN_BUILD:-$top/build}
plugin_dir=$build/src/ucx_runtime/.libs
if [ ! -f "$plugin_dir/libucs_protosel.so.0" ]; then
    echo "# $me: skipped: no $plugin_dir/libucs_protosel.so.0 (make -C $build)"
    exit 77
fi
command -v ss >/dev/null || { echo "# $me: skipped: no ss (apt-get install iproute2)"; exit 77; }

tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"   # check, expect, absent, perftest_pair
trap 'cleanup_pids; rm -rf "$tmp"' EXIT
tables="python3 $(dirname "$0")/ucx_tables.py"
export PATH=$prefix/bin:$PATH            # ucx_info, ucx_perftest of that UCX
info=$build/src/tools/psel_info
echo "# UCX $ver from $prefix, plugin from $plugin_dir"

# the config tier's checks name it; the protocol tier is the default. Each
# process times its own copies (UCX_PSEL_BCOPY_BW=auto), and two processes'
# figures differ by the timing noise: the settings compared across
# processes are computed on one set figure
plug=(UCX_PLUGIN_PATH="$plugin_dir" UCX_PSEL_CALIBRATION=none UCX_PSEL_TIER=config
      UCX_PSEL_BCOPY_BW=5800MBs)
declare -A tr_env=([shm]="UCX_TLS=posix,sysv,cma" [tcp]="UCX_TLS=tcp UCX_NET_DEVICES=lo")
declare -A psel_env=([shm]="UCX_PSEL_TLS=posix,sysv,cma" [tcp]="UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo")
plain='ucp_tag_send\* from host memory'

# rndv_start FILE [TITLE]: the first size of UCP's first rendezvous row
rndv_start() {
    $tables ucx-rows "$1" --title "${2:-$plain}" | awk '$3 ~ /^rndv/ { print $1; exit }'
}
# applied FILE NAME: the value protosel's config tier applied to UCX_NAME
applied() { sed -n "s/.*protosel:   UCX_$2=\([^ ]*\).*/\1/p" "$1" | head -n 1; }
# intra VALUE: the threshold of peers on this host in UCX_RNDV_THRESH's
# value (UCX 1.17 on: "intra:N,inter:M")
intra() { local v=${1#intra:}; echo "${v%%,*}"; }
# starts_at FILE TITLE THRESH: UCP's table TITLE of FILE starts rendezvous
# at THRESH's intra-node value (inf: has none)
starts_at() {
    local want got
    want=$(intra "$3"); got=$(rndv_start "$1" "$2")
    [ "$want" = inf ] && want=
    [ "$got" = "$want" ]
}

# by default the protocol tier acts through the plugin
check "shm: ucx_info -e -u t with the plugin, default tier" \
    env ${tr_env[shm]} UCX_PROTO_INFO=y UCX_PLUGIN_PATH="$plugin_dir" UCX_PSEL_CALIBRATION=none \
        UCX_PSEL_PROTO_INFO=y ucx_info -e -u t
expect "... the protocol tier acts" "protosel: protocol tier" "$tmp/all"
expect "... and prints protosel's table of UCP's endpoint" "protosel ep_cfg\\[0\\]" "$tmp/all"
absent "... without a warning" "UCX  *(WARN|ERROR) |protosel\\] warning" "$tmp/all"

# ucx_info -d runs the same with the plugin: it loads, finds no UCP call
# to act on, and changes nothing
check "ucx_info -d, stock" ucx_info -d
grep -v '^#.*[Mm]emory\|^\[' "$tmp/out" >"$tmp/d.stock"
check "ucx_info -d with UCX_PLUGIN_PATH" env "${plug[@]}" UCX_PSEL_PROTO_INFO=y ucx_info -d
grep -v '^#.*[Mm]emory\|^\[' "$tmp/out" >"$tmp/d.plug"
check "... lists the same devices and transports" cmp "$tmp/d.stock" "$tmp/d.plug"
absent "... without a warning" "WARN|ERROR|protosel\\] warning" "$tmp/all"

for tr in shm tcp; do
    # shellcheck disable=SC2206
    tenv=(${tr_env[$tr]} UCX_PROTO_INFO=y)
    check "$tr: stock ucx_info -e -u t" env "${tenv[@]}" ucx_info -e -u t
    cp "$tmp/all" "$tmp/$tr.stock"
    stock_rndv=$(rndv_start "$tmp/$tr.stock")
    check "... UCP's table is printed (rendezvous from ${stock_rndv:-?})" test -n "$stock_rndv"

    check "$tr: ucx_info -e -u t with the plugin" \
        env "${tenv[@]}" "${plug[@]}" UCX_PSEL_PROTO_INFO=y ucx_info -e -u t
    cp "$tmp/all" "$tmp/$tr.plug"
    expect "... protosel says it runs from the plugin in UCX $ver" \
        "protosel: libucs_protosel\\.so\\.0 \\(protosel [^)]*\\) in UCX $ver" "$tmp/$tr.plug"
    expect "... and that the config tier acts" "protosel: config tier" "$tmp/$tr.plug"
    absent "... without a warning" "UCX  *(WARN|ERROR) |protosel\\] warning" "$tmp/$tr.plug"
    thresh=$(applied "$tmp/$tr.plug" RNDV_THRESH)
    check "... it applies UCX_RNDV_THRESH (${thresh:-none})" test -n "$thresh"
    # shellcheck disable=SC2206
    penv=(${psel_env[$tr]} UCX_PSEL_CALIBRATION=none UCX_PSEL_BCOPY_BW=5800MBs)
    check "... psel_info --ucx-env of this build (${penv[*]})" env "${penv[@]}" "$info" --ucx-env
    cp "$tmp/out" "$tmp/$tr.env"
    check "... computes the same UCX_RNDV_THRESH in its own process" \
        grep -qx "UCX_RNDV_THRESH=$thresh" "$tmp/$tr.env"
    plug_rndv=$(rndv_start "$tmp/$tr.plug")
    check "... UCP's table starts rendezvous there (${plug_rndv:-none})" starts_at "$tmp/$tr.plug" "$plain" "$thresh"
    check "... which is not stock UCX's ($stock_rndv)" test "$plug_rndv" != "$stock_rndv"
    check "... and so does its multi-send table" \
        starts_at "$tmp/$tr.plug" 'ucp_tag_send\*\(multi\) from host memory' "$thresh"
done

# a user's setting wins, whatever protosel would choose
check "tcp: a user's UCX_RNDV_THRESH=16k with the plugin" \
    env ${tr_env[tcp]} UCX_PROTO_INFO=y "${plug[@]}" UCX_PSEL_PROTO_INFO=y \
    UCX_RNDV_THRESH=16k ucx_info -e -u t
cp "$tmp/all" "$tmp/user"
check "... UCP's table starts rendezvous at 16384" test "$(rndv_start "$tmp/user")" = 16384
absent "... protosel does not apply UCX_RNDV_THRESH" "protosel:   UCX_RNDV_THRESH=" "$tmp/user"
expect "... it applies the rest" "protosel:   UCX_RNDV_SCHEME=" "$tmp/user"

# UCX_PSEL_ENABLE=n: the plugin loads and does nothing
check "shm: UCX_PSEL_ENABLE=n with the plugin" \
    env ${tr_env[shm]} UCX_PROTO_INFO=y "${plug[@]}" UCX_PSEL_ENABLE=n UCX_PSEL_PROTO_INFO=y \
    ucx_info -e -u t
cp "$tmp/all" "$tmp/off"
absent "... protosel says nothing" "protosel" "$tmp/off"
$tables ucx-rows "$tmp/shm.stock" --title "$plain" >"$tmp/rows.stock"
$tables ucx-rows "$tmp/off" --title "$plain" >"$tmp/rows.off"
check "... UCP's table is stock" cmp "$tmp/rows.stock" "$tmp/rows.off"
check "... (and the stock table has rows)" test -s "$tmp/rows.stock"

# another UCX version (a preloaded ucp_get_version reports 1.99.0): one
# warning, nothing of protosel loaded, stock tables
fake=$build/test/tools/.libs/libfake_ucp_version.so
if [ -f "$fake" ]; then
    check "shm: the plugin in a UCX reporting 1.99.0" \
        env ${tr_env[shm]} UCX_PROTO_INFO=y "${plug[@]}" UCX_PSEL_PROTO_INFO=y \
        LD_PRELOAD="$fake" PSEL_FAKE_UCP_VERSION_IS=1.99.0 ucx_info -e -u t
    cp "$tmp/all" "$tmp/ver"
    expect "... warns that it was built for UCX $ver" \
        "libucs_protosel\\.so\\.0: UCX 1\\.99\\.0 is loaded, and it was built for UCX $ver" "$tmp/ver"
    check "... once" test "$(grep -c 'it was built for' "$tmp/ver")" -eq 1
    absent "... and does not act" "protosel: (config|protocol) tier" "$tmp/ver"
    $tables ucx-rows "$tmp/ver" --title "$plain" >"$tmp/rows.ver"
    check "... UCP's table is stock" cmp "$tmp/rows.stock" "$tmp/rows.ver"
else
    skip "the plugin in another UCX version" "no $fake (make -C $build check builds it)"
fi

# a program of libucs alone: libucp is not mapped when the plugin loads
check "ucx_read_profile (libucs only, no argument), stock" bash -c \
    'ucx_read_profile; echo "exit $?"'
cp "$tmp/all" "$tmp/prof.stock"
check "... with the plugin: the same output" bash -c \
    "env UCX_PLUGIN_PATH='$plugin_dir' UCX_PSEL_PROTO_INFO=y ucx_read_profile; echo \"exit \$?\""
check "... (compared)" cmp "$tmp/prof.stock" "$tmp/all"

# libucp opened RTLD_LOCAL, as Open MPI's pml ucx: libucs's constructor runs
# inside that dlopen(), libucp is mapped, the entry points are redirected
local_bin=$build/test/tools/ucp_local
if [ -x "$local_bin" ]; then
    check "libucp opened RTLD_LOCAL (ucp_local) with the plugin" \
        env LD_LIBRARY_PATH="$prefix/lib" ${tr_env[tcp]} "${plug[@]}" UCX_PSEL_PROTO_INFO=y "$local_bin"
    expect "... sends its messages" "^ok libucp RTLD_LOCAL" "$tmp/all"
    expect "... with the config tier acting" "protosel: config tier" "$tmp/all"
else
    skip "libucp opened RTLD_LOCAL" "no $local_bin (make -C $build check builds it)"
fi

# a stock ucx_perftest pair, both sides with the plugin
final() { awk 'NF == 8 && $1 ~ /^[0-9]+$/ { l = $0 } END { exit (l == "") }' "$1"; }
for tr in shm tcp; do
    thresh=$(applied "$tmp/$tr.plug" RNDV_THRESH)
    for test in tag_lat tag_bw; do
        d=$tmp/$tr-$test; mkdir -p "$d"
        # shellcheck disable=SC2206
        senv=(${tr_env[$tr]} UCX_PROTO_INFO=y "${plug[@]}" UCX_PSEL_PROTO_INFO=y)
        # shellcheck disable=SC2034  # perftest_pair reads it by name
        cenv=("${senv[@]}")
        check "$tr ucx_perftest $test, both sides with the plugin" \
            perftest_pair "$d" senv cenv -t "$test" -s 1048576 -n 50 -w 5 -f
        check "... prints its final line" final "$d/client"
        expect "... the config tier acts in the client" "protosel: config tier" "$d/client"
        expect "... and in the server" "protosel: config tier" "$d/server"
        absent "... without a warning" "UCX  *(WARN|ERROR) |protosel\\] warning" "$d/client"
        if [ "$test" = tag_lat ]; then title=$plain; else title='ucp_tag_send\*\(multi\) from host memory'; fi
        check "... UCP's table of the endpoint starts rendezvous at $(intra "$thresh")" \
            starts_at "$d/client" "$title" "$thresh"
    done
done

tap_done
