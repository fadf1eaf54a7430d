# shellcheck shell=bash
# Two hosts joined by two rails of unequal speed, in network namespaces
# (sourced by test/tools/test_netns_rails.sh and bench/rails.sh; never run):
# namespaces A and B, two veth pairs each on its own /30 subnet, with the
# same device name at both ends, one (the second by default) shaped in both directions
# with `tc qdisc ... tbf` (netem does not work here; tbf does).
#
# The caller sets before sourcing:
#   rails_id      unique per run (the pid): names, subnets
#   rails_rate    the shaped rail's rate, as tc takes it ("1gbit")
#   rails_shaped  which rail is shaped, 1 or 2 (default 2: the second)
# and gets:
#   ns_a ns_b dev1 dev2 a1 b1 a2 b2 net1 net2
#   rails_slow         the shaped one of dev1 and dev2
#   rails_setup        -> 0, or 1 with the reason in $rails_err
#   rails_cleanup      removes what rails_setup made (call it from a trap)
#   in_a CMD... / in_b CMD...   run in A / B
#   rails_bytes DEV    rx + tx bytes of DEV in A (0 once gone)
#   rails_wait_carrier -> 0 when both pairs have carrier, within 5 s

PATH=$PATH:/usr/sbin:/sbin # ip and tc live here; not in a user's PATH

ns_a=psel_ra_$rails_id ns_b=psel_rb_$rails_id
dev1=pr1_$rails_id dev2=pr2_$rails_id
net1=10.234.$((rails_id % 250 + 1)) net2=10.235.$((rails_id % 250 + 1))
a1=$net1.1 b1=$net1.2 a2=$net2.1 b2=$net2.2
rails_slow=$dev2
[ "${rails_shaped:-2}" = 1 ] && rails_slow=$dev1
rails_made_a='' rails_made_b='' rails_err=''

in_a() { ip netns exec "$ns_a" "$@"; }
in_b() { ip netns exec "$ns_b" "$@"; }

rails_cleanup() {
    # deleting a namespace removes the veth ends inside it
    [ -n "$rails_made_a" ] && ip netns del "$ns_a" 2>/dev/null
    [ -n "$rails_made_b" ] && ip netns del "$ns_b" 2>/dev/null
    rails_made_a='' rails_made_b=''
}

rails_setup() {
    local dev
    command -v ip >/dev/null 2>&1 ||
        { rails_err="no 'ip' command (iproute2 not installed)"; return 1; }
    command -v tc >/dev/null 2>&1 ||
        { rails_err="no 'tc' command (iproute2 not installed)"; return 1; }
    rails_err=$(ip netns add "$ns_a" 2>&1) ||
        { rails_err="cannot create a network namespace ($(id -un 2>/dev/null), uid $(id -u)): $rails_err"; return 1; }
    rails_made_a=1
    rails_err=$(ip netns add "$ns_b" 2>&1) ||
        { rails_err="cannot create a second network namespace: $rails_err"; return 1; }
    rails_made_b=1
    for dev in "$dev1" "$dev2"; do
        rails_err=$(ip link add "$dev" netns "$ns_a" type veth peer name "$dev" \
                        netns "$ns_b" 2>&1) ||
            { rails_err="cannot create a veth pair between namespaces: $rails_err"; return 1; }
    done
    rails_err=$( { ip -n "$ns_a" link set lo up &&
                   ip -n "$ns_b" link set lo up &&
                   ip -n "$ns_a" addr add "$a1/30" dev "$dev1" &&
                   ip -n "$ns_b" addr add "$b1/30" dev "$dev1" &&
                   ip -n "$ns_a" addr add "$a2/30" dev "$dev2" &&
                   ip -n "$ns_b" addr add "$b2/30" dev "$dev2" &&
                   ip -n "$ns_a" link set "$dev1" up &&
                   ip -n "$ns_b" link set "$dev1" up &&
                   ip -n "$ns_a" link set "$dev2" up &&
                   ip -n "$ns_b" link set "$dev2" up; } 2>&1) ||
        { rails_err="cannot configure the veth pairs: $rails_err"; return 1; }
    # the slow rail: a token bucket on both ends' egress, so both
    # directions are shaped (data one way, replies and acks the other)
    rails_err=$( { in_a tc qdisc add dev "$rails_slow" root tbf rate "$rails_rate" \
                       burst 64kb latency 100ms &&
                   in_b tc qdisc add dev "$rails_slow" root tbf rate "$rails_rate" \
                       burst 64kb latency 100ms; } 2>&1) ||
        { rails_err="cannot shape $rails_slow with tc tbf: $rails_err"; return 1; }
    return 0
}

rails_carrier() {
    local dev
    for dev in "$dev1" "$dev2"; do
        ip -n "$ns_a" -br link show "$dev" | grep -q "LOWER_UP" &&
            ip -n "$ns_b" -br link show "$dev" | grep -q "LOWER_UP" || return 1
    done
}

rails_wait_carrier() {
    local i
    for i in $(seq 100); do
        rails_carrier && return 0
        sleep 0.05
    done
    echo "# gave up after 5 s waiting for carrier on $dev1 and $dev2"
    return 1
}

rails_bytes() {
    in_a test -e "/sys/class/net/$1" || { echo 0; return; }
    echo $(($(in_a cat "/sys/class/net/$1/statistics/rx_bytes") +
            $(in_a cat "/sys/class/net/$1/statistics/tx_bytes")))
}
