#!/bin/sh
# Bounded replay of the perftest exchange fuzz harness (test parameters and
# calibration settings a server takes from the network) over its seed corpus
# (make check). Run from the build directory; PSEL_TOP_SRCDIR points to the
# sources.
srcdir=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_perftest -n "${PSEL_FUZZ_RUNS:-20000}" \
    "$srcdir"/test/fuzz/corpus/perftest/*
