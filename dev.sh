#!/usr/bin/env bash
# protosel developer entry point: one command sets up a fresh Debian 12 machine
# (missing packages, autogen, configure, build) and then runs a job.
#
#   ./dev.sh info    build, then show this machine's resources, lanes and tables
#   ./dev.sh test    build, then run the whole test suite, and the tests of
#                    what depends on UCX against each release of the matrix
#                    (PSEL_UCX_MATRIX, default "1.16.0 1.18.1 1.22.0")
#   ./dev.sh asan    build in build-asan/ with ASan+UBSan and run the unit tests
#   ./dev.sh build   build only
#   ./dev.sh ucx SPEC...       build UCX SPEC (a version, a release tarball or a
#                    source directory) into the cache, protosel against it in
#                    build-ucx-<version>/, and print the line that uses it
#   ./dev.sh ucx-test SPEC...  the same, then its matrix tests
#
# Idempotent: packages already installed are not touched, and an existing
# build tree is reused. PSEL_WERROR=1 turns compiler warnings into errors.
# The protocol tier of libprotosel_ucx.so needs UCX's internal headers: the
# source of the installed UCX is fetched (apt-get source) and configured
# once into ${XDG_CACHE_HOME:-~/.cache}/protosel/ucx-src/ (see
# ucx_source_tree); PSEL_REQUIRE_UCX_SRC=1 makes a failure there fatal (CI),
# PSEL_UCX_SRC=DIR uses a tree of your own, PSEL_UCX_SRC=none skips it.
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
job=${1:-info}
shift || true

packages=(build-essential autoconf automake libtool pkg-config
          libucx-dev ucx-utils libibverbs-dev rdma-core libcmocka-dev
          iproute2 gnuplot-nox groff-base locales dpkg-dev libnuma-dev openmpi-bin libopenmpi-dev
          valgrind)

log() { printf '[dev.sh] %s\n' "$*" >&2; }

install_missing_packages() {
    local missing=() pkg
    for pkg in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing missing Debian packages: ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { log "not root and no sudo: install ${missing[*]} by hand"; exit 1; }
        sudo=sudo
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# ucx_source_tree: print the directory of the installed UCX's own source,
# unpacked by `apt-get source` (a deb-src entry for this Debian suite is
# added when apt has none) and configured with the options the installed
# build was configured with (`ucx_info -b`), which generates the config.h
# its internal headers need. Cached per package version; concurrent runs
# wait on a lock. Returns 1 with a message when it cannot.
ucx_source_tree() {
    local ver upstream cache dir tmp suite sudo="" flags args
    ver=$(dpkg-query -W -f='${Version}' libucx-dev 2>/dev/null) || { log "libucx-dev is not installed"; return 1; }
    upstream=${ver%-*}; upstream=${upstream#*:}
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/protosel/ucx-src
    dir=$cache/$ver/ucx-$upstream
    if [ -f "$dir/config.h" ] && [ -f "$dir/src/ucp/proto/proto.h" ]; then
        echo "$dir"; return 0
    fi
    mkdir -p "$cache" || return 1
    exec 9>"$cache/.lock"
    flock -w 600 9 || { log "timed out waiting for $cache/.lock"; return 1; }
    if [ -f "$dir/config.h" ]; then exec 9>&-; echo "$dir"; return 0; fi
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    if ! apt-get source --print-uris "ucx=$ver" >/dev/null 2>&1; then
        suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
        [ -n "$suite" ] || { log "cannot tell the Debian suite from /etc/os-release"; exec 9>&-; return 1; }
        log "adding a deb-src entry for $suite (apt-get source needs it)"
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$suite" | $sudo tee /etc/apt/sources.list.d/protosel-deb-src.sources >/dev/null &&
            $sudo apt-get update -qq || { exec 9>&-; return 1; }
    fi
    tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
    log "fetching the source of UCX $ver (apt-get source ucx=$ver) into $cache"
    if ! (cd "$tmp" && timeout 300 apt-get source -qq "ucx=$ver" >"$tmp/fetch.log" 2>&1); then
        log "apt-get source ucx=$ver failed: $(tail -n 3 "$tmp/fetch.log" | tr '\n' ' ')"
        rm -rf "$tmp"; exec 9>&-; return 1
    fi
    # the installed build's own configure line, from `ucx_info -b`
    flags=$(ucx_info -b 2>/dev/null | sed -n 's/^#define UCX_CONFIGURE_FLAGS *"\(.*\)"$/\1/p')
    [ -n "$flags" ] || flags="--prefix=/usr --enable-mt --with-verbs --disable-backtrace-detail --disable-logging --enable-devel-headers --enable-examples --enable-cma"
    read -r -a args <<<"$flags"   # words without quotes; ${prefix} stays literal
    log "configuring it (autogen.sh; configure $flags)"
    if ! (cd "$tmp/ucx-$upstream" && timeout 300 ./autogen.sh >"$tmp/configure.log" 2>&1 &&
          timeout 300 ./configure "${args[@]}" >>"$tmp/configure.log" 2>&1); then
        log "configuring the UCX source failed: see $tmp/configure.log"
        exec 9>&-; return 1
    fi
    mkdir -p "$cache/$ver"
    rm -rf "$dir" && mv "$tmp/ucx-$upstream" "$dir" && rm -rf "$tmp"
    exec 9>&-
    echo "$dir"
}

# ucx_src_args: the configure argument for the UCX source tree, if any
ucx_src_args() {
    local dir
    case ${PSEL_UCX_SRC:-} in
    none) return 0 ;;
    '')   if ! dir=$(ucx_source_tree); then
              [ "${PSEL_REQUIRE_UCX_SRC:-0}" = 1 ] && { log "PSEL_REQUIRE_UCX_SRC=1: stopping"; return 1; }
              log "no UCX source tree: building libprotosel_ucx.so with the config tier only"
              return 0
          fi ;;
    *)    dir=$PSEL_UCX_SRC ;;
    esac
    echo "--with-ucx-src=$dir"
}

# ------------------------------------------------------------------------
# The UCX matrix: protosel against other UCX releases than the installed one
# (docs/runtime-library.md). A release is built once into
# ${XDG_CACHE_HOME:-~/.cache}/protosel/ucx/<version>/ (its configured,
# built source tree and its install prefix), protosel against it into
# build-ucx-<version>/.

ucx_cache_root() { echo "${XDG_CACHE_HOME:-$HOME/.cache}/protosel/ucx"; }

# Directories searched for release tarballs ucx-<version>.tar.{gz,xz,bz2}
ucx_release_dirs() {
    [ -n "${PSEL_UCX_RELEASES:-}" ] && echo "$PSEL_UCX_RELEASES"
    echo "$top/../shared/ucx"
    echo "/work/shared/ucx"
}

# ucx_release_source SPEC: print the tarball or directory SPEC stands for.
# SPEC is a source directory, a release tarball, or a version, which is
# looked up in ucx_release_dirs, else downloaded from openucx/ucx's
# releases into the cache.
ucx_release_source() {
    local spec=$1 d f url dl
    if [ -d "$spec" ] || [ -f "$spec" ]; then
        (cd "$(dirname "$spec")" && echo "$PWD/$(basename "$spec")"); return 0
    fi
    if ! [[ $spec =~ ^[0-9]+\.[0-9]+\.[0-9]+(-rc[0-9]+)?$ ]]; then
        log "ucx: '$spec' is neither a directory, a file nor a version such as 1.18.1"; return 1
    fi
    while read -r d; do
        for f in "$d"/ucx-"$spec".tar.{xz,gz,bz2}; do
            [ -f "$f" ] && { (cd "$(dirname "$f")" && echo "$PWD/$(basename "$f")"); return 0; }
        done
    done < <(ucx_release_dirs)
    dl=$(ucx_cache_root)/downloads/ucx-$spec.tar.gz
    [ -s "$dl" ] && { echo "$dl"; return 0; }
    url=https://github.com/openucx/ucx/releases/download/v$spec/ucx-$spec.tar.gz
    log "ucx: no ucx-$spec.tar.* in $(ucx_release_dirs | tr '\n' ' '); downloading $url"
    mkdir -p "$(dirname "$dl")"
    if ! curl -fsSL --max-time 300 -o "$dl.part" "$url" 2>"$dl.err"; then
        log "ucx: cannot download $url ($(tail -n 1 "$dl.err")): without network, give a release tarball or a source directory, or set PSEL_UCX_RELEASES=DIR"
        rm -f "$dl.part" "$dl.err"; return 1
    fi
    mv "$dl.part" "$dl" && rm -f "$dl.err" && echo "$dl"
}

# ucx_tree_version DIR: the version a UCX source tree declares
ucx_tree_version() {
    sed -n 's/^define(\[ucx_ver_\(major\|minor\|patch\)\], *\([0-9]*\)).*/\2/p' "$1/configure.ac" |
        paste -sd. -
}

# ucx_release_build SPEC: build the release once into the cache; prints
# "VERSION TREE PREFIX". Long steps log to the cache and show progress.
ucx_release_build() {
    local src ver dir tree prefix stamp id tmp first
    src=$(ucx_release_source "$1") || return 1
    if [ -d "$src" ]; then
        [ -f "$src/configure.ac" ] || { log "ucx: $src has no configure.ac: not a UCX source tree"; return 1; }
        ver=$(ucx_tree_version "$src"); id="dir $src"
    else
        first=$(tar -tf "$src" 2>/dev/null | head -n 1) || true
        [ -n "$first" ] || { log "ucx: $src is not a tar archive"; return 1; }
        id="sha256 $(sha256sum "$src" | cut -d' ' -f1)"
        ver=
    fi
    # a tarball's version is read once it is unpacked
    dir=$(ucx_cache_root); mkdir -p "$dir"
    exec 8>"$dir/.lock"
    flock -w 3600 8 || { log "ucx: timed out waiting for $dir/.lock"; return 1; }
    if [ -z "$ver" ]; then
        tmp=$(mktemp -d "$dir/.unpack.XXXXXX")
        tar -xf "$src" -C "$tmp" || { log "ucx: cannot unpack $src"; rm -rf "$tmp"; exec 8>&-; return 1; }
        tree=$(find "$tmp" -mindepth 2 -maxdepth 2 -name configure.ac -printf '%h\n' | head -n 1)
        [ -n "$tree" ] || { log "ucx: $src holds no UCX source tree"; rm -rf "$tmp"; exec 8>&-; return 1; }
        ver=$(ucx_tree_version "$tree")
    fi
    [[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { log "ucx: cannot read the version of $src"; rm -rf "${tmp:-}"; exec 8>&-; return 1; }
    dir=$dir/$ver; stamp=$dir/built-from
    prefix=$dir/prefix
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$id" ] && [ -x "$prefix/bin/ucx_info" ]; then
        rm -rf "${tmp:-}"; exec 8>&-
        echo "$ver $(cat "$dir/tree") $prefix"; return 0
    fi
    log "ucx $ver: building from $src into $dir (autogen, contrib/configure-release, make -j$(nproc), install; a few minutes)"
    rm -rf "$dir"; mkdir -p "$dir"
    if [ -n "${tmp:-}" ]; then
        mv "$tree" "$dir/ucx-$ver"; rm -rf "$tmp"; tree=$dir/ucx-$ver
    else
        tree=$src   # a directory is built in place
    fi
    local logf=$dir/build.log step
    for step in "autogen:./autogen.sh" \
                "configure:contrib/configure-release --prefix=$prefix --enable-mt --enable-cma --without-cuda --without-rocm --without-ze --without-gdrcopy --without-go --without-java --disable-doxygen-doc" \
                "make:make -j$(nproc)" "install:make install"; do
        log "ucx $ver: ${step%%:*} (log: $logf)"
        if ! (cd "$tree" && eval "${step#*:}") >>"$logf" 2>&1; then
            log "ucx $ver: ${step%%:*} failed; the end of $logf:"
            tail -n 20 "$logf" >&2; exec 8>&-; return 1
        fi
    done
    echo "$tree" >"$dir/tree"; echo "$id" >"$stamp"
    exec 8>&-
    echo "$ver $tree $prefix"
}

# ucx_matrix_build SPEC: UCX SPEC, then protosel against it in
# build-ucx-<version>/; prints "VERSION PREFIX BUILD"
ucx_matrix_build() {
    local ver tree prefix build
    read -r ver tree prefix < <(ucx_release_build "$1") && [ -n "$prefix" ] || return 1
    build=$top/build-ucx-$ver
    ( PKG_CONFIG_PATH=$prefix/lib/pkgconfig PSEL_UCX_SRC=$tree \
          configure_and_build "$build" ) >&2 || return 1
    echo "$ver $prefix $build"
}

# The line that runs stock UCX of PREFIX with the library of BUILD
ucx_matrix_usage() {
    local ver=$1 prefix=$2 build=$3 lib=$3/src/ucx_runtime/.libs
    if [ -f "$lib/libucs_protosel.so.0" ]; then
        echo "UCX_PLUGIN_PATH=$lib UCX_PSEL_PROTO_INFO=y UCX_PROTO_INFO=y $prefix/bin/ucx_info -e -u t"
    else
        echo "LD_PRELOAD=$lib/libprotosel_ucx.so UCX_PSEL_PROTO_INFO=y UCX_PROTO_INFO=y $prefix/bin/ucx_info -e -u t"
    fi
}

# configure_and_build BUILD_DIR [CONFIGURE-ARGS...]
configure_and_build() {
    local dir=$1; shift
    if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
        log "generating configure (autogen.sh)"
        "$top/autogen.sh" >"$top/autogen.log" 2>&1 || { cat "$top/autogen.log"; exit 1; }
    fi
    local werror=()
    [ "${PSEL_WERROR:-0}" = 1 ] && werror=(--enable-werror)
    local ucx_src
    ucx_src=$(ucx_src_args) || exit 1
    mkdir -p "$dir"
    # a tree configured before the UCX source was known is configured again
    if [ -f "$dir/config.status" ] && [ -n "$ucx_src" ] &&
       ! grep -q -- "with-ucx-src" "$dir/config.status"; then
        log "configuring ${dir#$top/} again: it has no UCX source tree"
        rm -f "$dir/Makefile"
    fi
    if [ ! -f "$dir/Makefile" ]; then
        log "configuring in ${dir#$top/}"
        (cd "$dir" && "$top/configure" --quiet "${werror[@]}" ${ucx_src:+"$ucx_src"} "$@")
    fi
    log "building in ${dir#$top/}"
    make -s -C "$dir" -j"$(nproc)" all
}

# Prints the closing line 'N passed, N failed' over every test program (or
# the TESTS given): cmocka programs count their test cases, other test
# programs count as one each.
summarize_tests() {
    local dir=$1 passed=0 failed=0 skipped=0 trs log p f list
    shift
    if [ $# -gt 0 ]; then
        list=$(printf "$dir/%s.trs\n" "$@")
    else
        list=$(find "$dir/test" -name '*.trs')
    fi
    for trs in $list; do
        [ -f "$trs" ] || { failed=$((failed + 1)); echo "no result of ${trs%.trs}"; continue; }
        log=${trs%.trs}.log
        p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
        f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s),.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
        case $(sed -n 's/^:test-result: //p' "$trs" | head -1) in
            PASS) [ "$p" -eq 0 ] && p=1 ;;
            SKIP) skipped=$((skipped + 1)); p=0 ;;
            *)    [ "$f" -eq 0 ] && f=1 ;;
        esac
        passed=$((passed + p)); failed=$((failed + f))
    done
    echo "tests: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ]
}

# run_tests DIR [TEST...]: make check of every test, or of the TESTS given
run_tests() {
    local dir=$1; shift
    local rc=0 tests=("$@") t
    if [ ${#tests[@]} -gt 0 ]; then
        for t in "${tests[@]}"; do rm -f "$dir/$t.log" "$dir/$t.trs"; done
        make -C "$dir" -j"$(nproc)" check TESTS="${tests[*]}" || rc=$?
    else
        make -C "$dir" -j"$(nproc)" check || rc=$?
    fi
    # the logs of the tests run (of every test when none were named)
    if [ $rc -ne 0 ]; then
        if [ ${#tests[@]} -gt 0 ]; then
            for t in "${tests[@]}"; do [ -f "$dir/$t.log" ] && echo "$dir/$t.log"; done
        else
            find "$dir/test" -name '*.log' ! -name test-suite.log
        fi | xargs -r grep -l -E "^(FAIL|ERROR|not ok)" 2>/dev/null |
            while read -r f; do echo "---- $f"; tail -40 "$f"; done
    fi
    summarize_tests "$dir" "${tests[@]}" || rc=1
    return $rc
}

# ucx_matrix_test SPEC...: for each UCX release, build it (cached) and
# protosel against it, and run the tests of what depends on the UCX
# (make print-ucx-matrix-tests). A release that cannot be had fails with
# PSEL_REQUIRE_UCX_SRC=1 (CI), else is reported as not tested.
ucx_matrix_test() {
    local spec ver prefix build rc=0 line summary=()
    for spec in "$@"; do
        log "=== UCX $spec: the runtime library and the table readers against it"
        if ! read -r ver prefix build < <(ucx_matrix_build "$spec") || [ -z "$build" ]; then
            if [ "${PSEL_REQUIRE_UCX_SRC:-0}" = 1 ]; then
                summary+=("UCX $spec: FAILED: it could not be built (see above)")
                rc=1
            else
                summary+=("UCX $spec: not tested: it could not be had or built (see above)")
            fi
            continue
        fi
        # shellcheck disable=SC2046  # the list is words
        if line=$(run_tests "$build" $(make -s -C "$build" print-ucx-matrix-tests) | tee -a /dev/stderr | tail -n 1); then
            summary+=("UCX $ver: $line")
        else
            summary+=("UCX $ver: $line")
            rc=1
        fi
    done
    printf '%s\n' "${summary[@]}"
    return $rc
}

# The UCX releases ./dev.sh test checks besides the installed one: one per
# era of UCP's protocol API (docs/runtime-library.md)
ucx_matrix=${PSEL_UCX_MATRIX-1.16.0 1.18.1 1.22.0}

install_missing_packages
case $job in
build)
    configure_and_build "$top/build" ;;
info)
    configure_and_build "$top/build"
    "$top/build/src/tools/psel_info" "$@" ;;
test)
    configure_and_build "$top/build"
    rc=0
    run_tests "$top/build" || rc=1
    # shellcheck disable=SC2086  # the matrix is a list of words
    ucx_matrix_test $ucx_matrix || rc=1
    exit $rc ;;
ucx)
    [ $# -gt 0 ] || { echo "usage: $0 ucx VERSION|TARBALL|DIR..." >&2; exit 2; }
    for spec in "$@"; do
        read -r ver prefix build < <(ucx_matrix_build "$spec") && [ -n "$build" ] || exit 1
        log "UCX $ver: protosel is built against it in ${build#$top/}; run its stock tools with protosel:"
        ucx_matrix_usage "$ver" "$prefix" "$build"
    done ;;
ucx-test)
    [ $# -gt 0 ] || { echo "usage: $0 ucx-test VERSION|TARBALL|DIR..." >&2; exit 2; }
    ucx_matrix_test "$@" ;;
asan)
    san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
    configure_and_build "$top/build-asan" CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined"
    # shellcheck disable=SC2046  # the list is words
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_tests "$top/build-asan" $(make -s -C "$top/build-asan" print-unit-tests) ;;
*)
    echo "usage: $0 info|test|asan|build|ucx VERSION|TARBALL|DIR...|ucx-test VERSION|TARBALL|DIR..." >&2; exit 2 ;;
esac
