#!/usr/bin/env python3
"""Compare protosel's tag-send table with the one stock UCP prints.

    ucx_tables.py compare PSEL UCX [--sizes N] [--title REGEX] [--protosel]
                          [--psel-title REGEX] [--rndv-any-lanes] [--no-lanes]
    ucx_tables.py psel-rows PSEL
    ucx_tables.py ucx-rows UCX [--title REGEX]

PSEL is `psel_info -e -j` output (JSON) or text holding a protosel table
(psel_info -e, or the `protosel ep_cfg[N]` table libprotosel_ucx.so prints
with UCX_PSEL_PROTO_INFO=y). UCX is output holding UCP's UCX_PROTO_INFO=y
tables; the first table whose title matches --title (default: the plain
`ucp_tag_send*()` one) is used; with --protosel that table is one of
protosel's (such as the `protosel ep_cfg[N]` one). --psel-title picks
the table of PSEL when it is text (default: the first contig tag-send one). Log prefixes ("[time] [host:pid:tid]") are
ignored.

`compare` checks, at N log-spaced sizes (default 64) from 1 B to 64 MiB and
on both sides of every protosel boundary: the protocol class (egr/short,
egr/bcopy, egr/zcopy, rndv) and the lanes. A UCP rendezvous row names the
scheme its sender expects at the row's first size only (the receiver picks
per message), so the scheme (rndv/get, rndv/put, rndv/am) is compared at
that size, the class elsewhere. It also compares the rows themselves
(adjacent rows of one class merged). --rndv-any-lanes leaves out the lanes
of rendezvous rows: an active message's rendezvous data path is chosen by
UCP's receiver in a selection of its own; --no-lanes leaves out the lanes
of every row (a put's rma lane is chosen by the peer's memory key, which
protosel does not see). An active-message table's protocols (am/egr/short)
are compared as their tag twins, put and get protocols by UCP's words for
them ("short", "copy-in", "software emulation"). Prints a report;
exit status 1 on any difference, 2 on unreadable input.

`psel-rows` and `ucx-rows` print the rows read: START END PROTOCOL LANES.
"""
import json
import math
import re
import sys

PREFIX = re.compile(r"^\[[^]]*\]\s*\[[^]]*\]\s*")
LANE = re.compile(r"[A-Za-z0-9_]+/[A-Za-z0-9_:.\-]+")
INF = 2 ** 64 - 1


def size_of(text):
    text = text.strip()
    if text == "inf":
        return INF
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if text and text[-1] in mult:
        return int(text[:-1]) * mult[text[-1]]
    return int(text)


def ucx_class(desc):
    """UCP's description of a row -> protosel's protocol name."""
    desc = desc.strip()
    desc = re.sub(r"^\(\?\)\s*", "", desc)
    # UCX 1.16 on names the multi-fragment variants so
    desc = re.sub(r"^multi-frag\s+", "", desc)
    # the active-message table's eager rows say what they do, not "eager"
    if desc in ("eager short", "short"):
        return "egr/short"
    if desc in ("eager copy-in copy-out", "copy-in"):
        return "egr/bcopy"
    if desc in ("eager zero-copy copy-out", "zero-copy"):
        return "egr/zcopy"
    if desc.startswith("rendezvous"):
        if "read from remote" in desc:
            return "rndv/get"
        if "write to remote" in desc:
            return "rndv/put"
        if ("copy-in copy-out" in desc or "active messages" in desc or
                desc == "rendezvous zero-copy"):
            return "rndv/am"   # rndv/am/bcopy; from 1.16 also rndv/am/zcopy
        return "rndv/?"
    return desc.replace(" ", "_")


# protosel's put and get protocols, as UCP describes them in its tables
RMA_DESC = {
    "put/offload/short": "short",
    "put/offload/bcopy": "copy-in",
    "put/offload/zcopy": "zero-copy",
    "put/am/bcopy": "software emulation",
    "get/bcopy": "copy-out",
    "get/zcopy": "zero-copy",
    "get/am/bcopy": "software emulation",
}


def psel_class(name):
    """protosel's protocol name -> the name its UCP row compares as."""
    if name in RMA_DESC:
        return ucx_class(RMA_DESC[name])
    # an active-message table names UCP's protocols (am/egr/short); UCP's
    # rows say what they do, as the tag table's
    return re.sub(r"^am/", "", name)


def lanes_of(text):
    return tuple(sorted(set(LANE.findall(text))))


def table_rows(lines, title_re, psel):
    """Rows of the first text table whose title line matches title_re."""
    rows, on, seen_body = [], False, False
    for line in lines:
        line = PREFIX.sub("", line.rstrip("\n"))
        if not line.startswith("|") and not line.startswith("+"):
            if on and seen_body:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not on:
            # UCX 1.13 titles a table on one line of two cells, 1.22 on
            # two lines of one cell each
            if re.search(title_re, line):
                on = True
            continue
        if line.startswith("+"):
            if seen_body:
                break
            continue
        m = re.match(r"^(\d+[KMGT]?)(?:\.\.(\d+[KMGT]?|inf))?$", cells[0])
        if not m or len(cells) < 2:
            continue
        seen_body = True
        start = size_of(m.group(1))
        end = size_of(m.group(2)) if m.group(2) else start
        if psel:
            pm = re.search(r"\[([a-z]+(?:/[a-z]+)+)\]", cells[1])
            proto = psel_class(pm.group(1)) if pm else cells[1]
        else:
            proto = ucx_class(cells[1])
        rows.append((start, end, proto, lanes_of(cells[2] if len(cells) > 2 else "")))
    return rows


PSEL_TITLE = r"\| *(ep|protosel[^|]*) *\| *tag send, contig host memory"


def read_psel(path, title=PSEL_TITLE):
    text = open(path).read()
    try:
        doc = json.loads(text)
    except ValueError:
        return table_rows(text.splitlines(), title, True)
    rows = []
    for r in doc["tables"][0]["rows"]:
        end = INF if r["end"] in (None, "inf") else int(r["end"])
        proto = psel_class(r["protocol"])
        rows.append((int(r["start"]), end, proto, lanes_of(r.get("lanes", ""))))
    return rows


def merge(rows, key):
    out = []
    for start, end, proto, lanes in rows:
        k = key(proto)
        if out and out[-1][2] == k and out[-1][1] + 1 == start:
            out[-1] = (out[-1][0], end, k, out[-1][3])
        else:
            out.append((start, end, k, lanes))
    return out


def cls(proto):
    return "rndv" if proto.startswith("rndv") else proto


def find(rows, size):
    for i, (start, end, proto, lanes) in enumerate(rows):
        if start <= size <= end:
            return i, rows[i]
    return None, None


def compare(psel_path, ucx_path, nsizes, title, second_psel, psel_title,
            rndv_any_lanes=False, no_lanes=False):
    psel = read_psel(psel_path, psel_title)
    ucx = table_rows(open(ucx_path).read().splitlines(), title, second_psel)
    if not psel or not ucx:
        print("cannot read a table: %d protosel rows (%s), %d UCP rows (%s)"
              % (len(psel), psel_path, len(ucx), ucx_path))
        return 2
    sizes = {int(round(2 ** (k * 26.0 / (nsizes - 1)))) for k in range(nsizes)}
    for start, _, _, _ in psel[1:]:
        sizes.update({start - 1, start})
    bad = 0
    for size in sorted(sizes):
        _, p = find(psel, size)
        ui, u = find(ucx, size)
        if p is None or u is None:
            print("size %d: no row (protosel %s, UCP %s)" % (size, p, u))
            bad += 1
            continue
        want = p[2] if (u[2].startswith("rndv") and size == u[0]) else cls(p[2])
        got = u[2] if (u[2].startswith("rndv") and size == u[0]) else cls(u[2])
        lanes_differ = p[3] != u[3] and not no_lanes and \
            not (rndv_any_lanes and got.startswith("rndv"))
        if want != got or lanes_differ:
            print("size %d: protosel %s on %s, UCP %s on %s"
                  % (size, want, "+".join(p[3]), got, "+".join(u[3])))
            bad += 1
    mp, mu = merge(psel, cls), merge(ucx, cls)
    exact = [(a, b, c) for a, b, c, _ in mp] == [(a, b, c) for a, b, c, _ in mu]
    print("%d sizes compared, %d differ; rows %s: protosel %s, UCP %s"
          % (len(sizes), bad, "equal" if exact else "DIFFER",
             " ".join("%d..%s:%s" % (a, "inf" if b == INF else b, c) for a, b, c, _ in mp),
             " ".join("%d..%s:%s" % (a, "inf" if b == INF else b, c) for a, b, c, _ in mu)))
    return 0 if (bad == 0 and exact) else 1


def main(argv):
    # UCX 1.13 writes "ucp_tag_send*()", later releases "ucp_tag_send*"
    title = r"ucp_tag_send\*(\(\))? from host memory"
    args, nsizes, second_psel, psel_title = [], 64, False, PSEL_TITLE
    rndv_any_lanes = no_lanes = False
    i = 1
    while i < len(argv):
        if argv[i] == "--sizes":
            nsizes = int(argv[i + 1])
            i += 2
        elif argv[i] == "--psel-title":
            psel_title = argv[i + 1]
            i += 2
        elif argv[i] == "--protosel":
            second_psel = True
            i += 1
        elif argv[i] == "--rndv-any-lanes":
            rndv_any_lanes = True
            i += 1
        elif argv[i] == "--no-lanes":
            no_lanes = True
            i += 1
        elif argv[i] == "--title":
            title = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) == 3 and args[0] == "compare":
        return compare(args[1], args[2], nsizes, title, second_psel, psel_title,
                       rndv_any_lanes, no_lanes)
    if len(args) == 2 and args[0] in ("psel-rows", "ucx-rows"):
        if args[0] == "psel-rows":
            rows = read_psel(args[1])
        else:
            rows = table_rows(open(args[1]).read().splitlines(), title, False)
        for start, end, proto, lanes in rows:
            print(start, "inf" if end == INF else end, proto, "+".join(lanes))
        return 0 if rows else 2
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
