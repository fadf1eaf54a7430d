#!/usr/bin/env bash
# The perftest benches stay runnable: bench/ab_pairs.sh,
# bench/vs_ucx_perftest.sh and bench/ucx_regret.sh on shared memory, a few
# short runs each, against this build's psel_perftest and library and its
# UCX's ucx_perftest. Checks what
# they print (pairs, medians, the protocol columns read from both tools'
# tables) and that bad arguments end with a message. No speed is checked.
# TAP output.
set -u
perftest=${PSEL_PERFTEST:-./src/tools/psel_perftest}
psel_info=${PSEL_INFO:-./src/tools/psel_info}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/tap.sh"

if ! command -v ucx_perftest >/dev/null; then
    skip "bench/ab_pairs.sh and bench/vs_ucx_perftest.sh" \
         "no ucx_perftest (apt-get install ucx-utils)"
    tap_done
    exit
fi

# ab_pairs: two pairs of ucx_perftest (A) and this psel_perftest (B)
timeout 120 "$top/bench/ab_pairs.sh" --pairs 2 --iters 2000 ucx "$perftest" \
    >"$tmp/ab" 2>&1
result "ab_pairs: exits 0" $? "$tmp/ab"
grep -Eq '^ +2 +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{3}$' "$tmp/ab"
result "ab_pairs: prints each pair with its ratio" $? "$tmp/ab"
grep -Eq '^median of per-pair ratios B/A: [0-9]+\.[0-9]{3} \(quartiles [0-9.]+-[0-9.]+, 2 pairs; > 1: B streams faster\)$' "$tmp/ab"
result "ab_pairs: prints the median with its quartiles" $? "$tmp/ab"

timeout 10 "$top/bench/ab_pairs.sh" --pairs 0 ucx psel >"$tmp/bad" 2>&1
[ $? = 2 ] && grep -q "pairs must be >= 1" "$tmp/bad"
result "ab_pairs: --pairs 0 exits 2 saying why" $? "$tmp/bad"
timeout 10 "$top/bench/ab_pairs.sh" ucx "$tmp/no-such-perftest" >"$tmp/bad" 2>&1
[ $? = 1 ] && grep -q "no executable '$tmp/no-such-perftest'" "$tmp/bad"
result "ab_pairs: a missing build exits 1 naming it" $? "$tmp/bad"

# vs_ucx_perftest: one run of each tool at 8 B and 8 KiB, both tests; the
# protocol columns come from the tables both tools print at endpoint
# creation: tag_lat from protosel's one-message table, tag_bw from its
# streamed one, which psel_info prints too. Both get the same fixed inputs:
# copies timed at start differ from process to process on a busy machine,
# and move the rendezvous threshold across 8 KiB
pinned=(UCX_PSEL_BCOPY_BW=5800MBs UCX_PSEL_CALIBRATION=none)
timeout 180 "$top/bench/vs_ucx_perftest.sh" --runs 1 --sizes "8 64 8192" \
    --iters 2000 --transports shm --psel-perftest "$perftest" \
    --psel-env "${pinned[0]}" --psel-env "${pinned[1]}" >"$tmp/vs" 2>&1
result "vs_ucx_perftest: exits 0" $? "$tmp/vs"
env "${pinned[@]}" UCX_PSEL_TLS=posix,sysv,cma timeout 60 "$psel_info" \
    >"$tmp/info" 2>&1
result "psel_info on shm: exits 0" $? "$tmp/info"

# row TEST SIZE: the row of SIZE in vs_ucx_perftest's table of TEST
row() {
    awk -v t="### shm $1:" -v s="| $2 |" 'index($0, t) == 1 { on = 1; next }
        on && index($0, s) == 1 { print; exit }' "$tmp/vs"
}
# psel_info_proto TITLE SIZE: the protocol of SIZE in psel_info's table TITLE
psel_info_proto() {
    awk -F'|' -v title="$1" -v size="$2" '
        $2 ~ "^ *" title " *$" { on = 1; next }
        on && $2 ~ /^ *[0-9]+\.\.[0-9a-z]+ *$/ {
            rg = $2; gsub(/ /, "", rg); split(rg, b, /\.\./)
            if (size + 0 >= b[1] + 0 && (b[2] == "inf" || size + 0 <= b[2] + 0)) {
                p = $3; sub(/.*\[/, "", p); sub(/\].*/, "", p); print p; exit }
        }
        on && /^\+-/ && seen { exit }
        on && /^\|/ { seen = 1 }' "$tmp/info"
}

for t in tag_lat tag_bw; do
    r=$(row $t "8 B")
    case $r in
    *"| egr/short | egr/short sysv/memory | yes |") true ;;
    *) false ;;
    esac
    result "vs_ucx_perftest: $t 8 B runs egr/short on both, read from their tables" \
        $? "$tmp/vs"
    echo "$r" | grep -Eq '^\| 8 B \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+\.[0-9]{3} \|'
    result "vs_ucx_perftest: $t 8 B has a ratio and a per-run ratio" $? "$tmp/vs"
done
# UCX's streamed table sends 48 B and up by egr/bcopy, but ucp_tag_send_nbx
# tries its inline egr/short first, bounded by the one-message table (to
# 92 B here): at 64 B UCX runs egr/short, and the bench says so
r=$(row tag_bw "64 B")
case $r in
*"| egr/short sysv/memory | "*) true ;;
*) false ;;
esac
result "vs_ucx_perftest: tag_bw 64 B: UCX runs its inline egr/short, not its streamed table's row" \
    $? "$tmp/vs"

# At 8 KiB the two tables may differ (rendezvous for one message, egr/bcopy
# streamed); the data path's tables are psel_info's, which prints the
# streamed one only where it differs
for t in tag_lat tag_bw; do
    [ $t = tag_lat ] && title=ep || title=streamed
    if [ $t = tag_bw ] && grep -q "^# streamed sends .*: the same table" "$tmp/info"; then
        title=ep
    fi
    want=$(psel_info_proto $title 8192)
    [ -n "$want" ] && row $t "8 KiB" | grep -q "| $want | [a-z]"
    result "vs_ucx_perftest: $t 8 KiB: protosel's protocol is psel_info's $title table's (${want:-none found})" \
        $? "$tmp/vs" "$tmp/info"
done

# ucx_regret: one round of ucp_put_bw at 64 KiB over shared memory with
# this build's library and its UCX's ucx_perftest: the row has stock's and
# protosel's times, and the summary or -v says what UCP ran when forced
# (UCX 1.13 has no UCX_PROTOS: its "forced" runs are UCP's own choice)
timeout 300 "$top/bench/ucx_regret.sh" -b "$PWD" -r 1 -t shm -T ucp_put_bw -s 65536 -v \
    >"$tmp/regret" 2>"$tmp/regret.err"
result "ucx_regret: exits 0" $? "$tmp/regret" "$tmp/regret.err"
grep -Eq '^\| shm  \| ucp_put_bw \| +65536 \| +[0-9.]+ \| +[0-9.]+ \| ' "$tmp/regret"
result "ucx_regret: a row with stock's and protosel's times" $? "$tmp/regret"
grep -Eq '^\| shm  \| ucp_put_bw \| [0-9.]+ \([0-9]+ B\), [0-9.]+ +\| [0-9.]+ \([0-9]+ B\), [0-9.]+ +\|$' "$tmp/regret" ||
    grep -Eq "^# shm ucp_put_bw 65536 put/[a-z/]+ forced: UCP ran '" "$tmp/regret.err"
result "ucx_regret: the worst regret and geo-mean, or what UCP ran when forced" \
    $? "$tmp/regret" "$tmp/regret.err"
timeout 10 "$top/bench/ucx_regret.sh" -b "$PWD" -T ucp_tag_lat >"$tmp/bad" 2>&1
[ $? = 2 ] && grep -q "put, get and active-message tests only" "$tmp/bad"
result "ucx_regret: a tag test exits 2 saying why" $? "$tmp/bad"

tap_done
