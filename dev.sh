#!/usr/bin/env bash
# protosel developer entry point: one command sets up a fresh Debian 12 machine
# (missing packages, autogen, configure, build) and then runs a job.
#
#   ./dev.sh info    build, then show this machine's resources, lanes and tables
#   ./dev.sh test    build, then run the whole test suite
#   ./dev.sh asan    build in build-asan/ with ASan+UBSan and run the unit tests
#   ./dev.sh build   build only
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
          iproute2 gnuplot-nox locales dpkg-dev libnuma-dev openmpi-bin libopenmpi-dev
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

# Prints the closing line 'N passed, N failed' over every test program: cmocka
# programs count their test cases, other test programs count as one each.
summarize_tests() {
    local dir=$1 passed=0 failed=0 skipped=0 trs log p f
    for trs in $(find "$dir/test" -name '*.trs'); do
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

run_tests() {
    local dir=$1; shift
    local rc=0
    make -C "$dir" -j"$(nproc)" check "$@" || rc=$?
    [ $rc -ne 0 ] && find "$dir/test" -name '*.log' ! -name test-suite.log -exec grep -l -E "FAIL|ERROR" {} + 2>/dev/null |
        while read -r f; do echo "---- $f"; tail -40 "$f"; done
    summarize_tests "$dir" || rc=1
    return $rc
}

install_missing_packages
case $job in
build)
    configure_and_build "$top/build" ;;
info)
    configure_and_build "$top/build"
    "$top/build/src/tools/psel_info" "$@" ;;
test)
    configure_and_build "$top/build"
    run_tests "$top/build" ;;
asan)
    san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
    configure_and_build "$top/build-asan" CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_tests "$top/build-asan" TESTS="$(make -s -C "$top/build-asan" print-unit-tests)" ;;
*)
    echo "usage: $0 info|test|asan|build" >&2; exit 2 ;;
esac
