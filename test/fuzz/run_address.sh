#!/bin/sh
# make check: replay the worker address seed corpus, then 20000 deterministic
# mutations of it, through the unpack/re-pack harness (test/fuzz/fuzz_address.c).
top=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec ./test/fuzz/fuzz_address -n "${PSEL_FUZZ_MUTATIONS:-20000}" \
     "$top"/test/fuzz/corpus/address/*
