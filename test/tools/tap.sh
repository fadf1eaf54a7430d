# TAP helpers for the test/tools scripts (sourced).
#   result DESCRIPTION STATUS [FILE...]   one test point; on failure the last
#                                         20 lines of each FILE are shown
#                                         (default: the files in TAP_FILES)
#   skip DESCRIPTION REASON               a point this machine cannot check,
#                                         said so ("ok N - ... # SKIP why")
#   tap_done                              prints the plan; exits 1 if any failed
n=0 failed=0
TAP_FILES=()

result() {
    local desc=$1 status=$2 f
    shift 2
    [ $# -gt 0 ] || set -- ${TAP_FILES[@]+"${TAP_FILES[@]}"}
    n=$((n + 1))
    if [ "$status" -eq 0 ]; then
        echo "ok $n - $desc"
    else
        echo "not ok $n - $desc"
        for f in "$@"; do
            [ -f "$f" ] && sed "s|^|#   $(basename "$f"): |" "$f" | tail -20
        done
        failed=$((failed + 1))
    fi
}

skip() {
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}

tap_done() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}
