#!/bin/sh
# Bounded fuzz replay of the ucx_info -d importer: the fixtures and the small
# variants in test/fuzz/corpus/ucx_info, then deterministic mutations of them.
# PSEL_FUZZ_RUNS overrides the number of mutations.
top=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_ucx_info -n "${PSEL_FUZZ_RUNS:-5000}" \
    "$top"/test/fixtures/0*-*ucx1.*.txt "$top"/test/fuzz/corpus/ucx_info/*
