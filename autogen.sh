#!/bin/sh
# Generate the configure script and Makefile.in files.
set -e
cd "$(dirname "$0")"
autoreconf -ivf
