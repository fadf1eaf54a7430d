#!/bin/sh
# Bounded replay of the calibration file fuzz harness over its seed corpus
# (make check). Run from the build directory; PSEL_TOP_SRCDIR points to the
# sources.
srcdir=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_calib -n "${PSEL_FUZZ_RUNS:-3000}" \
    "$srcdir"/test/fuzz/corpus/calib/*
