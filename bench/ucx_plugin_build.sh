#!/bin/bash
# Builds and installs a UCX >= 1.22 (the first release that loads external
# UCS plugins from UCX_PLUGIN_PATH) so that protosel's plugin can be built
# against it (src/ucx_runtime/README.md, "Newer UCX").
#
#   bench/ucx_plugin_build.sh [-s SOURCE] [-p PREFIX] [-t TAG] [-b BUILD | -n]
#
#   SOURCE  a UCX source directory, a release tarball (ucx-1.22.0.tar.gz), or a
#           git repository (bare or not) of openucx/ucx from which TAG is
#           exported. Default: the git mirror /work/.mirror/openucx+ucx/repo,
#           else a clone of https://github.com/openucx/ucx (needs network).
#   PREFIX  install prefix (default /opt/ucx-1.22)
#   TAG     git tag when SOURCE is a repository (default v1.22.0)
#   BUILD   protosel's build directory against that UCX (default build-ucx122
#           of this source tree): configured with PKG_CONFIG_PATH of PREFIX
#           and --with-ucx-src of the tree, then built with its check
#           programs, and the plugin's test run (test/tools/test_ucx_plugin.sh);
#           -n: UCX only
#
# The unpacked, configured tree stays in /opt/src/ucx-<version> (or SRC_ROOT):
# protosel's configure needs it (--with-ucx-src) for UCP's private headers.
# Configured with the options of Debian's 1.13.1 package (debian/rules: shm,
# cma, tcp, ib verbs, rdmacm, devel headers, no logging), without GPU support,
# bindings or documentation. The build runs under nice -n 19
# on two jobs (JOBS) because the machines it was written on are shared.
set -eu -o pipefail

me=${0##*/}
src=""
prefix=/opt/ucx-1.22
tag=v1.22.0
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-ucx122
src_root=${SRC_ROOT:-/opt/src}
jobs=${JOBS:-2}
mirror=/work/.mirror/openucx+ucx/repo

while getopts "s:p:t:b:nh" opt; do
    case $opt in
    s) src=$OPTARG ;;
    p) prefix=$OPTARG ;;
    t) tag=$OPTARG ;;
    b) build=$OPTARG ;;
    n) build= ;;
    *) sed -n '2,28p' "$0"; exit 1 ;;
    esac
done

die() { echo "$me: $*" >&2; exit 1; }

# Build dependencies (Debian 12 names); installs what is missing.
deps=(autoconf automake libtool pkg-config make gcc g++ libibverbs-dev librdmacm-dev libnuma-dev)
missing=()
for p in "${deps[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "$me: installing ${missing[*]}"
    flock /work/apt.lock apt-get install -y "${missing[@]}" 2>/dev/null ||
        apt-get install -y "${missing[@]}" || die "cannot install ${missing[*]}; install them and rerun"
fi

# Unpack SOURCE into $src_root/ucx-<version> (a directory is used in place).
if [ -z "$src" ]; then
    if [ -d "$mirror" ]; then
        src=$mirror
    else
        src=$src_root/ucx.git
        [ -d "$src" ] || git clone --bare https://github.com/openucx/ucx "$src" ||
            die "no source given and cannot clone openucx/ucx: pass -s SOURCE"
    fi
fi
if [ -f "$src" ]; then
    mkdir -p "$src_root"
    first=$(tar -tzf "$src" | awk -F/ 'NR == 1 { print $1 }')
    [ -n "$first" ] || die "$src: not a gzip'ed tar file"
    tar -xzf "$src" -C "$src_root"
    tree=$src_root/$first
elif [ -f "$src/configure.ac" ] || [ -f "$src/configure" ]; then
    tree=$src
elif git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    tree=$src_root/ucx-${tag#v}
    if [ ! -f "$tree/configure.ac" ]; then
        mkdir -p "$tree"
        git -C "$src" archive "$tag" | tar -x -C "$tree"
    fi
else
    die "$src: neither a UCX source directory, a tarball nor a git repository"
fi
echo "$me: UCX source tree $tree, prefix $prefix"

cd "$tree"
[ -x configure ] || ./autogen.sh
if [ -x "$prefix/bin/ucx_info" ] && [ -f config.status ] &&
   "$prefix/bin/ucx_info" -v | grep -q "version: $(sed -n 's/^#define UCT_VERNO_STRING *"\(.*\)"/\1/p' src/uct/api/version.h 2>/dev/null)\$"; then
    echo "$me: UCX already installed in $prefix from this tree"
else
  if [ ! -f config.status ]; then
    ./configure --prefix="$prefix" \
        --enable-mt --with-verbs --with-rdmacm --enable-cma \
        --disable-backtrace-detail --disable-logging --enable-devel-headers \
        --without-cuda --without-rocm --without-ze --without-gdrcopy \
        --without-gaudi --without-fuse --without-valgrind \
        --without-go --without-java --disable-doxygen-doc
  fi
  nice -n 19 make -j"$jobs"
  make install
fi
echo "$me: installed $("$prefix/bin/ucx_info" -v | head -1)"
[ -n "$build" ] || exit 0

# protosel against it, in its own build directory: never mix with a build
# against another UCX (their structures differ)
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
mkdir -p "$build"
cd "$build"
if [ ! -f config.status ]; then
    PKG_CONFIG_PATH=$prefix/lib/pkgconfig "$top/configure" --quiet --with-ucx-src="$tree"
fi
nice -n 19 make -j"$jobs"
PSEL_UCX122_PREFIX=$prefix nice -n 19 make -j"$jobs" check TESTS=test/tools/test_ucx_plugin.sh
echo "$me: the plugin is $build/src/ucx_runtime/.libs/libucs_protosel.so.0:"
echo "  UCX_PLUGIN_PATH=$build/src/ucx_runtime/.libs UCX_PSEL_PROTO_INFO=y $prefix/bin/ucx_info -e -u t"
