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
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
job=${1:-info}
shift || true

packages=(build-essential autoconf automake libtool pkg-config
          libucx-dev ucx-utils libibverbs-dev rdma-core libcmocka-dev
          iproute2 gnuplot-nox valgrind)

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

# configure_and_build BUILD_DIR [CONFIGURE-ARGS...]
configure_and_build() {
    local dir=$1; shift
    if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
        log "generating configure (autogen.sh)"
        "$top/autogen.sh" >"$top/autogen.log" 2>&1 || { cat "$top/autogen.log"; exit 1; }
    fi
    local werror=()
    [ "${PSEL_WERROR:-0}" = 1 ] && werror=(--enable-werror)
    mkdir -p "$dir"
    if [ ! -f "$dir/Makefile" ]; then
        log "configuring in ${dir#$top/}"
        (cd "$dir" && "$top/configure" --quiet "${werror[@]}" "$@")
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
