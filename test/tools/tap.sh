# TAP helpers for the test/tools scripts (sourced).
#   result DESCRIPTION STATUS [FILE...]   one test point; on failure the last
#                                         20 lines of each FILE are shown
#   tap_done                              prints the plan; exits 1 if any failed
n=0 failed=0

result() {
    local desc=$1 status=$2 f
    shift 2
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

tap_done() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}
