#!/usr/bin/env bash
# compare_ucx_tables.sh: print protosel's tag-send selection table next to
# UCX's own (proto v2, UCX_PROTO_INFO) for the same transports on this machine.
#
#   bench/compare_ucx_tables.sh [TLS-SET...]
#
# Default sets: all  posix,cma  sysv,cma  tcp.
# UCX side:      UCX_TLS=<set> UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_info -e -u t
#                (a loopback endpoint inside one process)
# protosel side: UCX_PSEL_TLS=<set> psel_info -e --same-process (and -j),
#                the matching peer: same process, so `self` applies.
# PSEL_BUILD_DIR selects the build tree (default: build; run ./dev.sh build).
#
# For each set: the merged size ranges of both tables with the protocol class
# each tool picks ('*' where they differ), both lane lists, and the share of
# 64 log-spaced sizes (1 B .. 64 MiB) where both pick the same class.
# A report, not a test: exit 0 unless a tool is missing (exit 1).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PSEL_BUILD_DIR:-build}
case $build_dir in /*) ;; *) build_dir=$top/$build_dir ;; esac
psel_info=$build_dir/src/tools/psel_info

if ! command -v ucx_info >/dev/null 2>&1; then
    echo "compare_ucx_tables: ucx_info not found (Debian: apt-get install ucx-utils)" >&2
    exit 1
fi
if [ ! -x "$psel_info" ]; then
    echo "compare_ucx_tables: $psel_info not found; run ./dev.sh build or set PSEL_BUILD_DIR" >&2
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "compare_ucx_tables: python3 not found (Debian: apt-get install python3)" >&2
    exit 1
fi

if [ $# -gt 0 ]; then
    sets=("$@")
else
    sets=(all posix,cma sysv,cma tcp)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The report's parser and printer; reads the three captured outputs.
cat >"$tmp/compare.py" <<'PY'
import json, math, re, sys

tls, ucx_path, psel_text_path, psel_json_path = sys.argv[1:5]
TITLE = "tagged message by ucp_tag_send*() from host memory"
INF = float("inf")

def read(path):
    with open(path, errors="replace") as f:
        return f.read()

def strip_prefix(line):
    # "[1795349747.605390] [vm:29181:0]   | ..." or "# | ..."
    line = re.sub(r"^\[[^\]]*\]\s*\[[^\]]*\]\s*", "", line)
    line = re.sub(r"^#\s?", "", line)
    return line.strip()

def ucx_table(text):
    """Rows (start, end, description, lanes) of the first tag-send table."""
    rows, in_table = [], False
    for raw in text.splitlines():
        line = strip_prefix(raw)
        if not in_table:
            in_table = line.startswith("|") and TITLE in line
            continue
        if line.startswith("+"):
            if rows:
                break
            continue
        m = re.match(r"^\|\s*(\d+)\.\.(\d+|inf)\s*\|\s*(.*?)\s*\|\s*(.*?)\s*\|$", line)
        if m is None:
            break
        end = INF if m.group(2) == "inf" else int(m.group(2))
        rows.append((int(m.group(1)), end, m.group(3), m.group(4)))
    return rows

def ucx_lanes(text):
    lanes = []
    for raw in text.splitlines():
        line = strip_prefix(raw)
        m = re.match(r"^lane\[(\d+)\]:\s*\d+:(\S+?)(?:\.\d+)?\s.*->\s*\S+\s*(.*)$", line)
        if m:
            lanes.append("lane[%s] %-14s %s" % (m.group(1), m.group(2), m.group(3)))
    return lanes

def psel_lanes(text):
    lanes = []
    for line in text.splitlines():
        m = re.match(r"^#\s+(\d+)\s+(\S+)\s+(.*?)\s+(-?\d+ ns.*)$", line)
        if m:
            lanes.append("lane[%s] %-14s %s" % (m.group(1), m.group(2), m.group(3)))
    return lanes

def psel_table(text):
    data = json.loads(text)
    rows = []
    for r in data["tables"][0]["rows"]:
        end = INF if r["end"] == "inf" else int(r["end"])
        rows.append((int(r["start"]), end, r["protocol"], r["lanes"]))
    return rows

def ucx_class(desc):
    """protosel name of a UCX protocol description, or the description."""
    d = re.sub(r"^\(\?\)\s*", "", desc.strip())
    low = d.lower()
    low = re.sub(r"^multi-frag(ment)?\s+", "", low)
    if low.startswith("rendezvous"):
        if "read from remote" in low:
            return "rndv/get"
        if "write to remote" in low:
            return "rndv/put"
        if "active message" in low or "fragments" in low:
            return "rndv/am"
    elif low.startswith("eager"):
        if low == "eager short":
            return "egr/short"
        if "zero-copy" in low:
            return "egr/zcopy"
        if "copy-in copy-out" in low or "bcopy" in low:
            return "egr/bcopy"
    return d

def lookup(rows, size):
    for row in rows:
        if row[0] <= size <= row[1]:
            return row
    return None

def fmt_end(end):
    return "inf" if end == INF else str(end)

print("=" * 78)
print("UCX_TLS=%s (UCX) vs UCX_PSEL_TLS=%s (protosel)" % (tls, tls))
print("=" * 78)
try:
    urows = ucx_table(read(ucx_path))
except OSError:
    urows = []
try:
    prows = psel_table(read(psel_json_path))
except (OSError, ValueError, KeyError, IndexError):
    prows = []
if not urows:
    print("  UCX printed no '%s' table; its output:" % TITLE)
    for line in read(ucx_path).splitlines()[-15:]:
        print("    " + line)
if not prows:
    print("  psel_info printed no table; its output:")
    for line in read(psel_text_path).splitlines()[-15:]:
        print("    " + line)
if not urows or not prows:
    print("  (no comparison for this set)\n")
    sys.exit(0)

starts = sorted({r[0] for r in urows} | {r[0] for r in prows})
merged = []
for i, s in enumerate(starts):
    e = starts[i + 1] - 1 if i + 1 < len(starts) else INF
    merged.append((s, e))

cells = []
for s, e in merged:
    u, p = lookup(urows, s), lookup(prows, s)
    ucls = ucx_class(u[2]) if u else "-"
    pcls = p[2] if p else "-"
    cells.append(("*" if ucls != pcls else "", "%d..%s" % (s, fmt_end(e)),
                  ucls, "(%s)" % u[3] if u else "", pcls,
                  "(%s)" % p[3] if p else ""))
head = ("", "size", "UCX", "lanes", "protosel", "lanes")
w = [max(len(c[i]) for c in cells + [head]) for i in range(6)]
fmt = "  %%-1s %%%ds | %%-%ds %%-%ds | %%-%ds %%s" % tuple(w[1:5])
print((fmt % head).rstrip())
print("  " + "-" * (sum(w[1:]) + 10))
for c in cells:
    print((fmt % c).rstrip())
print("  ('*': the tools pick different protocol classes)")

print("\n  UCX rows as printed:")
for s, e, d, l in urows:
    print("    %10s | %-45s | %s" % ("%d..%s" % (s, fmt_end(e)), d, l))
print("\n  UCX lanes:")
for l in ucx_lanes(read(ucx_path)) or ["(none found)"]:
    print("    " + l)
print("  protosel lanes:")
for l in psel_lanes(read(psel_text_path)) or ["(none found)"]:
    print("    " + l)

# 64 points evenly spaced on the log axis (the smallest round to the same
# size: they still stand for their share of the axis)
sizes = [int(round(2 ** (26.0 * i / 63))) for i in range(64)]
same, diff = 0, []
for x in sizes:
    u, p = lookup(urows, x), lookup(prows, x)
    if u and p and ucx_class(u[2]) == p[2]:
        same += 1
    elif x not in diff:
        diff.append(x)
total = len(sizes)
print("\n  summary %s: same protocol class at %d/%d log-spaced sizes "
      "(1 B..64 MiB) = %.0f%%%s\n" %
      (tls, same, total, 100.0 * same / total,
       "; differ at %s B" % ", ".join(str(x) for x in diff) if diff else ""))
PY

ucx_env=(UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y)
echo "protosel vs UCX $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -n1): tag-send, contig host memory, loopback endpoint in one process"
echo "psel_info: $psel_info"
echo
for set in "${sets[@]}"; do
    : >"$tmp/ucx.txt"; : >"$tmp/psel.txt"; : >"$tmp/psel.json"
    if ! env "${ucx_env[@]}" UCX_TLS="$set" timeout 60 ucx_info -e -u t \
            >"$tmp/ucx.txt" 2>&1; then
        echo "note: 'UCX_TLS=$set ucx_info -e -u t' failed (exit status above 0 or timeout)" >&2
    fi
    if ! UCX_PSEL_TLS="$set" timeout 60 "$psel_info" -e --same-process \
            >"$tmp/psel.txt" 2>&1; then
        echo "note: 'UCX_PSEL_TLS=$set psel_info -e --same-process' failed" >&2
    fi
    if ! UCX_PSEL_TLS="$set" timeout 60 "$psel_info" -j --same-process \
            >"$tmp/psel.json" 2>"$tmp/psel.err"; then
        echo "note: 'UCX_PSEL_TLS=$set psel_info -j --same-process' failed" >&2
    fi
    timeout 60 python3 "$tmp/compare.py" "$set" "$tmp/ucx.txt" "$tmp/psel.txt" \
        "$tmp/psel.json" || echo "note: could not compare set '$set'" >&2
done
exit 0
