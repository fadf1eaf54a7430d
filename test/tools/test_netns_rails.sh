#!/usr/bin/env bash
# Unequal rails, measured (issue 13): two hosts in network namespaces joined
# by two veth rails, the second shaped with tc tbf (netns_rails.sh), which
# both advertise the same 10 Gb/s. Checks:
#  - psel_calibrate --quick in B against a psel_perftest server in A
#    measures each rail alone: two rail lines, the shaped one slower than
#    the other;
#  - psel_info -e in B against A's snapshot: without the calibration the
#    rendezvous splits 50/50 over both rails (attributes tie); with it
#      * UCX_PSEL_MULTI_LANE_MAX_RATIO large enough to keep both, the
#        shares are the measured bandwidths' (to 1%), not 50/50;
#      * the default ratio (4) drops the shaped rail when it measured below
#        a quarter of the other, and keeps it otherwise;
#      * the eager (am) lane is the faster rail;
#  - psel_perftest tag_bw of 1 MiB with the calibration: the veths' byte
#    counters follow the lanes psel_info showed (the shaped rail carries no
#    payload when it was dropped). Figures are printed, not checked.
# Skips (exit 77, "SKIP: reason") where namespaces or tc cannot be used.
# Everything is bounded by timeout; namespaces are always removed. TAP.
set -u

skip() { echo "SKIP: $*"; exit 77; }

psel_info=${PSEL_INFO:-./src/tools/psel_info}
tools=$(dirname "$psel_info")
perftest=$tools/psel_perftest
calibrate=$tools/psel_calibrate
for t in "$psel_info" "$perftest" "$calibrate"; do
    [ -x "$t" ] || { echo "$t not found"; exit 1; }
done
command -v timeout >/dev/null 2>&1 || skip "no 'timeout' command"

rails_id=$$
rails_rate=${PSEL_RAILS_RATE:-200mbit}
tmp=$(mktemp -d)
pids=
. "$(dirname "$0")/netns_rails.sh"
. "$(dirname "$0")/tap.sh"

cleanup() {
    local pid
    for pid in $pids; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    rails_cleanup
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

rails_setup || skip "$rails_err"
rails_wait_carrier || result "carrier on both rails within 5 s" 1
echo "# hosts: $ns_a ($dev1 $a1, $dev2 $a2 shaped to $rails_rate) <-> $ns_b ($dev1 $b1, $dev2 $b2)"
export UCX_PSEL_TLS=tcp

port=15337 # a fresh namespace: every port is free; a new one per server
# server LOG ENV...: a psel_perftest server in A on the next port
server() {
    local log=$1
    shift
    port=$((port + 1))
    in_a env "$@" timeout 90 "$perftest" -p "$port" >"$log" 2>&1 &
    spid=$!
    pids="$pids $spid"
    wait_server_ready "$log" "$spid" 5
}

# --- the calibration: each rail alone ------------------------------------------
cal=$tmp/cal_b.txt
server "$tmp/cal.server" UCX_PSEL_CALIBRATION=none ||
    result "a psel_perftest server starts in $ns_a" 1
start=$(date +%s)
in_b timeout 90 "$calibrate" --quick --max-size 256K -o "$cal" "$a1" -p "$port" \
    >"$tmp/cal.out" 2>&1
st=$?
wait "$spid" 2>/dev/null
echo "# psel_calibrate against $a1 took $(( $(date +%s) - start )) s:"
sed 's/^/#   /' "$tmp/cal.out"

rail() { # rail DEV FIELD: 3 latency [ns], 4 bandwidth [MB/s]
    awk -v d="tcp/$1" -v f="$2" '$1 == "rail" && $2 == d { print $f }' "$cal" 2>/dev/null
}
bw1=$(rail "$dev1" 4) bw2=$(rail "$dev2" 4)
# skipped DESCRIPTION REASON: a test point that could not run, and why
skipped() { result "$1 # SKIP $2" 0; }
if [ -z "$bw1" ] && grep -Eq "rails: (refused: other processes|not measured)" "$tmp/cal.out"; then
    why=$(grep -Em1 "rails: (refused|not measured)" "$tmp/cal.out" | sed 's/^# *//' | cut -c1-110)
    for what in "psel_calibrate measures each rail alone" \
                "selection follows the measured rails" \
                "the data path follows the measured rails"; do
        skipped "$what" "the machine is too busy: $why"
    done
    tap_done
    exit
fi
[ $st -eq 0 ] && [ -n "$bw1" ] && [ -n "$bw2" ]
result "psel_calibrate measures each rail alone: tcp/$dev1 $bw1 MB/s, tcp/$dev2 $bw2 MB/s (exit $st)" \
    $? "$tmp/cal.out" "$tmp/cal.server"
if [ -z "$bw1" ] || [ -z "$bw2" ]; then
    tap_done
    exit
fi
awk -v f="$bw1" -v s="$bw2" 'BEGIN { exit !(f > s) }'
result "the shaped rail measured slower than the other" $? "$cal"

# --- selection: shares and lanes follow what was measured ---------------------
in_a timeout 20 "$psel_info" --save "$tmp/snap_a" >"$tmp/save" 2>&1
result "psel_info --save in $ns_a" $? "$tmp/save"

# info NAME ENV...: psel_info -e -x in B against A's snapshot
info() {
    local name=$1
    shift
    in_b env "$@" timeout 20 "$psel_info" -e -x --peer "$tmp/snap_a" \
        --remote-host >"$tmp/$name" 2>&1
}
# proto_lanes FILE PROTO: the lanes column of PROTO's "# protocol" line
proto_lanes() {
    awk -v p="$2" '$1 == "#" && $2 == p && $3 == "sizes" {
                       $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' "$1"
}
# share FILE PROTO DEV: DEV's share in percent in PROTO's lanes
share() {
    proto_lanes "$1" "$2" | tr '+' '\n' |
        awk -v d="tcp/$3" '$1 == d { sub(/%/, "", $2); print $2 }'
}
# am_lane FILE: the lane with the am role in the lanes table
am_lane() {
    awk '$1 == "#" && $2 ~ /^[0-9]+$/ && $4 ~ /^am\(/ { print $3 }' "$1"
}

info attr UCX_PSEL_CALIBRATION=none UCX_PSEL_PROTOS=rndv/put
[ "$(share "$tmp/attr" rndv/put "$dev1")" = 50 ] &&
    [ "$(share "$tmp/attr" rndv/put "$dev2")" = 50 ]
st=$? # (a $(...) in result's arguments would reset $?)
result "attributes: rndv/put splits 50/50 ($(proto_lanes "$tmp/attr" rndv/put))" $st "$tmp/attr"

info both UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_PROTOS=rndv/put \
    UCX_PSEL_MULTI_LANE_MAX_RATIO=1000
s1=$(share "$tmp/both" rndv/put "$dev1") s2=$(share "$tmp/both" rndv/put "$dev2")
awk -v s1="$s1" -v s2="$s2" -v b1="$bw1" -v b2="$bw2" 'BEGIN {
        e1 = 100 * b1 / (b1 + b2); e2 = 100 * b2 / (b1 + b2)
        exit !(s1 != "" && s2 != "" && s1 - e1 < 1 && e1 - s1 < 1 &&
               s2 - e2 < 1 && e2 - s2 < 1) }'
result "measured, both rails kept: shares $s1% / $s2% follow the measured bandwidths" \
    $? "$tmp/both"

info cal UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_PROTOS=rndv/put
kept=$(awk -v f="$bw1" -v s="$bw2" 'BEGIN { print (s >= f / 4) ? 1 : 0 }')
if [ "$kept" = 1 ]; then
    [ -n "$(share "$tmp/cal" rndv/put "$dev2")" ]
    result "measured, default ratio 4: the shaped rail ($bw2 >= $bw1 / 4) is kept" $? "$tmp/cal"
else
    [ "$(proto_lanes "$tmp/cal" rndv/put)" = "tcp/$dev1" ]
    result "measured, default ratio 4: the shaped rail ($bw2 < $bw1 / 4 MB/s) is dropped" $? "$tmp/cal"
fi
[ "$(am_lane "$tmp/cal")" = "tcp/$dev1" ]
st=$?
result "measured: the eager (am) lane is the faster rail ($(am_lane "$tmp/cal"))" $st "$tmp/cal"
grep -q "^# measured rails: " "$tmp/cal"
result "psel_info names the measured rails" $? "$tmp/cal"

# --- the data path: bytes on each rail -------------------------------------------
size=1048576 iters=40
server "$tmp/bw.server" UCX_PSEL_CALIBRATION=none ||
    result "a psel_perftest server starts in $ns_a" 1
before1=$(rails_bytes "$dev1") before2=$(rails_bytes "$dev2")
in_b env UCX_PSEL_CALIBRATION="$cal" timeout 60 "$perftest" "$a1" -p "$port" \
    -t tag_bw -s $size -n $iters -w 2 >"$tmp/bw.client" 2>&1
cst=$?
wait "$spid"
sst=$?
moved1=$(($(rails_bytes "$dev1") - before1)) moved2=$(($(rails_bytes "$dev2") - before2))
result "tag_bw 1 MiB with the calibration: client and server exit 0" \
    $(( cst != 0 || sst != 0 )) "$tmp/bw.client" "$tmp/bw.server"
echo "# tag_bw 1 MiB, measured: $dev1 moved $moved1 B, $dev2 moved $moved2 B;" \
     "$(awk '$1 == "Final:" { print $7 " MB/s" }' "$tmp/bw.client")"
if [ "$kept" = 1 ]; then
    [ $((moved2 * 100)) -ge $((moved1 + moved2)) ]
    result "the kept shaped rail carries its share ($moved2 of $((moved1 + moved2)) B)" $?
else
    [ $((moved1 * 10)) -ge $((9 * iters * size)) ] &&
        [ $((moved2 * 100)) -lt $((moved1 + moved2)) ]
    result "the dropped rail carries no payload: $dev1 $moved1 B, $dev2 $moved2 B" $?
fi

tap_done
