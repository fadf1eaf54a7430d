#!/bin/sh
# Bounded replay of the Open MPI receive queue spec fuzz harness over its
# seed corpus plus deterministic mutations (make check). PSEL_FUZZ_RUNS
# overrides the number of mutations.
srcdir=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_rq_spec -n "${PSEL_FUZZ_RUNS:-20000}" \
    "$srcdir"/test/fuzz/corpus/rq_spec/*
