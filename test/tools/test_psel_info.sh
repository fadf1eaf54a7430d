#!/usr/bin/env bash
# Integration test of psel_info over this machine's real UCT resources and
# over the fixture dumps: each check prints "ok"/"not ok" (TAP), the script
# fails if any check fails.
set -u
info=${PSEL_INFO:-./src/tools/psel_info}
fixtures=${PSEL_FIXTURES_DIR:?PSEL_FIXTURES_DIR must point at test/fixtures}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/tap.sh"
TAP_FILES=("$tmp/out" "$tmp/err")

# check DESCRIPTION COMMAND...: run it, keeping its output in out/err
check() {
    local desc=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    cat "$tmp/out" "$tmp/err" >"$tmp/all" # UCX logs go to stdout
    result "$desc" $status
}

# has PATTERN [FILE]: the last output (or FILE) matches
has() { grep -q -- "$1" "${2:-$tmp/out}"; }
expect() { # expect DESCRIPTION PATTERN [FILE]
    has "$2" "${3:-$tmp/out}"
    result "$1" $?
}

# live resources: the transports this machine has
check "psel_info -d runs" "$info" -d
cp "$tmp/out" "$tmp/resources"
for tl in self tcp sysv posix; do
    expect "psel_info -d lists $tl" "Transport: $tl"
done
# cma needs ptrace rights over the peer (kernel.yama.ptrace_scope, a
# container's seccomp); UCX leaves it out where it cannot work
has_cma=0
if grep -q "Transport: cma" "$tmp/resources"; then
    has_cma=1
    result "psel_info -d lists cma" 0
else
    skip "psel_info -d lists cma" "this machine has no cma transport (ucx_info -d lists none)"
fi

# default job: resources, lanes and a table covering 0..inf
check "psel_info runs with no option" "$info"
expect "default output has lanes" "roles (score)"
expect "default output has a table ending at inf" '\.\.inf |'
if [ $has_cma = 1 ]; then
    expect "... each protocol's sizes and lanes" '^# rndv/get  *sizes 0\.\.inf  *cma/memory'
else
    skip "... each protocol's sizes and lanes (rndv/get over cma)" "no cma transport"
fi
expect "... or why it does not apply" '^# egr/zcopy  *not applicable: .*has no am_zcopy'

# JSON is valid and carries rows and candidates
check "psel_info -j runs" "$info" -j -a
cp "$tmp/out" "$tmp/json"
check "psel_info -j is valid JSON" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["tables"]) == 3, "one table per buffer type"
for t in doc["tables"]:
    assert t["rows"][-1]["end"] == "inf"
    assert len(t["candidates"]) == 7, "one per built-in protocol"
s = doc["streamed"]
assert s["select_perf"] == "multi" and doc["tables"][0]["select_perf"] == "single"
assert s["rows"][-1]["end"] == "inf" and len(s["candidates"]) == 7
' "$tmp/json"

# streamed sends select on the multi cost: posix alone goes to rendezvous
# by AM at a smaller size when messages stream (both tables printed), on
# the exact crossings; egr/bcopy and rndv/am cost the same there within
# 2% (both copy), so by default eager keeps every size (the switch margin)
check "UCX_PSEL_TLS=posix: eager bcopy and rndv/am tie" env UCX_PSEL_TLS=posix "$info" -e -x
expect "... within the switch margin, eager keeps the sizes" \
    "rndv/am .* (a tie within the 2.0% switch margin, on attribute lines)"
check "... no rendezvous row" bash -c "! grep -q '| rendezvous' '$tmp/out'"
check "UCX_PSEL_TLS=posix, no switch margin: both tables" \
    env UCX_PSEL_TLS=posix UCX_PSEL_SWITCH_MARGIN=0 "$info" -e
cp "$tmp/out" "$tmp/posix"
expect "... the streamed one, titled" '^| streamed *| tag send, contig host memory'
check "... whose rendezvous starts earlier" python3 -c '
import re, sys
starts = [int(m) for m in re.findall(r"^\| *([0-9]+)\.\.inf \| rendezvous", open(sys.argv[1]).read(), re.M)]
assert len(starts) == 2 and starts[1] < starts[0], starts
' "$tmp/posix"

# forced protocols change the table
check "UCX_PSEL_PROTOS=egr/bcopy gives one bcopy row" env UCX_PSEL_PROTOS=egr/bcopy "$info" -e
expect "... which is egr/bcopy 0..inf" '0\.\.inf | eager copy-in copy-out \[egr/bcopy\]'

# transport allow-lists filter the lanes
check "UCX_PSEL_TLS=tcp runs" env UCX_PSEL_TLS=tcp "$info" -e
expect "... its am lane is tcp/lo" '^# *0  tcp/lo '
check "... and no shared memory lane" bash -c "! grep -qE 'sysv|posix|cma' '$tmp/all'"
check "UCX_PSEL_TLS=^cma runs" env 'UCX_PSEL_TLS=^cma' "$info" -e
check "... without rndv/get (cma is the only get_zcopy lane)" bash -c "! grep -q 'rndv/get\]' '$tmp/all'"

# -j with -c and -d: one JSON document, ending with a newline
jsonok() { # jsonok DESCRIPTION STATUS PYTHON-ASSERTS ARGS...: exit STATUS,
          # stdout one JSON object and a newline
    local desc=$1 status=$2 asserts=$3; shift 3
    "$info" "$@" >"$tmp/j.out" 2>"$tmp/j.err"
    local st=$?
    [ $st = "$status" ] &&
        [ "$(tail -c1 "$tmp/j.out" | od -An -c | tr -d ' ')" = '\n' ] &&
        python3 -c "import json, sys; d = json.load(open(sys.argv[1]))
$asserts" "$tmp/j.out"
    result "$desc (exit $st)" $? "$tmp/j.out" "$tmp/j.err"
}
jsonok "-c -j: the variables as JSON" 0 '
c = {v["name"]: v for v in d["config"]}
assert list(d) == ["config"]
assert c["UCX_PSEL_RNDV_THRESH"]["value"] == "auto" and c["UCX_PSEL_RNDV_THRESH"]["doc"]' -c -j
UCX_PSEL_RNDV_THRESH=8k jsonok "-c -j: a set value" 0 '
assert {v["name"]: v["value"] for v in d["config"]}["UCX_PSEL_RNDV_THRESH"] == "8K"' -c -j
jsonok "-d -j: the resources as JSON" 0 '
r = d["resources"]["resources"]
assert list(d) == ["resources"]
lo = [x for x in r if x["tl_name"] == "tcp" and x["dev_name"] == "lo"][0]
assert abs(lo["bw_shared"] / 1048576 - 11.91) < 0.01, lo["bw_shared"]
assert "am_bcopy" in lo["cap_flags"] and lo["max_num_eps"] == 256
assert lo["put.max_bcopy"] == 0 and r[0]["put.max_bcopy"] == "inf"' \
    -d -j --local "$fixtures/000-debian12-vm-ucx1.13.1.txt"
jsonok "-c -d -e -j: one object with all three" 0 '
assert list(d)[:3] == ["config", "resources", "local"] and d["tables"][0]["rows"]' \
    -c -d -e -j --local "$fixtures/000-debian12-vm-ucx1.13.1.txt"
jsonok "-d -e -j with a bad peer: the resources, then the error" 1 '
assert "resources" in d and "messages" in d["error"]' \
    -d -e -j --peer /etc/hostname
jsonok "-e -j on a file of another kind: the error object" 1 '
assert list(d) == ["error"]' -e -j --local /etc/hostname
check "-j --compare-ucx with -d is a usage error" bash -c \
    "'$info' -d -j --compare-ucx '$fixtures/006-debian12-vm-tcp-lo-ucx1.13.1-v1.txt'; [ \$? = 2 ]"

# bad input: config values, missing and garbled files
check "a bad UCX_PSEL_RNDV_THRESH is refused" bash -c "! UCX_PSEL_RNDV_THRESH=fast '$info' -e"
expect "... naming the variable and the forms" "UCX_PSEL_RNDV_THRESH: 'fast'. Expected: memory units" "$tmp/all"
f000=$fixtures/000-debian12-vm-ucx1.13.1.txt
check "an allow-list that matches nothing is refused" bash -c \
    "! UCX_PSEL_TLS=bogus '$info' -e --local '$f000'"
expect "... saying which entry matched nothing, and what there is" \
    "warning: UCX_PSEL_TLS: 'bogus' matches no transport of .*000-debian12-vm-ucx1.13.1.txt (there are: self, tcp, sysv, posix, cma)" "$tmp/err"
expect "... and that the lists leave nothing" \
    "error: UCX_PSEL_TLS=bogus and UCX_PSEL_NET_DEVICES=all leave none of the 6 resources of .*: its transports are self, tcp, sysv, posix, cma, its network devices eth0, lo" "$tmp/err"
check "a device list naming no device here" bash -c \
    "UCX_PSEL_NET_DEVICES=eth9,lo '$info' -e --same-host --local '$f000'"
expect "... is warned about, naming the devices" \
    "warning: UCX_PSEL_NET_DEVICES: 'eth9' matches no network device of .* (there are: eth0, lo)" "$tmp/err"
: >"$tmp/empty.txt"
check "an empty --local file is refused" bash -c "! '$info' -e --local '$tmp/empty.txt'"
expect "... saying it is empty" "empty.txt: the file is empty; the output did not reach it" "$tmp/err"
check "an empty --compare-ucx file is refused" bash -c \
    "! '$info' --compare-ucx '$tmp/empty.txt' --local '$f000'"
expect "... saying it is empty" "empty.txt: no UCX tag-send table: .*this is an empty file" "$tmp/err"
check "a missing --local file is refused" bash -c "! '$info' -e --local /nonexistent/x.txt"
expect "... naming the file and the error" \
    "psel_info: error: /nonexistent/x.txt: cannot open resources (a snapshot or \`ucx_info -d\` text): No such file or directory" "$tmp/err"
check "... not as 'No such element'" bash -c "! grep -q 'No such element' '$tmp/err'"
head -c 700 "$fixtures/000-debian12-vm-ucx1.13.1.txt" >"$tmp/cut.txt"
check "a truncated ucx_info dump is refused" bash -c "! '$info' -e --local '$tmp/cut.txt'"
expect "... naming the block that was cut" \
    "cut.txt:[0-9]*: expected 'error handling:', the last line of a block, in the block of self/memory0 (line [0-9]*): the input was cut" "$tmp/all"

# what-if tables from the real dumps of other machines
for f in 000-debian12-vm-ucx1.13.1.txt 001-azure-hbv3-cx6vf-ucx1.17.txt \
         048-centos8-cx5-fdr56-ucx1.9.txt; do
    check "tables from $f" "$info" -e -x --local "$fixtures/$f"
    expect "... cover 0..inf" '\.\.inf |'
done
check "ConnectX-6 lanes use rc_mlx5 for am" bash -c \
    "'$info' -e --local '$fixtures/001-azure-hbv3-cx6vf-ucx1.17.txt' | grep -E '^# +0  rc_mlx5/mlx5_0:1 +am'"

# every fixture dump imports, whatever its layout
for f in "$fixtures"/0*-*ucx1.*.txt; do
    case $f in *proto-info*|*-v1.txt) continue ;; esac
    check "$(basename "$f") imports" "$info" -d --local "$f"
done

# diagnostics go to stderr; -j keeps stdout JSON, with an error object
check "a file of another kind is refused" bash -c \
    "! '$info' -e --local '$fixtures/027-ucx-pr7950-vulcan04-proto-info.txt'"
expect "... saying what it is and what to run, on stderr" \
    "this is a UCX_PROTO_INFO table.*psel_info --compare-ucx" "$tmp/err"
check "... and nothing on stdout" test ! -s "$tmp/out"
"$info" -j --local "$fixtures/027-ucx-pr7950-vulcan04-proto-info.txt" \
    >"$tmp/json" 2>/dev/null
check "-j on failure prints a JSON error object" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert "this is a UCX_PROTO_INFO table" in doc["error"]["messages"][0]["text"]
' "$tmp/json"

# --compare-ucx: UCX 1.13.1's own tables of this kind of VM
check "--compare-ucx on UCX's v1 lines (tcp/lo)" "$info" --compare-ucx \
    "$fixtures/006-debian12-vm-tcp-lo-ucx1.13.1-v1.txt" \
    --local "$fixtures/000-debian12-vm-ucx1.13.1.txt"
expect "... UCX 1.x's formula over these lanes gives UCX's own threshold" \
    "UCX 1.x's rendezvous threshold over these lanes: 20553 bytes"
expect "... and the v1 row starts there too" "20553\.\.[0-9inf]* *| rndv"
check "--compare-ucx on a v2 table (shared memory)" "$info" --compare-ucx \
    "$fixtures/005-debian12-vm-shm-ucx1.13.1-proto-info.txt" \
    --local "$fixtures/000-debian12-vm-ucx1.13.1.txt"
expect "... over UCX's lanes" "the same lanes (posix/memory cma/memory)"
# on the exact crossings (no switch margin): the rows named below
UCX_PSEL_SWITCH_MARGIN=0 "$info" -j --compare-ucx "$fixtures/027-ucx-pr7950-vulcan04-proto-info.txt" \
    --local "$fixtures/004-rhel7-4xcx5-edr-nohash-ucx1.13.txt" \
    >"$tmp/cmp.json" 2>"$tmp/err"
check "--compare-ucx -j on the rc_mlx5 table: JSON, reasons for each difference" \
    python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["ucx_protocols"] == 2 and doc["lanes"] == ["rc_mlx5/mlx5_0:1"]
assert doc["ranges"][0]["start"] == 0 and doc["ranges"][-1]["end"] == "inf"
differ = [r for r in doc["ranges"] if r["differs"] != "no"]
assert differ, "the tables differ somewhere"
for r in differ:
    assert r["reasons"], "no reason for %d..%s" % (r["start"], r["end"])
# the marks say what differs: egr/short against egr/zcopy is the same class
cls = lambda p: p.split("/")[0]
for r in doc["ranges"]:
    u, p = r["ucx"]["protocol"], r["protosel"]["protocol"]
    want = ("class" if cls(u) != cls(p) else "protocol" if u != p else
            r["differs"] if r["differs"] in ("lanes", "no") else "?")
    assert r["differs"] == want, (r["start"], u, p, r["differs"])
kinds = {(r["ucx"]["protocol"], r["protosel"]["protocol"]): r["differs"]
         for r in doc["ranges"]}
assert kinds[("egr/short", "egr/zcopy")] == "protocol", kinds
assert kinds[("egr/zcopy", "rndv/get")] == "class", kinds
' "$tmp/cmp.json"
UCX_PSEL_SWITCH_MARGIN=0 "$info" --compare-ucx "$fixtures/027-ucx-pr7950-vulcan04-proto-info.txt" \
    --local "$fixtures/004-rhel7-4xcx5-edr-nohash-ucx1.13.txt" >"$tmp/cmp.txt" 2>&1
expect "... the text marks another protocol of the same class '+'" \
    '^# + 305\.\.2007 *| egr/short .*| egr/zcopy' "$tmp/cmp.txt"
expect "... and another class '*'" '^# \* 11906\.\.17297 *| egr/zcopy .*| rndv/get' "$tmp/cmp.txt"
expect "... with a legend saying so" \
    "'\*': another protocol class (eager or rendezvous; by the transport or by active messages), '+': another protocol of the same class, '~': the same protocol over other lanes" "$tmp/cmp.txt"
# --compare-ucx with --peer: protosel's side over the peer's resources
check "--compare-ucx --peer: a peer without UCX's lanes is refused" bash -c \
    "! '$info' --compare-ucx '$fixtures/006-debian12-vm-tcp-lo-ucx1.13.1-v1.txt' \
       --local '$fixtures/000-debian12-vm-ucx1.13.1.txt' \
       --peer '$fixtures/003-centos7-cx-edr-ucx1.6.txt' 2>'$tmp/err2'"
expect "... naming the peer's file" \
    "among the peer's resources (.*003-centos7-cx-edr-ucx1.6.txt)" "$tmp/err2"
# the peer's tcp/lo at a tenth of the bandwidth: its own rows
sed 's|bandwidth: 11.91/ppn + 0.00 MB/sec|bandwidth: 1.19/ppn + 0.00 MB/sec|' \
    "$fixtures/000-debian12-vm-ucx1.13.1.txt" >"$tmp/slow-peer.txt"
check "--compare-ucx --peer with a slower peer" "$info" -j --compare-ucx \
    "$fixtures/006-debian12-vm-tcp-lo-ucx1.13.1-v1.txt" \
    --local "$fixtures/000-debian12-vm-ucx1.13.1.txt" --peer "$tmp/slow-peer.txt"
cp "$tmp/out" "$tmp/cmp-peer.json"
"$info" -j --compare-ucx "$fixtures/006-debian12-vm-tcp-lo-ucx1.13.1-v1.txt" \
    --local "$fixtures/000-debian12-vm-ucx1.13.1.txt" >"$tmp/cmp-self.json" 2>/dev/null
check "... names the peer's resources and selects over them" python3 -c '
import json, sys
peer, same = (json.load(open(f)) for f in sys.argv[1:3])
assert peer["peer_resources"].endswith("slow-peer.txt"), peer["peer_resources"]
assert same["peer_resources"] == same["resources"]
assert peer["ucx_v1_rndv_thresh"] != same["ucx_v1_rndv_thresh"], \
    "the peer changed nothing"
' "$tmp/cmp-peer.json" "$tmp/cmp-self.json"
check "--compare-ucx refuses a ucx_info -d dump" bash -c \
    "! '$info' --compare-ucx '$fixtures/000-debian12-vm-ucx1.13.1.txt' 2>'$tmp/err2'"
expect "... saying what it got" "no UCX tag-send table.*ucx_info -d" "$tmp/err2"

# --compare-ucx -u r, -u m: UCX 1.13.1's put, get and active-message tables
# of this kind of VM (ucx_perftest's buffers, allocated by posix)
f007=$fixtures/007-debian12-vm-shm-ucx1.13.1-put-get-am-proto-info.txt
f008=$fixtures/008-debian12-vm-tcp-lo-ucx1.13.1-put-get-am-proto-info.txt
check "--compare-ucx -u r on shared memory" "$info" -u r --compare-ucx "$f007" \
    --local "$f000" --same-host
expect "... UCX's put table" "^# UCX (1.13.1, protocols v2) remote memory write by ucp_put\*() from host memory"
expect "... UCX's put short into allocated memory against protosel's active messages, and why" \
    '^# \* 0\.\.33271 *| put/offload/short *posix/memory *| put/am/bcopy *posix/memory'
expect "... why: no rma lane over posix" "why: protosel's put/offload/short does not apply here: no rma lane"
expect "... the get table is the streamed one, against protosel's streamed table" \
    "streamed operations: protosel's table on the multi cost"
check "--compare-ucx -u m on shared memory" "$info" -u m --compare-ucx "$f007" \
    --local "$f000" --same-host
expect "... the same eager short, row for row" '^#   0\.\.92 *| am/egr/short *posix/memory *| am/egr/short *posix/memory'
expect "... UCX's rendezvous named as protosel's" '| am/rndv/get *cma/memory'
check "--compare-ucx -u rm -j on tcp/lo: one member per operation" \
    "$info" -u rm -j --compare-ucx "$f008" --local "$f000" --same-host
cp "$tmp/out" "$tmp/cmp-ops.json"
check "... JSON with put, get and am_send, each covering 0..inf" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert sorted(doc) == ["am_send", "get", "put"], sorted(doc)
assert doc["get"]["streamed"] and not doc["put"]["streamed"]
for op, prefix in (("put", "put/"), ("get", "get/"), ("am_send", "am/")):
    r = doc[op]["ranges"]
    assert r[0]["start"] == 0 and r[-1]["end"] == "inf", op
    for x in r:
        assert x["ucx"]["protocol"].startswith(prefix), (op, x["ucx"])
        assert x["protosel"]["protocol"].startswith(prefix), (op, x["protosel"])
assert doc["put"]["ranges"][0]["ucx"]["protocol"] == "put/am/bcopy"
assert [x["ucx"]["protocol"] for x in doc["am_send"]["ranges"]][:1] == ["am/egr/short"]
' "$tmp/cmp-ops.json"
check "--compare-ucx -u r on a file without put tables is refused" bash -c \
    "! '$info' -u r --compare-ucx '$fixtures/005-debian12-vm-shm-ucx1.13.1-proto-info.txt' --local '$f000' 2>'$tmp/err2'"
expect "... saying what prints one" "no UCX put table from host memory: expected what UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_perftest -t ucp_put_bw" "$tmp/err2"

# snapshot round trip through the tool
# (the table of the resources saved: another run would time its copies anew)
check "psel_info --save writes a snapshot" "$info" -e --save "$tmp/snap.txt"
grep -E '^(\||# +[0-9])' "$tmp/out" >"$tmp/saved-table"
check "the snapshot loads and gives the same table" bash -c \
    "diff '$tmp/saved-table' <('$info' -e --local '$tmp/snap.txt' --same-host | grep -E '^(\\||# +[0-9])')"
expect "... with this host's timed copies" "^copy_bw = [0-9]" "$tmp/snap.txt"
expect "... and UCT's figure beside a timed one" "^bw_advertised = [1-9]" "$tmp/snap.txt"
check "psel_info -e on the snapshot" "$info" -e --local "$tmp/snap.txt" --same-host
expect "... takes the snapshot's timed copies" \
    "memory copies at [0-9]* MB/s (timed on the snapshot's host, as were the bandwidths of its transports that copy there; UCX_PSEL_BCOPY_BW=auto)"
check "psel_info -e on a ucx_info -d dump" "$info" -e --local "$fixtures/000-debian12-vm-ucx1.13.1.txt"
expect "... takes UCX's estimate: a dump has no timed copies" \
    "memory copies at 5800 MB/s (UCX's estimate: no copies were timed for these resources; UCX_PSEL_BCOPY_BW=auto)"

# -u: the operations, as ucx_info's letters; tag send alone by default
check "psel_info -e prints tag send only" "$info" -e
! has '^| ep .*| \(put\|get\|am send\), ' && ! has '^# put/'
result "... no put, get or am table, no put/get/am protocol listed" $?
ib2="$fixtures/004-rhel7-4xcx5-edr-nohash-ucx1.13.txt"
check "psel_info -u trm on a two-rail ConnectX dump, two rails for put and get" \
    env UCX_PSEL_SWITCH_MARGIN=0 UCX_PSEL_MAX_RMA_LANES=2 "$info" -u trm --local "$ib2"
for op in "tag send" put get "am send"; do
    expect "... a table of $op" "^| ep  *| $op, contig host memory"
done
expect "... put zero-copy on both rails, by bandwidth" \
    '^| [0-9]*\.\.inf | put zero-copy \[put/offload/zcopy\] *| rc_mlx5/mlx5_0:1 50% + rc_mlx5/mlx5_1:1 50% |'
expect "... small puts by put short on the rma lane (0.100 us / (0.245287 - 0.040430) ns/B = 488.1 B)" \
    '^|   0\.\.488 | put short \[put/offload/short\] *| rc_mlx5/mlx5_0:1 *|'
expect "... small gets by get/bcopy on one rail, to the same crossing" \
    '^|   0\.\.488 | get copy-out \[get/bcopy\] *| rc_mlx5/mlx5_0:1 *|'
expect "... the lane list names the rma lane" '^#  *0  rc_mlx5/mlx5_0:1 .* rma([0-9.e+]*)  '
expect "... active messages by UCP's am/* protocols" '^| [0-9]*\.\.inf | active message rendezvous, zero-copy read from remote \[am/rndv/get\]'
expect "... streamed puts named as ucx_perftest's test" '^# streamed sends (multi cost, as ucp_put_bw):'
check "psel_info -u r on the same dump: one rail for put and get by default, as UCX_MAX_RMA_RAILS" \
    env UCX_PSEL_SWITCH_MARGIN=0 "$info" -u r --local "$ib2"
expect "... put zero-copy on one HCA" '^| [0-9]*\.\.inf | put zero-copy \[put/offload/zcopy\] *| rc_mlx5/mlx5_0:1 *|'
check "psel_info -u t on the same dump" "$info" -u t --local "$ib2"
! has ' rma(' && has ' rma_bw('
result "... a tag-send endpoint selects no rma lane" $?
check "psel_info -j -u trm" env UCX_PSEL_SWITCH_MARGIN=0 "$info" -j -u trm --local "$ib2"
cp "$tmp/out" "$tmp/ops.json"
check "... every operation's table covers 0..inf" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
ops = [t["operation"] for t in doc["tables"]]
assert ops == ["tag send", "put", "get", "am send"], ops
for t in doc["tables"]:
    rows = t["rows"]
    assert rows[0]["start"] == 0 and rows[-1]["end"] == "inf", t["operation"]
    for a, b in zip(rows, rows[1:]):
        assert b["start"] == a["end"] + 1, (t["operation"], a, b)
    names = [c["protocol"] for c in t["candidates"]]
    prefix = {"tag send": ("egr/", "rndv/"), "put": ("put/",),
              "get": ("get/",), "am send": ("am/",)}[t["operation"]]
    assert all(n.startswith(prefix) for n in names), (t["operation"], names)
' "$tmp/ops.json"
check "psel_info -u ra says that atomics keep UCP's lines" "$info" -u ra
expect "... in one line" "^# atomics: protosel models none; UCP's own lines select them"
check "psel_info -u a alone is refused" bash -c "! '$info' -u a"
expect "... saying what to add" "names no operation protosel selects for: add t, r or m" "$tmp/err"
check "psel_info -u tz is refused" bash -c "! '$info' -u tz"
expect "... naming the letter and where" "unknown feature 'z' at position 2" "$tmp/err"
check "psel_info -u r --ucx-env is refused" bash -c "! '$info' -u r --ucx-env"
expect "... --ucx-env covers tag send only" "cover tag send\( only\)*; run them without -u" "$tmp/err"

# config listing
check "psel_info -c lists the variables" "$info" -c
expect "... with documentation" "UCX_PSEL_RNDV_PERF_DIFF"

echo "psel_info: $((n - failed)) passed, $failed failed"
tap_done
