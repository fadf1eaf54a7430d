#!/usr/bin/env bash
# libprotosel_ucx.so and measured rails inside stock UCX: two hosts in
# network namespaces joined by two veth rails that advertise the same speed
# (netns_rails.sh; the second rail's tbf is set high enough not to matter:
# no speed is asserted). Each side has a hand-made calibration whose rails
# name no peer ('*'). Stock ucx_perftest, 4 MiB messages:
#  - stock UCP (protocols v2) splits rendezvous 50/50 over the two rails (attributes tie);
#  - with the library and rails of 3000 and 1000 MB/s, UCP's own table
#    splits 75/25 (UCP weighs its lanes by the measured bandwidth), and
#    with 100 and 3000 MB/s it drops the slow rail, whichever comes first;
#  - from UCX 1.16 the same for ucp_put_bw: UCP puts over one rail by
#    default; the library raises UCX_MAX_RMA_RAILS where UCP would keep one
#    rail of the measured ones (100/3000: the fast one, listed second), and
#    leaves it where two would split (3000/1000), where the user's
#    UCX_MAX_RMA_RAILS=2 gets the 75/25 split; a user's setting is kept;
#  - the veths' byte counters follow UCP's table (to 5 %). Not checked on
#    UCX 1.13, which may connect a lane of one rail to the peer's address
#    on the other (then every byte takes one veth, stock too).
# Skips (77, saying why) without root, network namespaces or the protocol
# tier. TAP output.
set -u
me=test_ucx_runtime_rails
tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"

need_lib
need_proto_tier
command -v ucx_perftest >/dev/null 2>&1 || { echo "# $me: skipped: no ucx_perftest"; exit 77; }

rails_id=$$
rails_rate=20gbit
. "$(dirname "$0")/netns_rails.sh"
trap 'cleanup_pids; rails_cleanup; rm -rf "$tmp"' EXIT
rails_setup || { echo "# $me: skipped: $rails_err"; exit 77; }
rails_wait_carrier || { result "carrier on both rails within 5 s" 1; tap_done; }

major=${ucx_built%%.*} minor=${ucx_built#*.}
minor=${minor%%.*}
rma_rails=$(( major > 1 || minor >= 16 ))   # UCX_MAX_RMA_RAILS exists
bytes_checked=$(( major > 1 || minor >= 16 ))

host=$(hostname | tr ' \t' '__')
mid=$(awk 'NR == 1 {print $1}' /etc/machine-id 2>/dev/null)
# calibration FILE MB1 MB2: rails of dev1 and dev2 for every peer
calibration() {
    cat >"$1" <<EOF
protosel-calibration 5
host $host ${mid:--}
ucx $ucx_built
created 2026-01-01T00:00:00Z
duration 1
mode quick
rail tcp/$dev1 * 20000 $(( $2 * 1048576 ))
rail tcp/$dev2 * 20000 $(( $3 * 1048576 ))
EOF
}

port=$((20000 + rails_id % 20000))
# protocols v2 in stock UCX 1.13 too (its default is v1; the library turns
# v2 on), to compare UCP's own tables
common=(UCX_TLS=tcp UCX_NET_DEVICES="$dev1,$dev2" UCX_PROTO_ENABLE=y
        UCX_PROTO_INFO=y UCX_WARN_UNUSED_ENV_VARS=n)
# pair NAME TEST ENV...: a stock ucx_perftest server in A and client in B,
# 4 MiB, with ENV on both; $tmp/NAME.{server,client}; sets share2: the %
# of the veths' bytes on dev2
pair() {
    local name=$1 test=$2 spid s b1 b2
    shift 2
    port=$((port + 1))
    b1=$(rails_bytes "$dev1") b2=$(rails_bytes "$dev2")
    in_a env "$@" "${common[@]}" \
        timeout -k 5 60 ucx_perftest -p "$port" >"$tmp/$name.server" 2>&1 &
    spid=$!; pids+=("$spid")
    wait_listen "$spid" "$port" in_a
    in_b env "$@" "${common[@]}" \
        timeout -k 5 60 ucx_perftest "$a1" -p "$port" -t "$test" -s 4194304 \
        -n 40 >"$tmp/$name.client" 2>&1
    s=$?
    wait "$spid" || s=1
    b1=$(( $(rails_bytes "$dev1") - b1 )) b2=$(( $(rails_bytes "$dev2") - b2 ))
    share2=$(( (b1 + b2) > 0 ? 100 * b2 / (b1 + b2) : -1 ))
    cat "$tmp/$name.client" "$tmp/$name.server" >"$tmp/all"
    result "$name: ucx_perftest $test 4 MiB completes ($dev2 carried $share2 % of $b1 + $b2 B)" \
        $s "$tmp/all"
}
# row NAME OP: UCP's row of OP's table (the sender's) at 4 MiB: the lanes
row() {
    awk -v op="$2" '
        index($0, op) { inside = 1; next }
        inside && /\| *[0-9]+\.\.inf *\|/ { print; exit }' "$tmp/$1.client"
}
# shares NAME OP REGEX: UCP's row matches REGEX
shares() {
    local r lanes
    r=$(row "$1" "$2")
    lanes=$(echo "$r" | awk -F'|' 'NF > 2 { gsub(/^ +| +$/, "", $(NF - 1)); print $(NF - 1) }')
    echo "$r" | grep -qE -- "$3"
    result "$1: UCP's table at 4 MiB (\"$2\"): ${lanes:-no row}" $? "$tmp/$1.client"
}
# bytes NAME LO HI: dev2's share of the bytes in [LO, HI] %
bytes() {
    if [ "$bytes_checked" = 0 ]; then
        echo "# $1: $dev2 carried $share2 %; not checked on UCX $ucx_built (its tcp lanes may reach the peer's address on the other rail)"
        return
    fi
    [ "$share2" -ge "$2" ] && [ "$share2" -le "$3" ]
    result "$1: $dev2 carried $share2 % of the bytes (expected $2..$3 %)" $?
}

calibration "$tmp/cal_31.txt" 3000 1000
calibration "$tmp/cal_slow1.txt" 100 3000
lib31=("${lib_env[@]}" UCX_PSEL_CALIBRATION="$tmp/cal_31.txt" UCX_PSEL_PROTO_INFO=y)
libslow1=("${lib_env[@]}" UCX_PSEL_CALIBRATION="$tmp/cal_slow1.txt" UCX_PSEL_PROTO_INFO=y)
tag="tagged message by ucp_tag_send"
both="50% on tcp/($dev1|$dev2) and 50% on tcp/($dev1|$dev2)"
split31="(75% on tcp/$dev1 and 25% on tcp/$dev2|25% on tcp/$dev2 and 75% on tcp/$dev1)"
only2="\| *tcp/$dev2 *\|\$"

echo "# hosts: $ns_a ($dev1 $a1, $dev2 $a2) <-> $ns_b ($dev1 $b1, $dev2 $b2), UCX $ucx_built, the library by $lib_how"

# tag send: rendezvous over both rails
pair stock-tag tag_bw
shares stock-tag "$tag" "$both"
bytes stock-tag 45 55
pair lib-tag-31 tag_bw "${lib31[@]}"
shares lib-tag-31 "$tag" "$split31"
bytes lib-tag-31 20 30
expect "lib-tag-31: the library says UCP weighs $dev2 by its measured rail" \
    "tcp/$dev2: UCP weighs this lane by the calibration's measured rail, 1000.0 MB/s" \
    "$tmp/lib-tag-31.client"
pair lib-tag-slow1 tag_bw "${libslow1[@]}"
shares lib-tag-slow1 "$tag" "$only2"
bytes lib-tag-slow1 95 100

# put: UCX_MAX_RMA_RAILS
if [ "$rma_rails" = 1 ]; then
    put="remote memory write by ucp_put"
    pair stock-put ucp_put_bw
    shares stock-put "$put" "\| *tcp/($dev1|$dev2) *\|\$"
    pair stock-put-2rails ucp_put_bw UCX_MAX_RMA_RAILS=2
    shares stock-put-2rails "$put" "$both"
    bytes stock-put-2rails 45 55
    pair lib-put-31 ucp_put_bw "${lib31[@]}"
    expect "lib-put-31: both rails within the ratio: UCP's one rail for put stays, saying how to split" \
        "UCX_MAX_RMA_RAILS, UCX_MAX_RNDV_RAILS: UCP's; 2 of the 2 measured rails .*UCX_MAX_RMA_RAILS=2" \
        "$tmp/lib-put-31.client"
    shares lib-put-31 "$put" "\| *tcp/($dev1|$dev2) *\|\$"
    pair lib-put-31-user2 ucp_put_bw "${lib31[@]}" UCX_MAX_RMA_RAILS=2
    shares lib-put-31-user2 "$put" "$split31"
    bytes lib-put-31-user2 20 30
    pair lib-put-slow1 ucp_put_bw "${libslow1[@]}"
    expect "lib-put-slow1: the library raises UCX_MAX_RMA_RAILS so that UCP keeps the fast rail" \
        "UCX_MAX_RMA_RAILS=2 .*UCP keeps tcp/$dev2 alone" "$tmp/lib-put-slow1.client"
    shares lib-put-slow1 "$put" "$only2"
    bytes lib-put-slow1 95 100
    pair lib-put-user1 ucp_put_bw "${libslow1[@]}" UCX_MAX_RMA_RAILS=1
    expect "lib-put-user1: the user's UCX_MAX_RMA_RAILS=1 is kept" \
        "UCX_MAX_RMA_RAILS: kept the user's" "$tmp/lib-put-user1.client"
    shares lib-put-user1 "$put" "\| *tcp/($dev1|$dev2) *\|\$"
else
    echo "# put over several rails: UCX $ucx_built has no UCX_MAX_RMA_RAILS (its put runs on one lane)"
fi
tap_done
