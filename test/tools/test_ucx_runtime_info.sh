#!/usr/bin/env bash
# libprotosel_ucx.so in stock ucx_info: with UCX_PROTO_ENABLE=y and
# UCX_PROTO_INFO=y, the tag-send and active-message tables UCP prints under
# the library are protosel's for UCP (psel_info -e [-u m] --ucp
# --same-process), and its put table is stock UCP's, on shared memory
# (posix,sysv,cma) and tcp, with a calibration and with attributes only,
# compared at 64 log-spaced sizes and at every boundary (ucx_tables.py).
# Then the config tier (UCX_PSEL_TIER=config) and psel_info --ucx-conf.
# TAP output; no speed is asserted.
set -u
me=test_ucx_runtime_info
tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"
trap 'cleanup_pids; rm -rf "$tmp"' EXIT
tables="python3 $(dirname "$0")/ucx_tables.py"
regex_quote() { printf '%s' "$1" | sed 's/[]^$.*[\\]/\\&/g'; }
# Each process times its own memory copies (UCX_PSEL_BCOPY_BW=auto), and
# two processes' figures differ by the timing noise: the tables compared
# across processes here are computed on one set figure (what the timed
# figures do in UCP is checked below)
export UCX_PSEL_BCOPY_BW=5800MBs

need_lib
need_proto_tier
trs=$(transports shm tcp)

declare -A ucx_tls=([shm]=posix,sysv,cma [tcp]=tcp)
check "a calibration of this host for both setups" \
    make_calibration "$tmp/cal.txt" posix,sysv,cma tcp

# ucx_info under the library, and psel_info, for one setup and calibration
for tr in $trs; do
    for cal in none "$tmp/cal.txt"; do
        what="$tr, $([ "$cal" = none ] && echo "attributes only" || echo calibrated)"
        f=$tmp/$tr-$(basename "$cal")
        check "psel_info -e -j --ucp --same-process, $what" \
            env UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_TLS="${ucx_tls[$tr]}" "$info" -e -j --ucp --same-process
        cp "$tmp/out" "$f.json"
        check "ucx_info -e -u t under the library, $what" \
            env "${lib_env[@]}" UCX_PSEL_CALIBRATION="$cal" UCX_TLS="${ucx_tls[$tr]}" \
                UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y ucx_info -e -u t
        cp "$tmp/all" "$f.ucx"
        expect "... with the protocol tier acting" "protosel: protocol tier: " "$f.ucx"
        absent "... without a warning" "UCX  *(WARN|ERROR) " "$f.ucx"
        check "... UCP's table is protosel's" $tables compare "$f.json" "$f.ucx"
        cat "$tmp/out"
        check "... and so is protosel's own view over UCP's lanes" \
            $tables compare "$f.json" "$f.ucx" --protosel --title "protosel ep_cfg\\[[0-9]+\\] *\\|"
        # active messages: UCP's table is protosel's active-message table
        check "psel_info -e -j -u m --ucp --same-process, $what" \
            env UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_TLS="${ucx_tls[$tr]}" "$info" -e -j -u m --ucp --same-process
        cp "$tmp/out" "$f-am.json"
        check "ucx_info -e -u m under the library, $what" \
            env "${lib_env[@]}" UCX_PSEL_CALIBRATION="$cal" UCX_TLS="${ucx_tls[$tr]}" \
                UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y ucx_info -e -u m
        cp "$tmp/all" "$f-am.ucx"
        expect "... am/egr/short takes protosel's line" \
            "#   am/egr/short  *protosel's am/egr/short" "$f-am.ucx"
        absent "... without a warning" "UCX  *(WARN|ERROR) " "$f-am.ucx"
        check "... UCP's active-message table is protosel's" $tables compare \
            "$f-am.json" "$f-am.ucx" --rndv-any-lanes \
            --title "ucp_am_send\\*(\\(\\))? from host memory"
        cat "$tmp/out"
        # ucx_info has no remote key: UCP's put table is its emulation by
        # active messages with or without the library (from UCX 1.14 on
        # protosel's put/am/bcopy line, the only protocol; 1.13 keeps UCP's
        # lines), and there is no get table. test_ucx_runtime_perftest.sh
        # checks a put table with a key
        check "ucx_info -e -u rm under the library, $what" \
            env "${lib_env[@]}" UCX_PSEL_CALIBRATION="$cal" UCX_TLS="${ucx_tls[$tr]}" \
                UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_info -e -u rm
        $tables ucx-rows "$tmp/all" --title "ucp_put\\*(\\(\\))? from" >"$tmp/rows-lib" 2>&1
        check "... stock, without it" env UCX_TLS="${ucx_tls[$tr]}" \
            UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_info -e -u rm
        $tables ucx-rows "$tmp/all" --title "ucp_put\\*(\\(\\))? from" >"$tmp/rows-stock" 2>&1
        [ -s "$tmp/rows-stock" ] && cmp -s "$tmp/rows-lib" "$tmp/rows-stock"
        result "... UCP's put table (no remote key) is stock UCP's" $? "$tmp/rows-lib" "$tmp/rows-stock"
    done
    $tables psel-rows "$tmp/$tr-none.json" >"$tmp/$tr-attr.rows"
    $tables psel-rows "$tmp/$tr-cal.txt.json" >"$tmp/$tr-cal.rows"
    check "$tr: the calibration moves protosel's thresholds" \
        bash -c "! cmp -s '$tmp/$tr-attr.rows' '$tmp/$tr-cal.rows'"
    check "$tr: stock ucx_info, without the library" \
        env UCX_TLS="${ucx_tls[$tr]}" UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_info -e -u t
    cp "$tmp/all" "$tmp/$tr-stock.ucx"
    absent "... prints nothing of protosel" "protosel" "$tmp/$tr-stock.ucx"
    $tables ucx-rows "$tmp/$tr-stock.ucx" >"$tmp/$tr-stock.rows" 2>&1
    $tables ucx-rows "$tmp/$tr-none.ucx" >"$tmp/$tr-lib.rows" 2>&1
    $tables ucx-rows "$tmp/$tr-cal.txt.ucx" >"$tmp/$tr-libcal.rows" 2>&1
    echo "# $tr stock UCP:     $(awk '{printf "%s..%s %s; ", $1, $2, $3}' "$tmp/$tr-stock.rows")"
    echo "# $tr with protosel: $(awk '{printf "%s..%s %s; ", $1, $2, $3}' "$tmp/$tr-lib.rows")"
    # the hand-made calibration puts rendezvous far from where UCP's own
    # model does: the library is what changed UCP's table
    check "$tr: with the calibration, UCP's table is not stock" \
        bash -c "! cmp -s '$tmp/$tr-stock.rows' '$tmp/$tr-libcal.rows'"
done

# The library times this host's copies when UCX_PSEL_BCOPY_BW is auto (the
# default), faster here than UCT's figure (the 5800 MB/s set above): UCP's
# shared-memory table then copies further before rendezvous over cma. How
# far moves with the copy speed the process timed (16-36 GB/s on this VM)
rndv_start() { awk '$3 ~ /^rndv/ { print $1; exit }' "$1"; }
check "shm, timed copies: ucx_info -e -u t under the library" \
    env UCX_PSEL_BCOPY_BW=auto "${lib_env[@]}" UCX_PSEL_CALIBRATION=none UCX_TLS=posix,sysv,cma \
        UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y ucx_info -e -u t
$tables ucx-rows "$tmp/all" >"$tmp/shm-timed.rows" 2>&1
expect "... says its copies were timed" "memory copies at [0-9]* MB/s .timed on this host" "$tmp/all"
timed=$(rndv_start "$tmp/shm-timed.rows"); set_fig=$(rndv_start "$tmp/shm-lib.rows")
check "... its rendezvous starts later (${timed:-never}) than with the set figure (${set_fig:-never})" \
    bash -c "[ -n '$set_fig' ] && { [ -z '$timed' ] || [ '$timed' -gt '$set_fig' ]; }"

# config tier: UCX's knobs are global, so the library applies what
# psel_info --ucx-env prints for a peer on this host where it is also what
# it prints for a peer on another host (--remote-host), or where the
# transports reach no other host (shm); a value that differs stays UCP's,
# and UCX_PROTOS leaves out only what both leave out
protos_both() { # protos_both A B: the protocols both ^-lists leave out
    python3 -c '
import sys
a, b = (v[1:].split(",") if v.startswith("^") else [] for v in sys.argv[1:3])
both = [p for p in a if p in b]
print("^" + ",".join(both) if both else "all")' "$1" "$2"
}
for tr in $trs; do
    check "$tr: psel_info --ucx-env (a peer on this host)" \
        env UCX_PSEL_TLS="${ucx_tls[$tr]}" "$info" --ucx-env -q --same-host
    cp "$tmp/out" "$tmp/$tr.env"
    if env UCX_PSEL_TLS="${ucx_tls[$tr]}" "$info" --ucx-env -q --remote-host >"$tmp/$tr.net.env" 2>/dev/null; then
        echo "# $tr: the transports reach other hosts"
    else
        rm -f "$tmp/$tr.net.env"
        echo "# $tr: the transports reach no other host"
    fi
    check "$tr: ucx_info under the library, UCX_PSEL_TIER=config" \
        env "${lib_env[@]}" UCX_PSEL_TIER=config UCX_TLS="${ucx_tls[$tr]}" \
            UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y ucx_info -e -u t
    cp "$tmp/all" "$tmp/$tr-config.ucx"
    expect "... says it applies the config tier" "protosel: config tier" "$tmp/$tr-config.ucx"
    absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/$tr-config.ucx"
    expect "... and turns protocols v2 on" "protosel:   UCX_PROTO_ENABLE=y" "$tmp/$tr-config.ucx"
    thresh= net=
    for name in RNDV_THRESH ZCOPY_THRESH RNDV_SCHEME MAX_EAGER_RAILS MAX_RNDV_RAILS PROTOS; do
        host=$(sed -n "s/^UCX_$name=//p" "$tmp/$tr.env")
        if [ ! -f "$tmp/$tr.net.env" ]; then
            want=$host
        else
            net=$(sed -n "s/^UCX_$name=//p" "$tmp/$tr.net.env")
            if [ "$host" = "$net" ]; then want=$host
            elif [ "$name" = PROTOS ]; then want=$(protos_both "$host" "$net")
            elif [[ $host == intra:*,inter:* && $net == intra:*,inter:* ]]; then
                # UCX 1.17 on: a threshold per kind of peer
                want="${host%%,*},${net#*,}"
            else want=; fi
        fi
        if [ -n "$want" ] && [ "$want" != all ]; then
            expect "... applies UCX_$name=$want" \
                "protosel:   UCX_$name=$(regex_quote "$want")( |$)" "$tmp/$tr-config.ucx"
            # ucx_info's endpoint is to itself: an intra-node one
            [ "$name" = RNDV_THRESH ] && { thresh=${want#intra:}; thresh=${thresh%%,*}; }
        else
            absent "... leaves UCX_$name to UCP ($host on this host, ${net:-} over the network)" \
                "protosel:   UCX_$name=" "$tmp/$tr-config.ucx"
            [ "$name" = PROTOS ] || expect "... and says why" \
                "protosel:   # UCX_$name: $host for peers on this host, ${net:-UCP.s default} for peers over the network" \
                "$tmp/$tr-config.ucx"
        fi
    done
    expect "... but not UCX_TLS (it would cut off other peers)" \
        "protosel:   UCX_TLS: not set" "$tmp/$tr-config.ucx"
    if [ -n "$thresh" ] && [ "$thresh" != inf ]; then
        check "... and UCP's rendezvous starts at $thresh" bash -c \
            "$tables ucx-rows '$tmp/$tr-config.ucx' | awk '\$3 ~ /^rndv/ { print \$1; exit }' | grep -qx '$thresh'"
    fi
done

# a user's setting wins in both tiers
check "UCX_RNDV_THRESH=16k set by the user, protocol tier" \
    env "${lib_env[@]}" UCX_RNDV_THRESH=16k UCX_TLS=posix,sysv,cma UCX_PROTO_ENABLE=y \
        UCX_PROTO_INFO=y ucx_info -e -u t
check "... UCP's rendezvous starts at 16384" bash -c \
    "$tables ucx-rows '$tmp/all' | awk '\$3 ~ /^rndv/ { print \$1; exit }' | grep -qx 16384"
check "UCX_RNDV_THRESH=16k set by the user, config tier" \
    env "${lib_env[@]}" UCX_PSEL_TIER=config UCX_RNDV_THRESH=16k UCX_TLS=posix,sysv,cma \
        UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y ucx_info -e -u t
expect "... is kept" "protosel:   UCX_RNDV_THRESH: kept the user's UCX_RNDV_THRESH=16k"
check "... UCP's rendezvous starts at 16384" bash -c \
    "$tables ucx-rows '$tmp/all' | awk '\$3 ~ /^rndv/ { print \$1; exit }' | grep -qx 16384"

# psel_info --ucx-conf: the same settings as a ucx.conf UCX reads
mkdir -p "$tmp/conf"
check "psel_info --ucx-conf DIR" env UCX_PSEL_TLS=posix,sysv,cma "$info" --ucx-conf "$tmp/conf"
expect "... says where it wrote" "wrote [0-9]+ settings to $tmp/conf/ucx.conf"
check "... a file of UCX_NAME=VALUE lines and comments" \
    bash -c "! grep -vqE '^(#.*|UCX_[A-Z_]+=[^ ]+)\$' '$tmp/conf/ucx.conf'"
check "... equal to --ucx-env's" bash -c \
    "diff <(grep -v '^#' '$tmp/conf/ucx.conf') '$tmp/shm.env'"
check "... which UCX reads from UCX_CONFIG_DIR" env -i PATH="$PATH" UCX_CONFIG_DIR="$tmp/conf" ucx_info -c
while read -r line; do
    case $line in UCX_TLS=*|UCX_NET_DEVICES=*) continue ;; esac
    expect "... and shows $line" "^$(regex_quote "$line")$"
done < <(grep '^UCX_' "$tmp/conf/ucx.conf")
check "the library keeps a ucx.conf value as the user's" \
    env -i PATH="$PATH" UCX_CONFIG_DIR="$tmp/conf" "${lib_env[@]}" UCX_PSEL_TIER=config \
        UCX_PSEL_PROTO_INFO=y UCX_PSEL_CALIBRATION=none ucx_info -e -u t
rndv=$(sed -n 's/^UCX_RNDV_THRESH=//p' "$tmp/conf/ucx.conf")
[ "$rndv" = auto ] || expect "... (UCX_RNDV_THRESH=$rndv in a ucx.conf)" \
    "UCX_RNDV_THRESH: kept the user's UCX_RNDV_THRESH=$rndv in a ucx.conf"

# a ucx.conf that sets UCP's defaults is the user's choice too (UCX's own
# parser is asked, not the values compared): protocols v1 and UCP's own
# rendezvous threshold stay
mkdir -p "$tmp/conf1"
printf 'UCX_PROTO_ENABLE=n\nUCX_RNDV_THRESH=auto\n' >"$tmp/conf1/ucx.conf"
check "the library keeps a ucx.conf's UCX_PROTO_ENABLE=n and UCX_RNDV_THRESH=auto (UCP's defaults)" \
    env -i PATH="$PATH" UCX_TLS=posix,sysv,cma UCX_CONFIG_DIR="$tmp/conf1" "${lib_env[@]}" \
        UCX_PSEL_PROTO_INFO=y UCX_PSEL_CALIBRATION=none ucx_info -e -u t
expect "... UCX_PROTO_ENABLE" "UCX_PROTO_ENABLE: kept the user's UCX_PROTO_ENABLE=n in a ucx\\.conf"
expect "... so the config tier acts" "protosel: config tier \\(UCX_PROTO_ENABLE=n"
expect "... UCX_RNDV_THRESH" "UCX_RNDV_THRESH: kept the user's UCX_RNDV_THRESH=auto in a ucx\\.conf"
absent "... and neither is set by protosel" "protosel:   UCX_(PROTO_ENABLE|RNDV_THRESH)="

tap_done
