#!/bin/sh
# Bounded fuzz replay of the reader of UCX's tables (psel_info
# --compare-ucx): the UCX table fixtures and test/fuzz/corpus/ucx_table, then
# deterministic mutations of them. PSEL_FUZZ_RUNS overrides the count.
top=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_ucx_table -n "${PSEL_FUZZ_RUNS:-5000}" \
    "$top"/test/fixtures/*proto-info*.txt "$top"/test/fixtures/*-v1.txt \
    "$top"/test/fuzz/corpus/ucx_table/*
