#!/usr/bin/env bash
# Unequal rails, measured (issue 13): two hosts in network namespaces joined
# by two veth rails, the second shaped with tc tbf (netns_rails.sh), which
# both advertise the same 10 Gb/s. Two calibrations are checked the same
# way: one written here with rail lines of known figures (always runs), and
# one psel_calibrate --quick measures in B against a psel_perftest server
# in A (each rail alone; skipped, saying why, when the machine is too busy
# for it to measure, as psel_calibrate itself refuses). For each:
#  - psel_info -e in B against A's snapshot: without a calibration the
#    rendezvous splits 50/50 over both rails (attributes tie); with it
#      * UCX_PSEL_MULTI_LANE_MAX_RATIO large enough to keep both, the
#        shares are the rails' bandwidths' (to 1%), not 50/50;
#      * the default ratio (4) drops the shaped rail when it is below a
#        quarter of the other, and keeps it otherwise;
#      * the eager (am) lane is the faster rail;
#  - psel_perftest tag_bw of 1 MiB with the calibration: the veths' byte
#    counters follow the lanes psel_info showed (the shaped rail carries no
#    payload when it was dropped). Figures are printed, not checked.
# Then psel_calibrate --any-peer writes the rails for every peer ('*').
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

# skipped DESCRIPTION REASON: a test point that could not run, and why
skipped() { result "$1 # SKIP $2" 0; }

in_a timeout 20 "$psel_info" --save "$tmp/snap_a" >"$tmp/save" 2>&1
result "psel_info --save in $ns_a" $? "$tmp/save"

# info NAME ENV... (psel_info -e -x in B against A's snapshot), proto_lanes
. "$(dirname "$0")/netns_psel_info.sh"
# share FILE PROTO DEV: DEV's share in percent in PROTO's lanes
share() {
    proto_lanes "$1" "$2" | tr '+' '\n' |
        awk -v d="tcp/$3" '$1 == d { sub(/%/, "", $2); print $2 }'
}
# am_lane FILE: the lane with the am role in the lanes table
am_lane() {
    awk '$1 == "#" && $2 ~ /^[0-9]+$/ && $4 ~ /^am\(/ { print $3 }' "$1"
}
# rail CAL DEV FIELD: 3 peer, 4 latency [ns], 5 bandwidth [MB/s, 2^20 B/s,
# as psel_info prints it; the file has B/s] of DEV's rail line
rail() {
    awk -v d="tcp/$2" -v f="$3" '$1 == "rail" && $2 == d {
             if (f == 5) printf "%.1f\n", $5 / 1048576; else print $f }' \
        "$1" 2>/dev/null
}
# dev_addr DEV: the device address of A's tcp/DEV in A's snapshot, the peer
# a rail measured from B against it names
dev_addr() {
    awk -v d="$1" '$1 == "tl_name" { tl = $3 } $1 == "dev_name" { dev = $3 }
                   $1 == "dev_addr" && tl == "tcp" && dev == d { print $3 }' \
        "$tmp/snap_a"
}

info attr UCX_PSEL_CALIBRATION=none UCX_PSEL_PROTOS=rndv/put
[ "$(share "$tmp/attr" rndv/put "$dev1")" = 50 ] &&
    [ "$(share "$tmp/attr" rndv/put "$dev2")" = 50 ]
st=$? # (a $(...) in result's arguments would reset $?)
result "attributes: rndv/put splits 50/50 ($(proto_lanes "$tmp/attr" rndv/put))" $st "$tmp/attr"

# follows LABEL CAL: selection and the data path follow CAL's rails
follows() {
    local label=$1 cal=$2 bw1 bw2 s1 s2 kept st cst sst before1 before2
    local size=1048576 iters=40
    bw1=$(rail "$cal" "$dev1" 5) bw2=$(rail "$cal" "$dev2" 5)

    info "$label.both" UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_PROTOS=rndv/put \
        UCX_PSEL_MULTI_LANE_MAX_RATIO=1000
    s1=$(share "$tmp/$label.both" rndv/put "$dev1")
    s2=$(share "$tmp/$label.both" rndv/put "$dev2")
    awk -v s1="$s1" -v s2="$s2" -v b1="$bw1" -v b2="$bw2" 'BEGIN {
            e1 = 100 * b1 / (b1 + b2); e2 = 100 * b2 / (b1 + b2)
            exit !(s1 != "" && s2 != "" && s1 - e1 < 1 && e1 - s1 < 1 &&
                   s2 - e2 < 1 && e2 - s2 < 1) }'
    result "$label: both rails kept, shares $s1% / $s2% follow $bw1 / $bw2 MB/s" \
        $? "$tmp/$label.both"

    info "$label" UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_PROTOS=rndv/put
    kept=$(awk -v f="$bw1" -v s="$bw2" 'BEGIN { print (s >= f / 4) ? 1 : 0 }')
    if [ "$kept" = 1 ]; then
        [ -n "$(share "$tmp/$label" rndv/put "$dev2")" ]
        result "$label: default ratio 4: the shaped rail ($bw2 >= $bw1 / 4 MB/s) is kept" \
            $? "$tmp/$label"
    else
        [ "$(proto_lanes "$tmp/$label" rndv/put)" = "tcp/$dev1" ]
        result "$label: default ratio 4: the shaped rail ($bw2 < $bw1 / 4 MB/s) is dropped" \
            $? "$tmp/$label"
    fi
    [ "$(am_lane "$tmp/$label")" = "tcp/$dev1" ]
    st=$?
    result "$label: the eager (am) lane is the faster rail ($(am_lane "$tmp/$label"))" \
        $st "$tmp/$label"
    grep -q "^# measured rails: " "$tmp/$label"
    result "$label: psel_info names the measured rails" $? "$tmp/$label"

    server "$tmp/$label.server" UCX_PSEL_CALIBRATION=none ||
        result "$label: a psel_perftest server starts in $ns_a" 1
    before1=$(rails_bytes "$dev1") before2=$(rails_bytes "$dev2")
    in_b env UCX_PSEL_CALIBRATION="$cal" timeout 60 "$perftest" "$a1" -p "$port" \
        -t tag_bw -s $size -n $iters -w 2 >"$tmp/$label.client" 2>&1
    cst=$?
    wait "$spid"
    sst=$?
    moved1=$(($(rails_bytes "$dev1") - before1))
    moved2=$(($(rails_bytes "$dev2") - before2))
    result "$label: tag_bw 1 MiB: client and server exit 0" \
        $(( cst != 0 || sst != 0 )) "$tmp/$label.client" "$tmp/$label.server"
    echo "# $label: tag_bw 1 MiB: $dev1 moved $moved1 B, $dev2 moved $moved2 B;" \
         "$(awk '$1 == "Final:" { print $7 " MB/s" }' "$tmp/$label.client")"
    if [ "$kept" = 1 ]; then
        [ $((moved2 * 100)) -ge $((moved1 + moved2)) ]
        result "$label: the kept shaped rail carries its share ($moved2 of $((moved1 + moved2)) B)" $?
    else
        [ $((moved1 * 10)) -ge $((9 * iters * size)) ] &&
            [ $((moved2 * 100)) -lt $((moved1 + moved2)) ]
        result "$label: the dropped rail carries no payload ($dev1 $moved1 B, $dev2 $moved2 B)" $?
    fi
}

# --- rails of known figures ------------------------------------------------------
# the issue's setup: the shaped rail at 112 MB/s, the other at 1539 MB/s;
# the shaped one answers a small message a little sooner (a token bucket
# lets it through at full speed)
known=$tmp/known.txt
peer1=$(dev_addr "$dev1") peer2=$(dev_addr "$dev2")
[ -n "$peer1" ] && [ -n "$peer2" ]
result "A's snapshot has its devices' addresses ($dev1 $peer1, $dev2 $peer2)" \
    $? "$tmp/snap_a"
# known PEER1 PEER2: the rails of known figures measured against PEER1/2
known() {
    cat <<EOF
protosel-calibration 3
host $(hostname) -
ucx ${PSEL_UCX_VERSION:-$(pkg-config --modversion ucx)}
created 2026-11-24T12:00:00Z
duration 1
mode quick
rail tcp/$dev1 $1 21500 $((1539 * 1048576))
rail tcp/$dev2 $2 20900 $((112 * 1048576))
EOF
}
known "$peer1" "$peer2" >"$known"
follows "rails of known figures" "$known"

# the same rails measured against another host (other device addresses)
# say nothing of A: its lanes keep the attributes, 50/50
known 0002c0a8fe01 0002c0a8fe02 >"$tmp/other.txt"
info other UCX_PSEL_CALIBRATION="$tmp/other.txt" UCX_PSEL_PROTOS=rndv/put
[ "$(share "$tmp/other" rndv/put "$dev1")" = 50 ] &&
    [ "$(share "$tmp/other" rndv/put "$dev2")" = 50 ]
st=$?
result "rails measured against another host do not apply to A ($(proto_lanes "$tmp/other" rndv/put))" \
    $st "$tmp/other"

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

bw1=$(rail "$cal" "$dev1" 5) bw2=$(rail "$cal" "$dev2" 5)
if [ -z "$bw1" ] && grep -Eq "rails: (refused: other processes|not measured)" "$tmp/cal.out"; then
    why=$(grep -Em1 "rails: (refused|not measured)" "$tmp/cal.out" | sed 's/^# *//' | cut -c1-110)
    skipped "psel_calibrate measures each rail alone, and selection follows" \
        "the machine is too busy: $why"
    tap_done
    exit
fi
[ -n "$bw1" ] && [ -n "$bw2" ]
result "psel_calibrate measures each rail alone: tcp/$dev1 $bw1 MB/s, tcp/$dev2 $bw2 MB/s (exit $st)" \
    $? "$tmp/cal.out" "$tmp/cal.server"
[ "$(rail "$cal" "$dev1" 3)" = "$peer1" ] && [ "$(rail "$cal" "$dev2" 3)" = "$peer2" ]
result "each rail names the device of A it was measured against ($(rail "$cal" "$dev1" 3), $(rail "$cal" "$dev2" 3))" \
    $? "$cal"
if [ -n "$bw1" ] && [ -n "$bw2" ]; then
    awk -v f="$bw1" -v s="$bw2" 'BEGIN { exit !(f > s) }'
    result "the shaped rail measured slower than the other" $? "$cal"
    follows measured "$cal"
fi

# --any-peer: the same rails, written for every peer ('*', what
# libprotosel_ucx.so applies); rails only, no protocol line needed here
server "$tmp/any.server" UCX_PSEL_CALIBRATION=none ||
    result "a psel_perftest server starts in $ns_a" 1
in_b timeout 90 "$calibrate" --quick --any-peer --max-size 64K -o "$tmp/any.txt" \
    "$a1" -p "$port" >"$tmp/any.out" 2>&1
wait "$spid" 2>/dev/null
if [ -z "$(rail "$tmp/any.txt" "$dev1" 5)" ] &&
   grep -Eq "rails: (refused: other processes|not measured)" "$tmp/any.out"; then
    skipped "psel_calibrate --any-peer writes the rails for every peer" \
        "the machine is too busy: $(grep -Em1 "rails: (refused|not measured)" "$tmp/any.out" | sed 's/^# *//' | cut -c1-110)"
else
    [ "$(rail "$tmp/any.txt" "$dev1" 3)" = "*" ] && [ "$(rail "$tmp/any.txt" "$dev2" 3)" = "*" ] &&
        grep -q "to $peer1, written for every peer" "$tmp/any.out"
    result "psel_calibrate --any-peer writes each rail for every peer ('*'), saying which device it measured" \
        $? "$tmp/any.out" "$tmp/any.txt"
fi

tap_done
