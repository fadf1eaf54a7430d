#!/usr/bin/env bash
# libprotosel_ucx.so with lines measured through stock UCP (psel_calibrate
# --ucp): a hand-made calibration over tcp/lo whose UCP lines give
# thresholds computed by hand below, and whose protosel lines would give
# another table. Both tiers and psel_info --ucp must follow the UCP lines,
# leave out a protocol marked ucp-unsupported, and UCP's own UCX_PROTO_INFO
# table must be that table. Then a bad file. An active message's own UCP
# line comes before its tag twin's. From UCX 1.14 the same for put:
# hand-made put lines decide UCP's put table. psel_calibrate --ucp measures
# UCP's active-message protocols, and its put and get ones from UCX 1.14
# (UCX 1.13: says it does not). TAP output; no speed asserted.
#
# UCP lines (single = multi), d = 1 (UCX_PSEL_RNDV_PERF_DIFF=0):
#   egr/short  5000 ns, flat
#   egr/bcopy  6000 ns + 200 ns/KB
#   egr/zcopy  8000.5 ns + 100 ns/KB  -> cheaper than bcopy from x > 2000.5 *
#              1024 / 100 = 20485.12: at 20486 (10001.086 ns against 10001.172)
#   rndv/put   20000 ns + 50 ns/KB    -> cheaper than zcopy from x > 11999.5 *
#              1024 / 50 = 245749.76: at 245750
#   rndv/am    ucp-unsupported (protosel's own line, 50 ns flat, would win
#              every size from egr/short's end)
# protosel's own egr/bcopy line (100 ns flat) would take every size after
# egr/short: used only by protosel's data path (psel_info without --ucp).
set -u
me=test_ucx_runtime_ucp_lines
tmp=$(mktemp -d)
. "$(dirname "$0")/ucx_runtime_lib.sh"
trap 'cleanup_pids; rm -rf "$tmp"' EXIT
tables="python3 $(dirname "$0")/ucx_tables.py"
# the thresholds above are the exact crossings: no switch margin
export UCX_PSEL_SWITCH_MARGIN=0

need_lib
need_proto_tier
[ -n "$(transports tcp)" ] || exit 77   # every check here is over tcp/lo

host=$(hostname | tr ' \t' '__')
mid=$(awk 'NR == 1 {print $1}' /etc/machine-id 2>/dev/null)
ver=$(ucx_info -v | sed -n 's/^# \(Library version: \|Version \)//p')
cal=$tmp/cal.txt
cat >"$cal" <<EOF
protosel-calibration 4
host $host ${mid:--}
ucx $ver
created 2026-01-01T00:00:00Z
duration 1
mode full
range egr/bcopy tcp/lo host inf 100 0 100 0
range rndv/am tcp/lo host inf 50 0 50 0
ucp-range egr/short tcp/lo host inf 5000 0 5000 0
ucp-range egr/bcopy tcp/lo host inf 6000 200 6000 200
ucp-range egr/zcopy tcp/lo host inf 8000.5 100 8000.5 100
ucp-range rndv/put tcp/lo host inf 20000 50 20000 50
ucp-unsupported rndv/am tcp/lo host
ucp-unsupported rndv/get tcp/lo host
EOF
penv=(UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo UCX_PSEL_RNDV_PERF_DIFF=0)
uenv=(UCX_TLS=tcp UCX_NET_DEVICES=lo UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y UCX_PSEL_PROTO_INFO=y)

# rows as "START END PROTOCOL", eager short's end (its size limit) left open
rows_past_short() { # FILE (psel_info -e -j)
    $tables psel-rows "$1" | awk 'NR == 1 && $3 == "egr/short" { next } { print $1, $2, $3 }'
}
expected="SHORT_END+1 20485 egr/bcopy
20486 245749 egr/zcopy
245750 inf rndv/put"

check "psel_info -e -j --ucp --same-process with the hand-made lines" \
    env "${penv[@]}" "$info" -e -j --ucp --same-process
cp "$tmp/out" "$tmp/ucp.json"
short_end=$($tables psel-rows "$tmp/ucp.json" | awk 'NR == 1 && $3 == "egr/short" { print $2 }')
check "... starts with eager short" test -n "$short_end"
echo "# eager short ends at $short_end over tcp/lo"
rows_past_short "$tmp/ucp.json" >"$tmp/ucp.rows"
printf '%s\n' "${expected/SHORT_END+1/$((short_end + 1))}" >"$tmp/expected.rows"
check "... then the thresholds computed by hand from the UCP lines" \
    diff "$tmp/expected.rows" "$tmp/ucp.rows"
check "psel_info -e --ucp says which lines it took" \
    env "${penv[@]}" "$info" -e --ucp --same-process
expect "... through UCP for egr/short egr/bcopy egr/zcopy rndv/put" \
    "cost lines: measured on .* through UCP for egr/short egr/bcopy egr/zcopy rndv/put"
expect "... and rndv/am is not UCP's to run" \
    "rndv/am +not applicable: stock UCP ran another protocol when it was forced"

check "psel_info -e -j without --ucp: protosel's data path, its own lines" \
    env "${penv[@]}" "$info" -e -j --same-process
check "... where its egr/bcopy and rndv/am lines take the sizes" bash -c \
    "$tables psel-rows '$tmp/out' | awk '\$3 == \"egr/zcopy\" || \$3 == \"rndv/put\" { bad = 1 } END { exit bad }'"

# the protocol tier: UCP's table is the one computed by hand
check "ucx_info -e -u t under the library, protocol tier" \
    env LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_RNDV_PERF_DIFF=0 \
        "${uenv[@]}" ucx_info -e -u t
cp "$tmp/all" "$tmp/proto.ucx"
expect "... says the UCP lines come first" \
    "protosel: libprotosel_ucx.so .* 4 lines measured through UCP \\(psel_calibrate --ucp\\), used first, 2 protocols UCP does not run; 2 through protosel" "$tmp/proto.ucx"
expect "... and which it took for this endpoint" \
    "cost lines: .* through UCP for egr/short egr/bcopy egr/zcopy rndv/put" "$tmp/proto.ucx"
absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/proto.ucx"
check "... UCP's table is psel_info --ucp's" $tables compare "$tmp/ucp.json" "$tmp/proto.ucx"
cat "$tmp/out"
check "... with UCP's rendezvous at 245750 and zero-copy from 20486" bash -c \
    "$tables ucx-rows '$tmp/proto.ucx' | awk '\$1 == 20486 && \$3 == \"egr/zcopy\" { z = 1 } \$1 == 245750 && \$3 ~ /^rndv/ { r = 1 } END { exit !(z && r) }'"

# ucx_perftest tag_bw selects on the multi lines (the same numbers here)
senv=(LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION="$cal" UCX_PSEL_RNDV_PERF_DIFF=0
      UCX_TLS=tcp UCX_NET_DEVICES=lo UCX_PROTO_ENABLE=y UCX_WARN_UNUSED_ENV_VARS=n)
cenv=("${senv[@]}" UCX_PROTO_INFO=y)
mkdir -p "$tmp/bw"
check "ucx_perftest tag_bw 100000 B, both sides preloaded" \
    perftest_pair "$tmp/bw" senv cenv -t tag_bw -s 100000 -n 200 -w 20
check "... its multi-send table is the same" $tables compare "$tmp/ucp.json" "$tmp/bw/client" \
    --title "ucp_tag_send\\*\\(multi\\) from host memory"

# the config tier and psel_info --ucx-env derive their thresholds from the
# same lines
check "psel_info --ucx-env with the hand-made lines" env "${penv[@]}" "$info" --ucx-env -q
thresh=$(same_host_thresh 245750)
expect "... UCX_RNDV_THRESH=$thresh" "^UCX_RNDV_THRESH=$thresh$" "$tmp/out"
expect "... UCX_ZCOPY_THRESH=20486" "^UCX_ZCOPY_THRESH=20486$" "$tmp/out"
expect "... rendezvous by put" "^UCX_RNDV_SCHEME=put_zcopy$" "$tmp/out"
check "ucx_info under the library, config tier" \
    env LD_PRELOAD="$lib" UCX_PSEL_TIER=config UCX_PSEL_CALIBRATION="$cal" \
        UCX_PSEL_RNDV_PERF_DIFF=0 UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo \
        "${uenv[@]}" ucx_info -e -u t
expect "... applies UCX_RNDV_THRESH=$thresh" "protosel:   UCX_RNDV_THRESH=$thresh( |$)"
expect "... and UCX_ZCOPY_THRESH=20486" "protosel:   UCX_ZCOPY_THRESH=20486( |$)"

# a bad file: a UCP record in a file of format 3 (rails with peers, no UCP lines)
sed 's/^protosel-calibration 4$/protosel-calibration 3/' "$cal" >"$tmp/bad.txt"
fails "psel_info with a ucp-range in a format 3 file" \
    env UCX_PSEL_CALIBRATION="$tmp/bad.txt" "$info" -e --ucp
expect "... names the file, line and record" \
    "bad.txt:9: ucp-range: a record of format version 4, in a file of version 3"
check "ucx_info under the library with that file" \
    env LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION="$tmp/bad.txt" "${uenv[@]}" ucx_info -e -u t
expect "... warns with the file and line" "bad.txt:9: ucp-range: a record of format version 4"
expect "... and UCX runs without protosel" "UCX runs without protosel"

# A line measured on one mechanism never stands in for a UCP protocol that
# works another way. protosel's rndv/am sends from the user's buffer over
# tcp (am_zcopy); UCP's rndv/am/bcopy copies every fragment. A cheap
# rndv/am line (50 ns flat) would make UCP's sender send by rndv/am/bcopy
# after an RTR: its "rendezvous data send" table says so (UCX 1.13, 1.22),
# and from 1.18 so does the tag-send table, whose rendezvous rows name the
# data protocol they lead to; in a ucx_perftest pair with rendezvous forced
# by the user's UCX_RNDV_THRESH=0:
#  - of protosel's data path only: rndv/am/bcopy keeps UCP's own line as a
#    last resort, and the send table has no copying row (from 1.16
#    rndv/am/zcopy does the same work as protosel's and may take the line);
#  - measured through UCP (ucp-range): rndv/am/bcopy takes it, and UCP
#    sends by active messages;
#  - UCP lines for the other protocols and protosel's for rndv/am: as the
#    first (over lanes UCP was measured on, rndv/am keeps its attributes,
#    zero-copy as well).
header() {
    printf 'protosel-calibration 4\nhost %s %s\nucx %s\n' "$host" "${mid:--}" "$ver"
    printf 'created 2026-01-01T00:00:00Z\nduration 1\nmode full\n'
}
{ header; echo "range rndv/am tcp/lo host inf 50 0 50 0"; } >"$tmp/mech-path.txt"
{ header; echo "ucp-range rndv/am tcp/lo host inf 50 0 50 0"; } >"$tmp/mech-ucp.txt"
{ header; grep '^ucp-range egr/\|^ucp-range rndv/put' "$cal"
  echo "range rndv/am tcp/lo host inf 50 0 50 0"; } >"$tmp/mech-mix.txt"
# send_rows FILE...: how UCP's tables say its rendezvous sends the data:
# the rows of its "rendezvous data send" tables and the rendezvous rows of
# its tag-send ones
send_rows() {
    sed 's/^\[[^]]*\] *\[[^]]*\] *//' "$@" | awk -F'|' '
        /rendezvous data send|tagged message by ucp_tag_send/ { on = 1; next }
        on && /^\+/ && seen { on = 0; seen = 0; next }
        on && $2 ~ /[0-9]/ {
            seen = 1; d = $3; gsub(/^ +| +$/, "", d); sub(/^\(\?\) /, "", d)
            if (d ~ /^rendezvous /) sub(/^rendezvous /, "", d)
            else if (d ~ /^eager/) next
            if (d != "no data fetch") print d }'
}
for kind in path ucp mix; do
    d=$tmp/mech-$kind; mkdir -p "$d"
    senv=("${uenv[@]}" LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION="$tmp/mech-$kind.txt"
          UCX_RNDV_THRESH=0 UCX_WARN_UNUSED_ENV_VARS=n)
    # shellcheck disable=SC2034  # perftest_pair reads it by name
    cenv=("${senv[@]}")
    check "$kind lines: ucx_perftest tag_lat 100000 B, rendezvous forced" \
        perftest_pair "$d" senv cenv -t tag_lat -s 100000 -n 20 -w 2
    absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/all"
    send_rows "$d/client" "$d/server" | sort -u >"$d/send"
    echo "# $kind: UCP's send after an RTR: $(paste -sd';' "$d/send")"
    if [ $kind = ucp ]; then
        expect "... rndv/am/bcopy takes the line measured through UCP" \
            "#   rndv/am/bcopy +protosel's rndv/am, measured through UCP" "$d/client"
    else
        expect "... rndv/am/bcopy keeps UCP's own line, as a last resort" \
            "#   rndv/am/bcopy +UCP's own line, last resort" "$d/client"
    fi
    if [ ! -s "$d/send" ] && [ "${ucx_built%.*}" = 1.16 ]; then
        # UCX 1.16 prints neither its rendezvous send table nor, in the
        # tag-send one, the protocol a rendezvous row leads to
        skip "... how UCP sends after an RTR" "UCX $ucx_built prints no table of it"
    elif [ $kind = ucp ]; then
        check "... UCP printed its send table" test -s "$d/send"
        check "... and UCP sends by active messages" \
            grep -qxE "fragmented copy-in copy-out|zero-copy" "$d/send"
    else
        check "... UCP printed its send table" test -s "$d/send"
        check "... and UCP's sender never copies the fragments" \
            bash -c "! grep -q 'fragmented copy-in copy-out' '$d/send'"
    fi
done

# psel_calibrate --ucp reads from this UCX's tables which rendezvous
# protocol ran when it was forced: 1.13 from the fetch and send tables,
# 1.18 on from the tag-send rows. It may measure it, refuse it for noise,
# or find that UCP ran another (UCX 1.18 sends by active messages below
# some size whatever the scheme); what must not happen is "what its tables
# do not say". UCX 1.16's rows all say "no data fetch": there it must.
calibrate=${PSEL_CALIBRATE:-./src/tools/psel_calibrate}
run timeout -k 5 120 "$calibrate" -q -u -t tcp -m 65536 -o "$tmp/ucp-cal.txt"
result "psel_calibrate --ucp -q -t tcp: measures UCP's protocols or refuses saying why" \
    $(( $? > 1 )) "$tmp/all"
ucx_minor=$(echo "$ucx_built" | awk -F. '{ print $2 + 0 }')
if [ "$ucx_minor" -ge 14 ]; then
    # UCP's put and get protocols too, each forced by UCX_PROTOS: measured,
    # refused for noise, or what UCP ran instead named (over tcp/lo UCP has
    # no put short, put bcopy or get offload: it runs put/am/bcopy and
    # get/am/bcopy there)
    for p in put/offload/short put/offload/bcopy put/offload/zcopy put/am/bcopy \
             get/bcopy get/zcopy get/am/bcopy; do
        expect "... $p: measured, or what UCP ran when it was forced" \
            "^# tcp  $p +(tcp/lo +[0-9]+ sizes|- +UCP cannot run it here: it ran (put|get)/[a-z/]+ over tcp/lo)"
    done
fi
# active messages on every version: measured, or what UCP ran named (UCX
# 1.16's rendezvous rows do not say, as for tag send below)
for p in am/egr/short am/egr/bcopy am/egr/zcopy am/rndv/am am/rndv/put am/rndv/get; do
    if [ "${ucx_built%.*}" = 1.16 ] && [ "${p#am/rndv/}" != "$p" ]; then
        expect "... UCX 1.16: $p is left to UCP's own line, its tables not saying what ran" \
            "^# tcp  $p +(tcp/lo +UCP does not run it|- +UCP cannot run it here): it ran what its tables do not say"
    else
        expect "... $p: measured, or what UCP ran when it was forced" \
            "^# tcp  $p +(tcp/lo +([0-9]+ sizes|UCP does not run it: it ran [a-z/]+ over [a-z/]+ when)|- +UCP cannot run it here: it ran [a-z/]+ over tcp/lo)"
    fi
done
if [ "$ucx_minor" -lt 14 ]; then
    expect "... UCX $ucx_built: put and get not measured, and why" \
        "^# tcp  put and get: not measured, UCX $ucx_built keeps UCP's own lines for them"
fi
for p in rndv/am rndv/put; do
    if [ "${ucx_built%.*}" = 1.16 ]; then
        expect "... UCX 1.16: $p is left to UCP's own line, its tables not saying what ran" \
            "^# tcp  $p +(tcp/lo +UCP does not run it|- +UCP cannot run it here): it ran what its tables do not say"
    else
        expect "... $p: it reads which protocol UCP ran" \
            "^# tcp  $p +(tcp/lo +[0-9]+ sizes|- +UCP cannot run it here: it ran [a-z]+/[a-z]+ over tcp/lo)"
    fi
done

if [ -s "$tmp/ucp-cal.txt" ]; then
    check "... its file is of format 5" grep -qx "protosel-calibration 5" "$tmp/ucp-cal.txt"
fi

# An active message's own line measured through UCP comes before its tag
# twin's: a cheap am/egr/bcopy line (100 ns flat) against egr/bcopy's
# (100 us flat) gives the active-message table am/egr/bcopy past eager
# short, up to its one fragment, while tag send leaves egr/bcopy out.
{ header | sed 's/^protosel-calibration 4$/protosel-calibration 5/'
  echo "ucp-range egr/bcopy tcp/lo host inf 100000 0 100000 0"
  echo "ucp-range am/egr/bcopy tcp/lo host inf 100 0 100 0"; } >"$tmp/am-own.txt"
aenv=(UCX_PSEL_CALIBRATION="$tmp/am-own.txt" UCX_PSEL_TLS=tcp UCX_PSEL_NET_DEVICES=lo)
check "psel_info -e -j --ucp -u m with UCP's own am/egr/bcopy line" \
    env "${aenv[@]}" "$info" -e -j --ucp -u m --same-process
$tables psel-rows "$tmp/out" >"$tmp/am-own.rows"
echo "# active messages: $(paste -sd';' "$tmp/am-own.rows")"
# (psel-rows names an active message's protocols as their tag twins)
check "... am/egr/bcopy takes sizes" grep -q " egr/bcopy " "$tmp/am-own.rows"
check "psel_info -e -j --ucp -u t with the same file" \
    env "${aenv[@]}" "$info" -e -j --ucp -u t --same-process
check "... where tag send leaves egr/bcopy out" bash -c \
    "! $tables psel-rows '$tmp/out' | grep -q ' egr/bcopy '"
check "psel_info -e -x --ucp -u m names the line it took" \
    env "${aenv[@]}" "$info" -e -x --ucp -u m --same-process
expect "... through UCP for am/egr/bcopy" "cost lines: measured on .* through UCP for .*am/egr/bcopy"

# Put lines measured through UCP drive UCP's put table (UCX 1.14 on, where
# the protocol tier maps put): over tcp/lo, hand-made flat lines that make
# put/am/bcopy cheapest at every size, or put/offload/zcopy. A ucx_perftest
# ucp_put_bw pair under the library prints UCP's streamed put table, which
# must be the library's own for the endpoint, and:
#  - am lines, UCP's default UCX_PREFER_OFFLOAD=y: zero-copy at every size
#    (put by active messages needs the target to progress: UCP runs it only
#    where no offload protocol applies, and so does protosel's model);
#  - am lines, UCX_PREFER_OFFLOAD=n: software emulation at every size;
#  - zcopy lines, UCX_PREFER_OFFLOAD=n: zero-copy at every size.
if [ "$ucx_minor" -ge 14 ]; then
    header5() { header | sed 's/^protosel-calibration 4$/protosel-calibration 5/'; }
    { header5
      echo "ucp-range put/am/bcopy tcp/lo host inf 1000 0 1000 0"
      echo "ucp-range put/offload/zcopy tcp/lo host inf 3000 0 3000 0"; } >"$tmp/put-am.txt"
    { header5
      echo "ucp-range put/am/bcopy tcp/lo host inf 3000 0 3000 0"
      echo "ucp-range put/offload/zcopy tcp/lo host inf 1000 0 1000 0"; } >"$tmp/put-zcopy.txt"
    for run in "am y zero-copy" "am n software emulation" "zcopy n zero-copy"; do
        read -r kind prefer want <<<"$run"
        d=$tmp/put-$kind-$prefer; mkdir -p "$d"
        senv=("${uenv[@]}" LD_PRELOAD="$lib" UCX_PSEL_CALIBRATION="$tmp/put-$kind.txt"
              UCX_PREFER_OFFLOAD="$prefer" UCX_WARN_UNUSED_ENV_VARS=n)
        # shellcheck disable=SC2034  # perftest_pair reads it by name
        cenv=("${senv[@]}")
        check "put lines: $kind cheapest, UCX_PREFER_OFFLOAD=$prefer, ucx_perftest ucp_put_bw 64 KiB" \
            perftest_pair "$d" senv cenv -t ucp_put_bw -s 65536 -n 200 -w 20
        absent "... without a warning" "UCX  *(WARN|ERROR) " "$tmp/all"
        expect "... the endpoint takes them" \
            "cost lines: .* through UCP for .*put/" "$d/client"
        check "... UCP's streamed put table is the library's own for the endpoint" \
            $tables compare "$d/client" "$d/client" --no-lanes \
            --title 'ucp_put\*\(multi\) from host memory' \
            --psel-title 'protosel ep_cfg\[[0-9]+\] multi *\| *put, contig host memory'
        cat "$tmp/out"
        grep -A12 'ucp_put\*(multi) from host memory' "$d/client" |
            awk -F'|' '$2 ~ /^ *[0-9]+[KMGT]?(\.\.([0-9]+[KMGT]?|inf))? *$/ {
                d = $3; gsub(/^ +| +$/, "", d); print d }' >"$d/rows"
        echo "# put table: $(paste -sd';' "$d/rows")"
        check "... $want at every size" bash -c \
            "[ -s '$d/rows' ] && ! grep -vqx '$want' '$d/rows'"
    done
fi

tap_done
