#!/bin/sh
# make check: replay the rndv seed corpus, then deterministic mutations of it,
# through test/fuzz/fuzz_rndv.c.
top=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_rndv -n "${PSEL_FUZZ_MUTATIONS:-20000}" \
     "$top"/test/fuzz/corpus/rndv/*
