#!/usr/bin/env bash
# Integration test of psel_info's options of scale: --peers N on fixture
# dumps (the rc -> dc switch, -x saying why, the footprint), bad values,
# Open MPI receive queue specs, the suggestion, the alltoall estimate and
# the plots. TAP output; fails if any check fails.
set -u
info=${PSEL_INFO:-./src/tools/psel_info}
fixtures=${PSEL_FIXTURES_DIR:?PSEL_FIXTURES_DIR must point at test/fixtures}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export UCX_PSEL_CALIBRATION=none
f001=$fixtures/001-azure-hbv3-cx6vf-ucx1.17.txt

# run STATUS DESCRIPTION COMMAND...: the command must exit with STATUS
run() {
    local want=$1 desc=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    cat "$tmp/out" "$tmp/err" >"$tmp/all"
    [ "$got" -eq "$want" ]
    result "$desc (exit $got)" $? "$tmp/all"
}
expect() { # expect DESCRIPTION PATTERN: the last output matches
    grep -q -- "$2" "$tmp/all"
    result "$1" $? "$tmp/all"
}
am_lane() { sed -n 's/^# *0  \([^ ]*\) .*am(.*/\1/p' "$tmp/out" | head -1; }

# --peers on the ConnectX-6 dump: rc up to 59 peers, dc from 60 (latency
# growth), rc left out above its max eps 256
for case in 1:rc_mlx5 32:rc_mlx5 59:rc_mlx5 64:dc_mlx5 4096:dc_mlx5; do
    peers=${case%%:*} tl=${case#*:}
    run 0 "--peers $peers runs" "$info" -e --peers "$peers" --local "$f001"
    [ "$(am_lane)" = "$tl/mlx5_0:1" ]
    result "... --peers $peers: am lane $tl" $? "$tmp/out"
done
run 0 "-x --peers 64" "$info" -e -x --peers 64 --local "$f001"
expect "... ranks rc_mlx5 below dc_mlx5 with its latency at 64" \
    '^# am       rc_mlx5/mlx5_0:1 .* 664 ns  latency 600 + 1 x 64 ns'
expect "... marks dc_mlx5 selected" '^# am     \* dc_mlx5/mlx5_0:1'
run 0 "-x --peers 4096" "$info" -e -x --peers 4096 --local "$f001"
expect "... says rc_mlx5 is left out by max eps" \
    'rc_mlx5/mlx5_0:1 .*max eps 256 < 4096: left out'
run 0 "UCX_PSEL_NUM_EPS=4096 -e" env UCX_PSEL_NUM_EPS=4096 "$info" -e --local "$f001"
[ "$(am_lane)" = "dc_mlx5/mlx5_0:1" ]
result "... selects as --peers 4096 does" $? "$tmp/out"
run 0 "--peers 4096 overrides UCX_PSEL_NUM_EPS=1" env UCX_PSEL_NUM_EPS=1 "$info" -e --peers 4096 --local "$f001"
[ "$(am_lane)" = "dc_mlx5/mlx5_0:1" ]
result "... dc_mlx5" $? "$tmp/out"

run 0 "-j --peers 64" "$info" -j --peers 64 --local "$f001"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]));
assert d["num_eps"] == 64 and d["tables"][0]["rows"][0]["lanes"] == "dc_mlx5/mlx5_0:1"' "$tmp/out"
result "... JSON says 64 endpoints and dc lanes" $? "$tmp/all"
run 0 "-j --peers 32: the footprint as -e shows it" "$info" -j --peers 32 --local "$f001"
python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["footprint"]
# the same numbers as the text checked below: 48.03 MiB = 44.03 MiB once
# + 128 KiB x 32, the rc queue pair, the change to dc at 60 peers
assert f["peers"] == 32
assert abs(f["total"] / 2**20 - 48.03) < 0.005, f["total"]
assert abs(f["once"] / 2**20 - 44.03) < 0.005 and f["per_peer"] == 131072
sq = [t for t in f["terms"] if t["term"] == "queue pair send queue"]
assert sq and sq[0]["per"] == "peer" and sq[0]["item_size"] == 131072, sq
assert sq[0]["bytes"] == 4 * 2**20
assert f["lane_changes"] == [{"at": 60, "from": "rc_mlx5/mlx5_0:1",
                              "to": "dc_mlx5/mlx5_0:1"}], f["lane_changes"]
' "$tmp/out"
result "... footprint terms, sums and lane changes in the JSON" $? "$tmp/all"

# the footprint at N
run 0 "--peers 32 footprint" "$info" -e --peers 32 --local "$f001"
expect "... rc's shared receive queue with its setting" \
    'UCX_RC_MLX5_RX_QUEUE_LEN=4095 x 1.1 (pool), UCX_RC_MLX5_SEG_SIZE=8256'
expect "... a queue pair per peer" 'queue pair send queue  *peer  *1 x 131072 B  *4.00 MiB'
expect "... the total" '^# total 48.03 MiB = 44.03 MiB once + 128.00 KiB x 32 peers'
expect "... and where the lanes change" \
    '^# lanes change at 60 peers: rc_mlx5/mlx5_0:1 -> dc_mlx5/mlx5_0:1'

# bad --peers, --alltoall, --size, --proxy-overhead values
for bad in 0 -1 -4096 67108865 99999999999999999999 abc 1e6 12x ''; do
    run 2 "--peers '$bad' is refused" "$info" -e --peers "$bad" --local "$f001"
    expect "... saying what to give" '--peers.*give the number of peers (endpoints) of each process, 1\.\.67108864'
done
run 2 "--alltoall 1 is refused" "$info" --alltoall 1
expect "... an alltoall needs two processes" 'an alltoall needs at least two processes'
run 2 "--size without --alltoall is refused" "$info" -e --size 8
run 2 "--size -8 is refused" "$info" --alltoall 3 --size -8
run 2 "--proxy-overhead fast is refused" "$info" --alltoall 3 --proxy-overhead fast
run 2 "--alltoall with -j is refused" "$info" -j --alltoall 3
run 1 "a bad UCX_PSEL_NUM_EPS is refused" env UCX_PSEL_NUM_EPS=0 "$info" -e
expect "... naming the variable" 'UCX_PSEL_NUM_EPS'

# Open MPI receive queue specs: the three examples at 512 processes
run 0 "SRQ example string" "$info" --ompi-receive-queues \
    P,128,256,128,16:S,1024,256,128,32:S,4096,256,128,32:S,65536,256,128,32 \
    --peers 511
expect "... 36.86 MB per process" 'total per process with 511 peers (a fully connected job of 512 processes): 36.86 MB'
expect "... the per-peer formula" '511 x (256 + 31) x 128 B'
run 0 "no-SRQ example string" "$info" --ompi-receive-queues \
    P,128,256,128,16:P,1024,32,16:P,4096,32,16:P,65536,32,16 --peers 511
expect "... 1426.88 MB per process" 'processes): 1426.88 MB'
run 0 "no-SRQ string without 64 KiB" "$info" --ompi-receive-queues \
    P,128,256,128,16:P,1024,32,16:P,4096,32,16 --peers 511
expect "... 120.81 MB per process" 'processes): 120.81 MB'
run 0 "a spec without --peers" "$info" --ompi-receive-queues P,128,256:S,1024,256
expect "... shows once + per peer: (256 + 7) x 128 B" 'per process: 262144 B once + 33664 B per peer'
run 1 "non-ascending sizes are refused" "$info" --ompi-receive-queues P,4096,32:P,1024,32
expect "... naming the queue and column" 'queue 2 (column 13): size 1024 is not larger than queue 1.s 4096'
expect "... with a caret under it" '^              \^$'
run 1 "a wrong type letter is refused" "$info" --ompi-receive-queues P,128,256:Z,1024,8
expect "... naming the position" "queue 2 (column 11): expected the queue type P"

# suggestion from the selection
run 0 "--suggest-receive-queues --peers 511 on 001" "$info" --suggest-receive-queues --peers 511 --local "$f001"
# eager rows ..178, ..273, ..18365 (dc_mlx5 at 511 peers, UCX 1.17's IB
# per-operation costs): 178 + 64 -> 256, 273 + 64 -> 512, 18365 + 64 -> 32768
[ "$(tail -1 "$tmp/out")" = "P,128,256,128,16,31:S,256,256,128,32:S,512,256,128,32:S,32768,256,128,32" ]
result "... P for credits, S queues over the SRQ-capable HCA" $? "$tmp/out"
run 0 "--suggest-receive-queues here" "$info" --suggest-receive-queues --peers 3
expect "... no SRQ without an HCA" 'no InfiniBand HCA, so no SRQ'
tail -1 "$tmp/out" | grep -q '^P,128,256,128,16,31:P,'
result "... all P queues" $? "$tmp/out"

# alltoall estimate
run 0 "--alltoall 3 over shared memory" env UCX_PSEL_TLS=posix,sysv,cma "$info" --alltoall 3
expect "... lanes selected for 2 endpoints" 'k = 2 peers each, lanes selected for 2 endpoints'
expect "... where the proxy comes within 10%" 'the proxy comes within 10% of direct issue from [0-9]* B per peer'
run 0 "--alltoall 3 --size 64K" env UCX_PSEL_TLS=posix,sysv,cma "$info" --alltoall 3 --size 64K
[ "$(grep -c '^ *65536 ' "$tmp/out")" -eq 1 ]
result "... one row, at 65536 B" $? "$tmp/out"

# plots (gnuplot-nox is in dev.sh's packages)
if command -v gnuplot >/dev/null; then
    run 0 "--peers 64 --plot" "$info" --peers 64 --plot "$tmp/fp.svg" --local "$f001"
    grep -q '<svg' "$tmp/fp.svg" && grep -q '>60: -\(>\|&gt;\) dc_mlx5' "$tmp/fp.svg"
    result "... an SVG with the switch at 60 marked" $? "$tmp/all"
    run 0 "--alltoall 3 --plot" env UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo "$info" --alltoall 3 --plot "$tmp/a2a.svg"
    grep -q 'CPU proxy' "$tmp/a2a.svg"
    result "... an SVG with both curves" $? "$tmp/all"
else
    echo "ok $((n + 1)) # SKIP plots: gnuplot is not installed (apt-get install gnuplot-nox)"
    n=$((n + 1))
fi

tap_done
