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

# wait_until DESCRIPTION SECONDS COMMAND...: run COMMAND every 0.05 s until
# it succeeds; after SECONDS without success, say so ("# gave up ...") and
# return 1. Never waits silently.
wait_until() {
    local desc=$1 secs=$2 i
    shift 2
    for i in $(seq $((secs * 20))); do
        "$@" && return 0
        sleep 0.05
    done
    echo "# gave up after $secs s waiting for $desc"
    return 1
}

# wait_server_ready FILE PID SECONDS: until the psel_perftest server PID,
# writing to FILE, prints "Waiting for connection". Gives up, saying why,
# when the server exits first (with its last lines) or after SECONDS.
wait_server_ready() {
    local file=$1 pid=$2 secs=$3 i
    for i in $(seq $((secs * 20))); do
        grep -q "Waiting for connection" "$file" 2>/dev/null && return 0
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "# the server exited before listening:"
            [ -f "$file" ] && sed 's/^/#   server: /' "$file" | tail -10
            return 1
        fi
        sleep 0.05
    done
    echo "# gave up after $secs s waiting for the server to listen"
    [ -f "$file" ] && sed 's/^/#   server: /' "$file" | tail -10
    return 1
}
