# shellcheck shell=bash
# psel_info between two hosts in network namespaces (sourced by the
# test_netns_*.sh scripts; never run). The caller has $psel_info, $tmp,
# in_b, and a snapshot of A's resources in $tmp/snap_a.
#   info NAME ENV...        psel_info -e -x in B against A's snapshot
#                           (--remote-host), output in $tmp/NAME
#   proto_lanes FILE PROTO  the lanes column of PROTO's "# protocol" line

info() {
    local name=$1
    shift
    in_b env "$@" timeout 20 "$psel_info" -e -x --peer "$tmp/snap_a" \
        --remote-host >"$tmp/$name" 2>&1
}

proto_lanes() {
    awk -v p="$2" '$1 == "#" && $2 == p && $3 == "sizes" {
                       $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' "$1"
}
