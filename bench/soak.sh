#!/usr/bin/env bash
# Soak and leak runs of protosel's data path, longer than make check's.
#
#   bench/soak.sh [--cycles N] [--valgrind] [--build DIR]
#
#  - endpoint cycles: test_soak_ep with N (default 10000) connect/disconnect
#    cycles per transport (posix, tcp) between two processes; prints both
#    sides' RSS and open fds after a tenth of the cycles and at the end;
#  - --valgrind: the live tests (test_tag_live, test_ep_pending,
#    test_rndv_faults, test_soak_ep with 200 cycles) under valgrind memcheck,
#    children included; a run is clean when valgrind reports no error
#    (--error-exitcode) and the test passes (RSS is not judged there:
#    valgrind holds freed blocks back). Slow: a minute.
# A benchmark: it prints figures and says which run failed; it does not
# decide on speed. Figures are in bench/README.md, "Soak under faults".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
cycles=10000
valgrind=0
while [ $# -gt 0 ]; do
    case $1 in
    --cycles)   cycles=${2:?}; shift ;;
    --valgrind) valgrind=1 ;;
    --build)    build=${2:?}; shift ;;
    -h|--help)  sed -n '2,14p' "$0"; exit 0 ;;
    *)          echo "soak: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
tests=$build/test/gtest-c
[ -x "$tests/test_soak_ep" ] || {
    echo "soak: $tests/test_soak_ep is missing: build with ./dev.sh test first" >&2
    exit 1
}
export UCX_PSEL_CALIBRATION=none PSEL_TOP_SRCDIR=$top
status=0

echo "# endpoint cycles: $cycles per transport"
PSEL_SOAK_CYCLES=$cycles timeout 3600 "$tests/test_soak_ep" 2>&1 |
    grep -E '^    |PASSED|FAILED' || status=1

if [ $valgrind = 1 ]; then
    command -v valgrind >/dev/null || {
        echo "soak: valgrind is not installed (apt-get install valgrind)" >&2
        exit 1
    }
    for t in test_tag_live test_ep_pending test_rndv_faults test_soak_ep; do
        log=$(mktemp)
        start=$(date +%s)
        # libtool wrappers: run the real binary, with the build's library
        bin=$tests/.libs/$t
        PSEL_SOAK_CYCLES=200 PSEL_SOAK_RSS_SLACK_KB=1048576 LD_LIBRARY_PATH=$build/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
            timeout 3600 valgrind --trace-children=yes --error-exitcode=99 \
            --leak-check=no --track-origins=no --log-file="$log.%p" \
            "$bin" >"$log" 2>&1
        rc=$?
        errors=$(cat "$log".* 2>/dev/null | grep -c "^==[0-9]*== [A-Z][a-z].* \(invalid\|uninitialised\|Invalid\|Conditional\|Syscall param\)" || true)
        echo "# valgrind $t: exit $rc, $errors error report(s), $(( $(date +%s) - start )) s"
        if [ $rc -ne 0 ] || [ "$errors" -ne 0 ]; then
            status=1
            cat "$log".* | grep -A12 "^==[0-9]*== [A-Z]" | head -60
            tail -20 "$log"
        fi
        rm -f "$log" "$log".*
    done
fi
exit $status
