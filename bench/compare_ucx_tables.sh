#!/usr/bin/env bash
# compare_ucx_tables.sh: print protosel's tag-send selection table next to
# UCX's own (proto v2, UCX_PROTO_INFO) for the same transports on this machine.
#
#   bench/compare_ucx_tables.sh [TLS-SET...]
#
# Default sets: all  posix,cma  sysv,cma  tcp.
# UCX side:      UCX_TLS=<set> UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_info -e -u t
#                (a loopback endpoint inside one process)
# protosel side: UCX_PSEL_TLS=<set> psel_info -e --same-process, the matching
#                peer: same process, so `self` applies.
# PSEL_BUILD_DIR selects the build tree (default: build; run ./dev.sh build).
#
# For each set, the two tables side by side with the reasons where they
# differ (psel_info --compare-ucx, the one home of that comparison), then
# the agreement at 64 log-spaced sizes (1 B .. 64 MiB) and at every
# boundary (test/tools/ucx_tables.py compare, the parser the tests use).
# A report, not a test: exit 0 unless a tool is missing (exit 1).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PSEL_BUILD_DIR:-build}
case $build_dir in /*) ;; *) build_dir=$top/$build_dir ;; esac
psel_info=$build_dir/src/tools/psel_info
tables=$top/test/tools/ucx_tables.py

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

echo "protosel vs UCX $(ucx_info -v 2>/dev/null | sed -n 's/^# \(Library version: \|Version \)//p' | head -n1): tag-send, contig host memory, loopback endpoint in one process"
echo "psel_info: $psel_info"
for set in "${sets[@]}"; do
    echo
    echo "== UCX_TLS=$set"
    if ! env UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y UCX_TLS="$set" timeout 60 ucx_info -e -u t \
            >"$tmp/ucx.txt" 2>&1; then
        echo "note: 'UCX_TLS=$set ucx_info -e -u t' failed (exit status above 0 or timeout)"
        tail -n 5 "$tmp/ucx.txt" | sed 's/^/    /'
        continue
    fi
    UCX_PSEL_TLS="$set" timeout 60 "$psel_info" -e --same-process --compare-ucx "$tmp/ucx.txt" ||
        echo "note: 'UCX_PSEL_TLS=$set psel_info -e --same-process --compare-ucx' failed"
    if UCX_PSEL_TLS="$set" timeout 60 "$psel_info" -e -j --same-process >"$tmp/psel.json" 2>"$tmp/psel.err"; then
        echo "# agreement at log-spaced sizes and every boundary (ucx_tables.py compare):"
        timeout 60 python3 "$tables" compare "$tmp/psel.json" "$tmp/ucx.txt" | sed 's/^/#   /' || true
    else
        echo "note: 'UCX_PSEL_TLS=$set psel_info -e -j --same-process' failed: $(tail -n 1 "$tmp/psel.err")"
    fi
done
exit 0
