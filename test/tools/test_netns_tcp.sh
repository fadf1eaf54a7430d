#!/usr/bin/env bash
# Two hosts over tcp: two network namespaces joined by a veth pair (private
# addresses on the veth only, no route anywhere else). psel_perftest serves
# in namespace A and runs the client in namespace B with UCX_PSEL_TLS=tcp;
# the lanes must be on the veth, never on lo, and the Final line must parse.
# psel_info -e in B against a snapshot saved in A (--remote-host) must agree.
# Skips (exit 77, "SKIP: reason") where namespaces cannot be created.
# Everything is bounded by timeout; namespaces and veth are always removed.
# A benchmark is not a test: no speed is checked. TAP output.
set -u

skip() { echo "SKIP: $*"; exit 77; }

psel_info=${PSEL_INFO:-./src/tools/psel_info}
perftest=$(dirname "$psel_info")/psel_perftest
[ -x "$psel_info" ] || { echo "psel_info not found at '$psel_info'"; exit 1; }
[ -x "$perftest" ] || { echo "psel_perftest not found at '$perftest'"; exit 1; }

PATH=$PATH:/usr/sbin:/sbin # ip lives here; not in a user's PATH on Debian
command -v ip >/dev/null 2>&1 || skip "no 'ip' command (iproute2 not installed)"
command -v timeout >/dev/null 2>&1 || skip "no 'timeout' command"

# unique per run; interface names stay within IFNAMSIZ (15)
id=$$
ns_a=psel_a_$id ns_b=psel_b_$id
veth_a=pva$id veth_b=pvb$id
net=10.231.$((id % 250 + 1))
addr_a=$net.1 addr_b=$net.2
tmp=$(mktemp -d)
pids=
made_a='' made_b=''

cleanup() {
    local pid
    for pid in $pids; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    # deleting a namespace removes the veth end inside it
    [ -n "$made_a" ] && ip netns del "$ns_a" 2>/dev/null
    [ -n "$made_b" ] && ip netns del "$ns_b" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# --- the two hosts ---------------------------------------------------------
err=$(ip netns add "$ns_a" 2>&1) ||
    skip "cannot create a network namespace ($(id -un 2>/dev/null), uid $(id -u)): $err"
made_a=1
err=$(ip netns add "$ns_b" 2>&1) || skip "cannot create a second network namespace: $err"
made_b=1
err=$(ip link add "$veth_a" netns "$ns_a" type veth \
          peer name "$veth_b" netns "$ns_b" 2>&1) ||
    skip "cannot create a veth pair between namespaces: $err"
setup() {
    ip -n "$ns_a" link set lo up &&
    ip -n "$ns_b" link set lo up &&
    ip -n "$ns_a" addr add "$addr_a/30" dev "$veth_a" &&
    ip -n "$ns_b" addr add "$addr_b/30" dev "$veth_b" &&
    ip -n "$ns_a" link set "$veth_a" up &&
    ip -n "$ns_b" link set "$veth_b" up
}
err=$(setup 2>&1) || skip "cannot configure the veth pair: $err"
. "$(dirname "$0")/tap.sh"

carrier() { # both ends of the pair have carrier
    ip -n "$ns_a" -br link show "$veth_a" | grep -q "LOWER_UP" &&
        ip -n "$ns_b" -br link show "$veth_b" | grep -q "LOWER_UP"
}
wait_until "carrier on $veth_a and $veth_b" 5 carrier ||
    result "carrier on both ends of the veth pair within 5 s" 1
echo "# hosts: $ns_a ($veth_a $addr_a) <-> $ns_b ($veth_b $addr_b)"

in_a() { ip netns exec "$ns_a" "$@"; }
in_b() { ip netns exec "$ns_b" "$@"; }

# --- psel_perftest between the hosts ---------------------------------------
port=13337 # a fresh namespace: every port is free; a new one per run
export UCX_PSEL_TLS=tcp

# pair DESCRIPTION "SERVER-ENV..." "CLIENT-ENV..." CLIENT-ARGS...: the server
# in A, the client in B connecting to A's veth address; both exit 0
pair() {
    local desc=$1 senv=$2 cenv=$3 spid cstatus sstatus
    shift 3
    port=$((port + 1))
    rm -f "$tmp/server" "$tmp/client"
    # shellcheck disable=SC2086
    in_a env $senv timeout 20 "$perftest" -p "$port" >"$tmp/server" 2>&1 &
    spid=$!
    pids="$pids $spid"
    wait_server_ready "$tmp/server" "$spid" 5 ||
        result "$desc: the server listens within 5 s" 1
    # shellcheck disable=SC2086
    in_b env $cenv timeout 20 "$perftest" "$addr_a" -p "$port" "$@" \
        >"$tmp/client" 2>&1
    cstatus=$?
    wait "$spid"
    sstatus=$?
    pids=${pids% "$spid"}
    result "$desc: client exits 0" $cstatus "$tmp/client"
    result "$desc: server exits 0" $sstatus "$tmp/server"
    grep -q "Accepted connection from $addr_b:" "$tmp/server"
    result "$desc: the control connection came over the veth" $? "$tmp/server"
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

# table_lanes FILE: every lane (transport/device) in the lanes column of the
# UCX_PSEL_PROTO_INFO=y tables, one a line
table_lanes() {
    awk -F'|' '/\[[a-z]+\/[a-z]+\] *\|/ { print $(NF - 1) }' "$1" |
        grep -oE '[a-z0-9_]+/[A-Za-z0-9_.:-]+'
}

# lanes_only FILE TL/DEV: the tables name lanes, all of them TL/DEV
lanes_only() {
    local lanes
    lanes=$(table_lanes "$1" | sort -u)
    [ "$lanes" = "$2" ]
}

# used_ok FILE SIZE ITERS: the UCX_PSEL_PROTO_INFO=used table counts at least
# ITERS messages of SIZE bytes, all by protocols tcp runs (eager, and the
# rendezvous ones tcp has: rndv/am and rndv/put; tcp has no get)
used_ok() {
    awk -F'|' -v size="$2" -v iters="$3" '
        /protocols used \(UCX_PSEL_PROTO_INFO=used\)/ { table = 1; next }
        table && $2 ~ /egr\/|rndv\// {
            proto = $2; gsub(/ /, "", proto)
            if (proto !~ /^(egr\/(short|bcopy|zcopy)|rndv\/(am|put))$/) bad = 1
            split($4, r, /\.\./); gsub(/ /, "", r[1]); gsub(/ /, "", r[2])
            if (r[1] + 0 == size && r[2] + 0 == size) count += $5
        }
        END { exit !(table && !bad && count >= iters) }' "$1"
}

lat_iters=1000 bw64_iters=200 bw1m_iters=50
for run in "tag_lat 8 B:-t tag_lat -s 8 -n $lat_iters -w 10:8:$lat_iters" \
           "tag_bw 64 KiB:-t tag_bw -s 65536 -n $bw64_iters -w 10:65536:$bw64_iters" \
           "tag_bw 1 MiB:-t tag_bw -s 1048576 -n $bw1m_iters -w 4:1048576:$bw1m_iters"; do
    IFS=: read -r desc args size iters <<<"$run"
    # shellcheck disable=SC2086
    pair "$desc over tcp" "UCX_PSEL_PROTO_INFO=y" "UCX_PSEL_PROTO_INFO=y" $args
    final_ok "$iters"
    result "$desc over tcp: Final line parses, numbers positive" $? "$tmp/client"
    lanes_only "$tmp/client" "tcp/$veth_b"
    result "$desc over tcp: the client's lanes are tcp/$veth_b only" $? "$tmp/client"
    lanes_only "$tmp/server" "tcp/$veth_a"
    result "$desc over tcp: the server's lanes are tcp/$veth_a only" $? "$tmp/server"

    # shellcheck disable=SC2086
    pair "$desc, PROTO_INFO=used" "" "UCX_PSEL_PROTO_INFO=used" $args
    final_ok "$iters"
    result "$desc, PROTO_INFO=used: Final line parses" $? "$tmp/client"
    used_ok "$tmp/client" "$size" "$iters"
    result "$desc, PROTO_INFO=used: >= $iters messages of $size B by tcp's protocols" \
        $? "$tmp/client"
done

# two eager lanes allowed, any bandwidth ratio: on one host tcp adds lo as
# a second lane; across hosts lo must not be chosen (it reaches only itself)
multi="UCX_PSEL_MAX_EAGER_LANES=2 UCX_PSEL_MULTI_LANE_MAX_RATIO=100"
pair "tag_bw 1 MiB, 2 eager lanes" "$multi UCX_PSEL_PROTO_INFO=y" \
    "$multi UCX_PSEL_PROTO_INFO=y" -t tag_bw -s 1048576 -n $bw1m_iters -w 4
final_ok $bw1m_iters
result "tag_bw 1 MiB, 2 eager lanes: Final line parses" $? "$tmp/client"
! table_lanes "$tmp/client" | grep -q "^tcp/lo$" &&
    lanes_only "$tmp/client" "tcp/$veth_b"
result "tag_bw 1 MiB, 2 eager lanes: tcp/lo not chosen across hosts" $? "$tmp/client"

# UCX_PSEL_NET_DEVICES naming the veth on each side
pair "tag_lat, NET_DEVICES=veth" "UCX_PSEL_NET_DEVICES=$veth_a" \
    "UCX_PSEL_NET_DEVICES=$veth_b UCX_PSEL_PROTO_INFO=y" \
    -t tag_lat -s 8 -n $lat_iters -w 10
final_ok $lat_iters
result "tag_lat, NET_DEVICES=veth: Final line parses" $? "$tmp/client"
lanes_only "$tmp/client" "tcp/$veth_b"
result "tag_lat, NET_DEVICES=veth: lanes tcp/$veth_b" $? "$tmp/client"

# --- psel_info: what-if across hosts from snapshots -------------------------
in_b timeout 20 "$psel_info" -d >"$tmp/info_d" 2>&1 &&
    grep -q "Device: $veth_b$" "$tmp/info_d"
result "psel_info -d in $ns_b: tcp has an iface on $veth_b" $? "$tmp/info_d"

in_a timeout 20 "$psel_info" --save "$tmp/snap_a" >"$tmp/save" 2>&1 &&
    head -1 "$tmp/snap_a" | grep -q "^protosel-snapshot" &&
    grep -q "$veth_a" "$tmp/snap_a"
result "psel_info --save in $ns_a: a snapshot naming $veth_a" $? "$tmp/save"

# info_lanes FILE: the lanes of psel_info -e's lane list and table, one a line
info_lanes() {
    {
        awk '/^# lane +transport\/device/ { lanes = 1; next }
             lanes && /^# *[0-9]+ +/ { print $3; next }
             lanes { lanes = 0 }' "$1"
        table_lanes "$1"
    } | grep .
}

# psel_info_e NAME ARGS...: psel_info -e in B against A's snapshot
psel_info_e() {
    local name=$1
    shift
    # shellcheck disable=SC2086
    in_b env $multi timeout 20 "$psel_info" -e --peer "$tmp/snap_a" "$@" \
        >"$tmp/$name" 2>&1
}
psel_info_e info_remote --remote-host
status=$?
[ $status -eq 0 ] && grep -q "(peer on another host)" "$tmp/info_remote" &&
    [ "$(info_lanes "$tmp/info_remote" | sort -u)" = "tcp/$veth_b" ]
result "psel_info -e in $ns_b --peer (snapshot of $ns_a) --remote-host: lanes on tcp/$veth_b only" \
    $? "$tmp/info_remote"

# the same what-if, both sides from snapshots
in_b timeout 20 "$psel_info" --save "$tmp/snap_b" >/dev/null 2>&1
# shellcheck disable=SC2086
env $multi timeout 20 "$psel_info" -e --local "$tmp/snap_b" \
    --peer "$tmp/snap_a" --remote-host >"$tmp/info_snaps" 2>&1 &&
    [ "$(info_lanes "$tmp/info_snaps" | sort -u)" = "tcp/$veth_b" ]
result "psel_info -e --local (snapshot of $ns_b) --peer (snapshot of $ns_a): lanes on tcp/$veth_b only" \
    $? "$tmp/info_snaps"

# the check above can fail: on the same host, lo is a second lane
if psel_info_e info_same --same-host &&
    info_lanes "$tmp/info_same" | grep -q "^tcp/lo$"; then
    echo "# with --same-host, tcp/lo is chosen as a lane, as expected"
else
    echo "# note: with --same-host tcp/lo was not chosen either; the lo checks are weaker"
fi

tap_done
