#!/usr/bin/env bash
# Multi-lane rendezvous between two hosts over tcp: two network namespaces
# joined by TWO veth pairs, each pair on its own /30 subnet (no route
# anywhere else). Each pair has the same device name in both namespaces, as
# the NICs of cluster hosts do (eth0, eth1). Checks:
#  - psel_info -c: UCX_PSEL_MAX_RNDV_LANES=2 (default), MAX_EAGER_LANES=1;
#  - psel_info -e in B against a snapshot saved in A (--remote-host): the
#    rma_bw and (with UCX_PSEL_MAX_EAGER_LANES=2) am_bw lane sets hold both
#    devices, shown as "tcp/D1 50% + tcp/D2 50%" for rndv/put and rndv/am;
#    rndv/get is not applicable (tcp has no get_zcopy), forced alone it
#    leaves tag send uncovered;
#  - cost lines count the summed bandwidth: rndv/put's per-byte cost with
#    two lanes is half of the one with UCX_PSEL_MAX_RNDV_LANES=1, and
#    rndv/am's drops by the same amount with two am_bw lanes;
#  - psel_perftest tag_bw of 4 MiB, server in A, client in B, each of
#    rndv/put and rndv/am forced on both sides (UCX_PSEL_PROTOS): the
#    protocol ran (UCX_PSEL_PROTO_INFO=used), the veths' byte counters
#    (/sys/class/net/DEV/statistics, rx+tx in A) moved at least
#    0.9 * iterations * size, and EACH veth carried at least 25% of it;
#    during the rndv/put run, ss in B sees a data connection on each subnet;
#  - with one veth pair left (the other deleted), the lane set is one lane
#    (psel_info -e and the client's UCX_PSEL_PROTO_INFO=y table name one
#    device, no shares) and that veth carries the payload.
#  - with B's names swapped (pm1 on subnet 2), so that a same-name pairing
#    would cross subnets: rndv/put still splits the bytes over both veths
#    (each >= 25%) and ss sees a data connection on each subnet. UCT tcp
#    1.13 calls every address reachable; the live reachability callback
#    also asks the kernel's route (src/core/route.c) and drops a pair whose
#    route to the peer's address leaves from another device (both sides'
#    debug logs name the dropped pairs). Without that,
#    each lane connected across, the kernel routed each connection by its
#    destination and both kept connections ran on one veth. (Unrelated
#    names, e.g. pva/pvb, paired straight or across depending on discovery
#    order.)
# Skips (exit 77, "SKIP: reason") where namespaces cannot be created.
# Everything is bounded by timeout; namespaces and veths are always removed.
# No speed is checked (figures are reported). TAP output.
set -u

skip() { echo "SKIP: $*"; exit 77; }

psel_info=${PSEL_INFO:-./src/tools/psel_info}
perftest=$(dirname "$psel_info")/psel_perftest
[ -x "$psel_info" ] || { echo "psel_info not found at '$psel_info'"; exit 1; }
[ -x "$perftest" ] || { echo "psel_perftest not found at '$perftest'"; exit 1; }

PATH=$PATH:/usr/sbin:/sbin # ip and ss live here; not in a user's PATH on Debian
command -v ip >/dev/null 2>&1 || skip "no 'ip' command (iproute2 not installed)"
command -v timeout >/dev/null 2>&1 || skip "no 'timeout' command"

# unique per run; interface names stay within IFNAMSIZ (15)
id=$$
ns_a=psel_ma_$id ns_b=psel_mb_$id
dev1=pm1_$id dev2=pm2_$id
net1=10.232.$((id % 250 + 1)) net2=10.233.$((id % 250 + 1))
a1=$net1.1 b1=$net1.2 a2=$net2.1 b2=$net2.2
tmp=$(mktemp -d)
pids=
made_a='' made_b=''

cleanup() {
    local pid
    for pid in $pids; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    # deleting a namespace removes the veth ends inside it
    [ -n "$made_a" ] && ip netns del "$ns_a" 2>/dev/null
    [ -n "$made_b" ] && ip netns del "$ns_b" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# --- the two hosts, two wires ----------------------------------------------
err=$(ip netns add "$ns_a" 2>&1) ||
    skip "cannot create a network namespace ($(id -un 2>/dev/null), uid $(id -u)): $err"
made_a=1
err=$(ip netns add "$ns_b" 2>&1) || skip "cannot create a second network namespace: $err"
made_b=1
for dev in "$dev1" "$dev2"; do
    # each end is created in its namespace, so both ends can share the name
    err=$(ip link add "$dev" netns "$ns_a" type veth peer name "$dev" \
              netns "$ns_b" 2>&1) ||
        skip "cannot create a veth pair between namespaces: $err"
done
setup() {
    ip -n "$ns_a" link set lo up &&
    ip -n "$ns_b" link set lo up &&
    ip -n "$ns_a" addr add "$a1/30" dev "$dev1" &&
    ip -n "$ns_b" addr add "$b1/30" dev "$dev1" &&
    ip -n "$ns_a" addr add "$a2/30" dev "$dev2" &&
    ip -n "$ns_b" addr add "$b2/30" dev "$dev2" &&
    ip -n "$ns_a" link set "$dev1" up && ip -n "$ns_b" link set "$dev1" up &&
    ip -n "$ns_a" link set "$dev2" up && ip -n "$ns_b" link set "$dev2" up
}
err=$(setup 2>&1) || skip "cannot configure the veth pairs: $err"

. "$(dirname "$0")/tap.sh"

# carrier DEV-IN-A DEV-IN-B: both ends of a pair have carrier
carrier() {
    ip -n "$ns_a" -br link show "$1" | grep -q "LOWER_UP" &&
        ip -n "$ns_b" -br link show "$2" | grep -q "LOWER_UP"
}
# wait_carrier DEV-IN-A DEV-IN-B: carrier on both ends, at most 5 s (a
# failed test point that says so otherwise)
wait_carrier() {
    wait_until "carrier on $1 ($ns_a) and $2 ($ns_b)" 5 carrier "$1" "$2" ||
        { result "carrier on $1 and $2 within 5 s" 1; return 1; }
}
wait_carrier "$dev1" "$dev1"
wait_carrier "$dev2" "$dev2"
echo "# hosts: $ns_a ($dev1 $a1, $dev2 $a2) <-> $ns_b ($dev1 $b1, $dev2 $b2)"

in_a() { ip netns exec "$ns_a" "$@"; }
in_b() { ip netns exec "$ns_b" "$@"; }

export UCX_PSEL_TLS=tcp

# --- psel_info: configuration, lane sets, cost lines -------------------------
in_b timeout 20 "$psel_info" -c >"$tmp/config" 2>&1 &&
    grep -qx "UCX_PSEL_MAX_RNDV_LANES=2" "$tmp/config" &&
    grep -qx "UCX_PSEL_MAX_EAGER_LANES=1" "$tmp/config"
result "psel_info -c: MAX_RNDV_LANES=2, MAX_EAGER_LANES=1 by default" $? "$tmp/config"

in_a timeout 20 "$psel_info" --save "$tmp/snap_a" >"$tmp/save" 2>&1 &&
    grep -q "$dev1" "$tmp/snap_a" && grep -q "$dev2" "$tmp/snap_a"
result "psel_info --save in $ns_a: a snapshot naming $dev1 and $dev2" $? "$tmp/save"

# info NAME ENV... (psel_info -e -x in B against A's snapshot), proto_lanes
. "$(dirname "$0")/netns_psel_info.sh"

# two_lanes FILE PROTO: PROTO's lanes are both devices, 50% each
two_lanes() {
    local lanes
    lanes=$(proto_lanes "$1" "$2")
    [ "$lanes" = "tcp/$dev1 50% + tcp/$dev2 50%" ] ||
        [ "$lanes" = "tcp/$dev2 50% + tcp/$dev1 50%" ]
}

# slope FILE PROTO: ns/B of PROTO's selected cost line in the explain output
slope() {
    awk -v p="$2" '$1 == "*" && $2 == p && $7 == "ns/B" { print $6; exit }' "$1"
}

info info_default && grep -q "(peer on another host)" "$tmp/info_default" &&
    two_lanes "$tmp/info_default" rndv/put
result "psel_info -e: rndv/put on 'tcp/$dev1 50% + tcp/$dev2 50%'" $? "$tmp/info_default"
[ "$(proto_lanes "$tmp/info_default" rndv/am)" = "tcp/$dev1" ] ||
    [ "$(proto_lanes "$tmp/info_default" rndv/am)" = "tcp/$dev2" ]
result "psel_info -e: rndv/am on one lane by default (MAX_EAGER_LANES=1)" $? "$tmp/info_default"
grep -q "^# rndv/get  *not applicable: .*no get_zcopy" "$tmp/info_default"
result "psel_info -e: rndv/get not applicable (tcp has no get_zcopy)" $? "$tmp/info_default"

! info info_get UCX_PSEL_PROTOS=rndv/get && grep -q "rndv/get (not applicable" "$tmp/info_get"
result "psel_info -e, PROTOS=rndv/get: no endpoint, rndv/get named not applicable" \
    $? "$tmp/info_get"

# one copy bandwidth for the four processes: each would time its own, and
# rndv/am's copy-out would differ between them by the noise of that timing
copy_bw=UCX_PSEL_BCOPY_BW=10000MBs
info info_put2 $copy_bw UCX_PSEL_PROTOS=rndv/put &&
    info info_put1 $copy_bw UCX_PSEL_PROTOS=rndv/put UCX_PSEL_MAX_RNDV_LANES=1 &&
    info info_am2 $copy_bw UCX_PSEL_PROTOS=rndv/am UCX_PSEL_MAX_EAGER_LANES=2 &&
    info info_am1 $copy_bw UCX_PSEL_PROTOS=rndv/am
result "psel_info -e -x with rndv/put and rndv/am forced, one and two lanes" $? \
    "$tmp/info_put2" "$tmp/info_put1" "$tmp/info_am2" "$tmp/info_am1"
two_lanes "$tmp/info_am2" rndv/am
result "psel_info -e, MAX_EAGER_LANES=2: rndv/am on 'tcp/$dev1 50% + tcp/$dev2 50%'" \
    $? "$tmp/info_am2"
[ "$(proto_lanes "$tmp/info_put1" rndv/put | grep -c %)" -eq 0 ] &&
    proto_lanes "$tmp/info_put1" rndv/put | grep -qE "^tcp/($dev1|$dev2)$"
result "psel_info -e, MAX_RNDV_LANES=1: rndv/put on one lane, no shares" $? "$tmp/info_put1"

put2=$(slope "$tmp/info_put2" rndv/put) put1=$(slope "$tmp/info_put1" rndv/put)
am2=$(slope "$tmp/info_am2" rndv/am) am1=$(slope "$tmp/info_am1" rndv/am)
echo "# per-byte cost (ns/B): rndv/put 1 lane $put1, 2 lanes $put2;" \
     "rndv/am 1 lane $am1, 2 lanes $am2"
# two equal lanes: the summed bandwidth halves the network's per-byte cost;
# rndv/am also pays the receiver's copy-out, which does not change
awk -v p1="$put1" -v p2="$put2" -v a1="$am1" -v a2="$am2" 'BEGIN {
        if (!(p1 > 0 && p2 > 0 && a1 > 0 && a2 > 0)) exit 1
        r = p2 / p1; d = (a1 - a2) - (p1 - p2)
        exit !(r > 0.49 && r < 0.51 && d < 0.02 * p1 && d > -0.02 * p1) }'
result "cost lines sum the lanes' bandwidth: rndv/put 2 lanes = 1/2 of 1 lane, rndv/am drops as much" \
    $? "$tmp/info_put2" "$tmp/info_put1"

# --- psel_perftest between the hosts, byte counters ---------------------------
port=14337 # a fresh namespace: every port is free; a new one per run
size=4194304

# bytes DEV: rx + tx bytes of DEV in A; 0 once DEV is gone
bytes() {
    in_a test -e "/sys/class/net/$1" || { echo 0; return; }
    echo $(($(in_a cat "/sys/class/net/$1/statistics/rx_bytes") +
            $(in_a cat "/sys/class/net/$1/statistics/tx_bytes")))
}

# watch_conns FILE: until the client (pid $cpid) ends, at most 20 s, record
# B's established connections with their tcp_info (ss -tni)
watch_conns() {
    for _ in $(seq 400); do
        kill -0 "$cpid" 2>/dev/null || break
        in_b ss -tniH state established 2>/dev/null >>"$1"
        sleep 0.05
    done
}

# conn_bytes FILE: "local peer bytes" per connection of watch_conns's FILE,
# bytes the most it had acked + received in any sample. ss prints an
# address line (Recv-Q Send-Q local peer), then a tab-indented tcp_info line.
conn_bytes() {
    awk '/^[0-9]/ { c = $3 " " $4; next }
         c != "" { b = 0
                   for (i = 1; i <= NF; ++i)
                       if ($i ~ /^bytes_(acked|received):/) {
                           split($i, f, ":"); b += f[2]
                       }
                   if (b > m[c]) m[c] = b; else m[c] += 0
                   c = "" }
         END { for (c in m) print c, m[c] }' "$1" | sort
}

# run FILE DESC ITERS SERVER-ENV CLIENT-ENV [watch]: tag_bw of $size bytes,
# the server in A and the client in B (connecting to $a1); both exit 0; the
# outputs go to $tmp/FILE.{server,client,conns}. Sets moved1, moved2: bytes
# over dev1, dev2 during the run.
run() {
    local name=$1 desc=$2 iters=$3 senv=$4 cenv=$5 watch=${6:-}
    local spid cstatus sstatus before1 before2
    port=$((port + 1))
    before1=$(bytes "$dev1") before2=$(bytes "$dev2")
    # shellcheck disable=SC2086
    in_a env $senv timeout 20 "$perftest" -p "$port" >"$tmp/$name.server" 2>&1 &
    spid=$!
    pids="$pids $spid"
    wait_server_ready "$tmp/$name.server" "$spid" 5 ||
        result "$desc: the server listens within 5 s" 1
    # shellcheck disable=SC2086
    in_b env $cenv timeout 20 "$perftest" "$a1" -p "$port" -t tag_bw \
        -s $size -n "$iters" -w 2 >"$tmp/$name.client" 2>&1 &
    cpid=$!
    pids="$pids $cpid"
    : >"$tmp/$name.conns"
    [ -n "$watch" ] && watch_conns "$tmp/$name.conns"
    wait "$cpid"
    cstatus=$?
    wait "$spid"
    sstatus=$?
    pids=${pids% "$cpid"}
    pids=${pids% "$spid"}
    moved1=$(($(bytes "$dev1") - before1)) moved2=$(($(bytes "$dev2") - before2))
    result "$desc: client exits 0" $cstatus "$tmp/$name.client"
    result "$desc: server exits 0" $sstatus "$tmp/$name.server"
    echo "# $desc: $dev1 moved $moved1 B, $dev2 moved $moved2 B;" \
         "$(awk '$1 == "Final:" { print $7 " MB/s" }' "$tmp/$name.client")"
}

# used_ok FILE PROTO ITERS: the UCX_PSEL_PROTO_INFO=used table counts at
# least ITERS messages of $size bytes, all sent by PROTO
used_ok() {
    awk -F'|' -v p="$2" -v size=$size -v iters="$3" '
        /protocols used \(UCX_PSEL_PROTO_INFO=used\)/ { table = 1; next }
        table && $2 ~ /egr\/|rndv\// {
            proto = $2; gsub(/ /, "", proto)
            split($4, r, /\.\./); gsub(/ /, "", r[1]); gsub(/ /, "", r[2])
            if (r[1] + 0 == size && r[2] + 0 == size) {
                if (proto != p) bad = 1
                count += $5
            }
        }
        END { exit !(table && !bad && count >= iters) }' "$1"
}

# split_ok ITERS MIN_SHARE: both wires moved at least 0.9 * ITERS * $size
# bytes, each at least MIN_SHARE percent of it
split_ok() {
    local total=$((moved1 + moved2))
    [ $((total * 10)) -ge $((9 * $1 * size)) ] &&
        [ $((moved1 * 100)) -ge $(($2 * total)) ] &&
        [ $((moved2 * 100)) -ge $(($2 * total)) ]
}

# conns_on_both FILE: on each subnet, a connection (not the control port)
# that moved at least 1 MiB (a data connection; a connection left unused by
# the two sides' simultaneous connects carries only its handshake)
conns_on_both() {
    conn_bytes "$1" | awk -v port="$port" -v n1="$net1." -v n2="$net2." '
        $3 >= 1048576 { split($1, l, ":"); split($2, p, ":")
          if (l[2] == port || p[2] == port) next
          if (index(l[1], n1) == 1 && index(p[1], n1) == 1) s1 = 1
          if (index(l[1], n2) == 1 && index(p[1], n2) == 1) s2 = 1 }
        END { exit !(s1 && s2) }'
}

iters=100 # 400 MiB: long enough for ss to see the connections
used=UCX_PSEL_PROTO_INFO=used

# each rendezvous protocol tcp runs, forced on both sides, on two lanes
for proto in put am; do
    penv="UCX_PSEL_PROTOS=rndv/$proto"
    [ $proto = am ] && penv="$penv UCX_PSEL_MAX_EAGER_LANES=2"
    desc="rndv/$proto 4 MiB, 2 lanes"
    run $proto "$desc" $iters "$penv" "$penv $used" watch
    used_ok "$tmp/$proto.client" rndv/$proto $iters
    result "$desc: >= $iters messages of $size B sent by rndv/$proto" $? "$tmp/$proto.client"
    split_ok $iters 25
    result "$desc: >= 0.9 x $iters x $size B moved, each veth >= 25% ($moved1 + $moved2)" $?
    conns_on_both "$tmp/$proto.conns"
    result "$desc: ss in $ns_b sees a data connection on each subnet" $? "$tmp/$proto.conns"
    conn_bytes "$tmp/$proto.conns" | awk '$3 >= 1048576 {
        print "#   data connection " $1 " <-> " $2 ": " $3 " B" }'
done

# --- device names that do not match the wiring ------------------------------
# swap the names of B's ends (addresses stay with the ends): a pairing by
# device name would now put each lane across subnets; the route check
# (the peer's address must be routed out of the local device) pairs each
# device with the peer's device on its own subnet
swap() {
    ip -n "$ns_b" link set "$dev1" down && ip -n "$ns_b" link set "$dev2" down &&
    ip -n "$ns_b" link set "$dev1" name "pmx_$id" &&
    ip -n "$ns_b" link set "$dev2" name "$dev1" &&
    ip -n "$ns_b" link set "pmx_$id" name "$dev2" &&
    ip -n "$ns_b" link set "$dev1" up && ip -n "$ns_b" link set "$dev2" up
}
swap
result "swap the names of $ns_b's ends: $dev2 on $net1.0/30, $dev1 on $net2.0/30" $?
wait_carrier "$dev1" "$dev2" && wait_carrier "$dev2" "$dev1"
penv="UCX_PSEL_PROTOS=rndv/put"
desc="rndv/put 4 MiB, 2 lanes, names swapped"
run swapped "$desc" $iters "$penv" "$penv $used" watch
used_ok "$tmp/swapped.client" rndv/put $iters
result "$desc: >= $iters messages of $size B sent by rndv/put" $? "$tmp/swapped.client"
total=$((moved1 + moved2))
[ $((total * 10)) -ge $((9 * iters * size)) ]
result "$desc: >= 0.9 x $iters x $size B moved ($moved1 + $moved2)" $?
split_ok $iters 25
result "$desc: each veth >= 25% ($moved1 + $moved2)" $?
conns_on_both "$tmp/swapped.conns"
result "$desc: ss in $ns_b sees a data connection on each subnet" $? "$tmp/swapped.conns"
conn_bytes "$tmp/swapped.conns" | sed 's/^\(.*\) \(.*\) \(.*\)$/#   seen: \1 <-> \2, moved \3 B/'

# why: both sides log (debug) the same-name pairs the route check dropped;
# B's dev1 now holds $b2, A's dev1 $a1 (and the other way round for dev2)
desc="rndv/put, names swapped, debug log"
dbg="$penv UCX_LOG_LEVEL=debug"
run swapped_dbg "$desc" 2 "$dbg" "$dbg"
pruned() { # pruned FILE DEV DEST SOURCE
    grep -qF "tcp/$2 -> peer tcp/$2 pruned: the kernel sends to $3 from $4, not from an address of $2" "$1"
}
pruned "$tmp/swapped_dbg.client" "$dev1" "$a1" "$b1" &&
    pruned "$tmp/swapped_dbg.client" "$dev2" "$a2" "$b2"
result "$desc: $ns_b dropped tcp/$dev1 -> $a1 (sent from $b1) and tcp/$dev2 -> $a2 (from $b2)" \
    $? "$tmp/swapped_dbg.client"
pruned "$tmp/swapped_dbg.server" "$dev1" "$b2" "$a2" &&
    pruned "$tmp/swapped_dbg.server" "$dev2" "$b1" "$a1"
result "$desc: $ns_a dropped tcp/$dev1 -> $b2 (sent from $a2) and tcp/$dev2 -> $b1 (from $a1)" \
    $? "$tmp/swapped_dbg.server"

# --- one wire: the lane set is one lane ------------------------------------------
# (B's end of the pair left, on $net1.0/30, is named $dev2 since the swap)
ip -n "$ns_a" link del "$dev2" # removes the pair, its end in B too
result "delete the second veth pair" $?
in_a timeout 20 "$psel_info" --save "$tmp/snap_a" >"$tmp/save" 2>&1 &&
    ! grep -q "$dev2" "$tmp/snap_a"
result "psel_info --save in $ns_a: a snapshot without $dev2" $? "$tmp/save"
info info_single UCX_PSEL_PROTOS=rndv/put &&
    [ "$(proto_lanes "$tmp/info_single" rndv/put)" = "tcp/$dev2" ]
result "one wire: psel_info -e shows rndv/put on one lane 'tcp/$dev2'" $? "$tmp/info_single"
slope1=$(slope "$tmp/info_single" rndv/put)
awk -v s="$slope1" -v p1="$put1" 'BEGIN { exit !(s > 0.99 * p1 && s < 1.01 * p1) }'
result "one wire: rndv/put's per-byte cost is the one-lane cost ($slope1 ns/B)" $? "$tmp/info_single"

# table_lanes FILE: every lane (transport/device) in the lanes column of the
# UCX_PSEL_PROTO_INFO=y tables, one a line
table_lanes() {
    awk -F'|' '/\[[a-z]+\/[a-z]+\] *\|/ { print $(NF - 1) }' "$1" |
        grep -oE '[a-z0-9_]+/[A-Za-z0-9_.:-]+|[0-9]+%'
}

penv="UCX_PSEL_PROTOS=rndv/put"
desc="rndv/put 4 MiB, one wire"
run single "$desc" 50 "$penv" "$penv UCX_PSEL_PROTO_INFO=y"
[ "$(table_lanes "$tmp/single.client" | sort -u)" = "tcp/$dev2" ]
result "$desc: the client's table names one lane, tcp/$dev2, no shares" $? "$tmp/single.client"
[ $((moved1 * 10)) -ge $((9 * 50 * size)) ]
result "$desc: $dev1 moved >= 0.9 x 50 x $size B ($moved1)" $?

tap_done
