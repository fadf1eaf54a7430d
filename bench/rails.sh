#!/usr/bin/env bash
# Unequal rails: two hosts in network namespaces joined by two veth rails,
# the second (--shape 1: the first) shaped with `tc qdisc ... tbf rate
# RATE` (the helper test/tools/netns_rails.sh builds them); both advertise the same
# 10 Gb/s. tag_bw and tag_lat from 64 KiB to 64 MiB, four cases:
#   psel-cal   psel_perftest, each side with its psel_calibrate file
#              (B measured against a server in A, and A against B)
#   psel-attr  psel_perftest on the advertised attributes
#   ucx        stock ucx_perftest, UCX_TLS=tcp on both rails (50/50)
#   ucx-rt     stock ucx_perftest with libprotosel_ucx.so preloaded and the
#              same calibration files, rails for every peer: taken
#              from build/src/ucx_runtime/.libs/libprotosel_ucx.so or
#              --runtime-lib PATH; left out, saying so, when absent
# ucp_put_bw (--tests, UCX >= 1.16: a --build against it) runs the stock
# cases only, and one more:
#   ucx-rma2   stock ucx_perftest with UCX_MAX_RMA_RAILS=2 (UCP's default
#              puts over one rail): UCP's own split of put, 50/50
# For each: the median of --runs runs, the bytes each rail's veth moved
# (rx + tx in A) and its share, the aggregate against the sum of the two
# rails' bandwidths measured alone (the calibration's rail lines), and the
# median of each round's ratio to stock (the cases alternate) with its
# range. The
# client runs in B, the server in A. A benchmark, not a test: it prints
# figures and exits 0 once they are printed; nothing is checked.
#
#   bench/rails.sh [--quick] [--rate 1gbit] [--runs 3] [--keep DIR] ...
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: bench/rails.sh [options]   (as root: network namespaces and tc)
  --quick              smoke run: sizes 1M and 4M, one run, quick calibrations
  --rate RATE          the shaped rail's rate, as tc takes it (1gbit)
  --shape 1|2          which rail is shaped (2); 1: the rail UCP lists
                       first, where one RMA rail is stock UCP's choice
  --runs N             runs of each case per point (3)
  --sizes "S ..."      message sizes (64K 256K 1M 4M 16M 64M)
  --tests "T ..."      among tag_bw tag_lat ucp_put_bw (tag_bw tag_lat)
  --runtime-lib PATH   libprotosel_ucx.so for the ucx-rt case (default:
                       build/src/ucx_runtime/.libs/libprotosel_ucx.so)
  --build DIR          protosel's build directory (build); its UCX's
                       ucx_perftest runs the stock cases
  --keep DIR           keep every output in DIR (default: a temporary one)
  -h, --help           this help
EOF
}

me=rails.sh
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0 rate=1gbit shape=2 runs=3 sizes="64K 256K 1M 4M 16M 64M" tests="tag_bw tag_lat"
build=$top/build rtlib= keep=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; sizes="1M 4M"; runs=1 ;;
    --rate) rate=$2; shift ;;
    --shape) shape=$2; shift
             case $shape in 1|2) ;; *) echo "$me: --shape $shape: 1 or 2" >&2; exit 2 ;; esac ;;
    --runs) runs=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --tests) tests=$2; shift ;;
    --runtime-lib) rtlib=$2; shift ;;
    --build) build=$2; shift ;;
    --keep) keep=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done

tools=$build/src/tools
for t in psel_perftest psel_calibrate; do
    [ -x "$tools/$t" ] || { echo "$me: no $tools/$t (run ./dev.sh build)" >&2; exit 1; }
done
# the UCX the build is for: its ucx_perftest and libraries
ucx_bindir=$(sed -n 's/^PSEL_UCX_BINDIR = //p' "$build/Makefile" 2>/dev/null)
ucx_libdir=$(sed -n 's/^PSEL_UCX_LIBDIR = //p' "$build/Makefile" 2>/dev/null)
ucx_perftest=${ucx_bindir:+$ucx_bindir/}ucx_perftest
command -v "$ucx_perftest" >/dev/null 2>&1 ||
    { echo "$me: no $ucx_perftest (Debian package ucx-utils, or ./dev.sh ucx X.Y.Z)" >&2; exit 1; }
[ -n "$ucx_libdir" ] && export LD_LIBRARY_PATH=$ucx_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -n "$rtlib" ] || rtlib=$build/src/ucx_runtime/.libs/libprotosel_ucx.so
rt=
if [ -f "$rtlib" ]; then
    rt=ucx-rt
    echo "$me: ucx-rt case with $rtlib"
else
    echo "$me: no runtime library at $rtlib (issue 11's libprotosel_ucx.so; build it, or give --runtime-lib PATH): the ucx-rt case is left out"
fi

# cases_of TEST: the cases that run TEST (psel_perftest has no put)
cases_of() {
    case $1 in
    ucp_put_bw) echo "ucx ucx-rma2 $rt" ;;
    *)          echo "psel-cal psel-attr ucx $rt" ;;
    esac
}
# is_bw TEST: a bandwidth test (MB/s), else a latency one (p50 usec)
is_bw() { [ "$1" != tag_lat ]; }

bytes_of() { # SIZE with K/M suffix -> bytes
    case $1 in
    *K) echo $(( ${1%K} * 1024 )) ;;
    *M) echo $(( ${1%M} * 1048576 )) ;;
    *) echo "$1" ;;
    esac
}

if [ -n "$keep" ]; then mkdir -p "$keep" && out=$keep; else out=$(mktemp -d /tmp/rails.XXXXXX); fi
rails_id=$$
rails_rate=$rate
rails_shaped=$shape
. "$top/test/tools/netns_rails.sh"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rails_cleanup
    [ -n "$keep" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'echo "$me: interrupted" >&2; exit 130' INT TERM

rails_setup || { echo "$me: $rails_err" >&2; exit 1; }
rails_wait_carrier || { echo "$me: no carrier on the rails" >&2; exit 1; }
echo "$me: $ns_a ($dev1 $a1, $dev2 $a2; $rails_slow shaped to $rate) <-> $ns_b ($dev1 $b1, $dev2 $b2); output in $out"

port=16337 # fresh namespaces: every port is free; a new one per server
# wait_listen NS PORT PID: up to 10 s for PID to listen on PORT in NS
wait_listen() {
    local i
    for i in $(seq 1 500); do
        kill -0 "$3" 2>/dev/null || return 1
        [ -n "$(ip netns exec "$1" ss -Htln "sport = :$2" 2>/dev/null)" ] && return 0
        sleep 0.02
    done
    return 1
}

# --- the calibrations ----------------------------------------------------------
mode=(); [ $quick = 1 ] && mode=(--quick)
# calibrate SERVER-NS CLIENT-NS SERVER-ADDR FILE
calibrate() {
    local sns=$1 cns=$2 addr=$3 file=$4 spid
    port=$((port + 1))
    ip netns exec "$sns" env UCX_PSEL_TLS=tcp UCX_PSEL_CALIBRATION=none \
        timeout -k 5 200 "$tools/psel_perftest" -p "$port" >"$file.server" 2>&1 &
    spid=$!; pids+=("$spid")
    wait_listen "$sns" "$port" "$spid" || { echo "$me: no server in $sns" >&2; return 1; }
    ip netns exec "$cns" env UCX_PSEL_TLS=tcp timeout -k 5 200 \
        "$tools/psel_calibrate" "${mode[@]}" -o "$file" "$addr" -p "$port" \
        >"$file.log" 2>&1
    local s=$?
    wait "$spid" 2>/dev/null
    return $s
}
cal_b=$out/cal_b.txt cal_a=$out/cal_a.txt
calibrate "$ns_a" "$ns_b" "$a1" "$cal_b" ||
    { echo "$me: psel_calibrate in $ns_b failed:"; tail -5 "$cal_b.log"; } >&2
calibrate "$ns_b" "$ns_a" "$b1" "$cal_a" ||
    { echo "$me: psel_calibrate in $ns_a failed:"; tail -5 "$cal_a.log"; } >&2
grep -E '^# (tcp  rail|noise|wrote)|refused' "$cal_b.log" | sed "s/^/$me: $ns_b: /"
# the rail's bandwidth in MB/s of 2^20 B/s, as psel_perftest prints (the
# file has B/s, after the peer's device address)
# libprotosel_ucx.so weighs UCP's endpoint configurations, which serve every
# peer with the same lanes: it applies only rails that name no peer ('*').
# Here every process has one peer, so the ucx-rt case takes the rails as
# '*' (each file's rails were measured against that very peer)
any_peer() { [ -f "$1" ] && sed 's/^rail \([^ ]*\) [^ ]* /rail \1 * /' "$1" >"${1%.txt}_any.txt"; }
any_peer "$cal_a"; any_peer "$cal_b"
rail_bw() { awk -v d="tcp/$1" '$1 == "rail" && $2 == d { printf "%.1f\n", $5 / 1048576 }' "$cal_b" 2>/dev/null; }
bw1=$(rail_bw "$dev1") bw2=$(rail_bw "$dev2")
[ -n "$bw1" ] && [ -n "$bw2" ] ||
    echo "$me: no rail lines in $cal_b: the psel-cal case runs on what is there" >&2

# --- the runs ---------------------------------------------------------------------
# run CASE TEST SIZE ITERS FILE: one server/client pair; prints
# "value bytes1 bytes2" (value: MB/s for tag_bw, p50 us for tag_lat)
run() {
    local cas=$1 test=$2 size=$3 iters=$4 file=$5 bin senv cenv spid s b1 b2
    bin=$tools/psel_perftest
    case $cas in
    psel-cal)  senv=(UCX_PSEL_TLS=tcp UCX_PSEL_CALIBRATION="$cal_a")
               cenv=(UCX_PSEL_TLS=tcp UCX_PSEL_CALIBRATION="$cal_b") ;;
    psel-attr) senv=(UCX_PSEL_TLS=tcp UCX_PSEL_CALIBRATION=none)
               cenv=("${senv[@]}") ;;
    ucx)       bin=$ucx_perftest
               senv=(UCX_TLS=tcp UCX_NET_DEVICES="$dev1,$dev2")
               cenv=("${senv[@]}") ;;
    ucx-rma2)  bin=$ucx_perftest
               senv=(UCX_TLS=tcp UCX_NET_DEVICES="$dev1,$dev2" UCX_MAX_RMA_RAILS=2)
               cenv=("${senv[@]}") ;;
    ucx-rt)    bin=$ucx_perftest
               senv=(LD_PRELOAD="$rtlib" UCX_TLS=tcp UCX_PSEL_CALIBRATION="${cal_a%.txt}_any.txt")
               cenv=(LD_PRELOAD="$rtlib" UCX_TLS=tcp UCX_PSEL_CALIBRATION="${cal_b%.txt}_any.txt") ;;
    esac
    port=$((port + 1))
    b1=$(rails_bytes "$dev1") b2=$(rails_bytes "$dev2")
    ip netns exec "$ns_a" env "${senv[@]}" timeout -k 5 120 "$bin" -p "$port" \
        >"$file.server" 2>&1 &
    spid=$!; pids+=("$spid")
    wait_listen "$ns_a" "$port" "$spid" || { echo "- 0 0"; return; }
    ip netns exec "$ns_b" env "${cenv[@]}" timeout -k 5 120 "$bin" "$a1" \
        -p "$port" -t "$test" -s "$size" -n "$iters" -w 2 -f >"$file" 2>&1
    s=$?
    wait "$spid" 2>/dev/null
    b1=$(( $(rails_bytes "$dev1") - b1 )) b2=$(( $(rails_bytes "$dev2") - b2 ))
    if [ $s != 0 ]; then echo "- $b1 $b2"; return; fi
    # -f: one line "iterations p50 avg overall bw_avg bw_overall mr_avg mr_overall"
    awk -v t="$test" -v b1="$b1" -v b2="$b2" '
        $1 ~ /^[0-9]+$/ && NF >= 8 { v = (t == "tag_lat") ? $2 : $6 }
        END { print (v == "" ? "-" : v), b1, b2 }' "$file"
}

# ratio CASE REF: the median of CASE / REF over the rounds where both ran
# (the test and size of the report loop), with their range
ratio() {
    awk -F'\t' -v t="$test" -v s="$sz" -v c="$1" -v ref="$2" '
        $1 == t && $2 == s && $5 != "-" { if ($3 == ref) u[$4] = $5; if ($3 == c) v[$4] = $5 }
        END { for (r in v) if ((r in u) && u[r] > 0) print v[r] / u[r] }' "$res" |
        sort -g | awk '{ a[NR] = $1 }
            END { if (NR == 0) { print "-"; exit }
                  m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                  printf "%.2f (%.2f-%.2f)", m, a[1], a[NR] }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

res=$out/results.tsv
: >"$res"
for test in $tests; do
    for sz in $sizes; do
        size=$(bytes_of "$sz")
        if is_bw "$test"; then
            iters=$(( 268435456 / size )); [ $iters -lt 8 ] && iters=8
        else
            iters=$(( 67108864 / size )); [ $iters -lt 4 ] && iters=4
        fi
        for r in $(seq 1 "$runs"); do
            for cas in $(cases_of "$test"); do # alternating: a change of the machine hits all
                line=$(run "$cas" "$test" "$size" "$iters" "$out/$test.$sz.$cas.$r")
                printf '%s\t%s\t%s\t%s\t%s\n' "$test" "$sz" "$cas" "$r" "$line" | tr ' ' '\t' >>"$res"
            done
        done
    done
done

# --- the report -------------------------------------------------------------------
echo
echo "### Unequal rails: $rails_slow tbf rate $rate, the other unshaped; rails measured alone: $dev1 ${bw1:-?} MB/s, $dev2 ${bw2:-?} MB/s (sum $(awk -v a="${bw1:-0}" -v b="${bw2:-0}" 'BEGIN { printf "%.0f", a + b }') MB/s)"
for test in $tests; do
    echo
    if is_bw "$test"; then
        echo "#### $test: MB/s (median of $runs), the share of bytes on $dev1 / $dev2, the median against the sum of the rails, and the median of each round's ratio to stock (range)"
        echo
        if [ "$test" = ucp_put_bw ]; then
            echo "| size | case | MB/s | $dev1 / $dev2 bytes | of the rails' sum | x ucx | x ucx-rma2 |"
            echo "|-----:|------|-----:|------------------|------------------:|------:|------:|"
        else
            echo "| size | case | MB/s | $dev1 / $dev2 bytes | of the rails' sum | x ucx |"
            echo "|-----:|------|-----:|------------------|------------------:|------:|"
        fi
    else
        echo "#### tag_lat: p50 latency in usec (median of $runs), the share of bytes on $dev1 / $dev2"
        echo
        echo "| size | case | usec | $dev1 / $dev2 bytes |"
        echo "|-----:|------|-----:|------------------|"
    fi
    for sz in $sizes; do
        for cas in $(cases_of "$test"); do
            v=$(awk -F'\t' -v t="$test" -v s="$sz" -v c="$cas" '$1 == t && $2 == s && $3 == c && $5 != "-" { print $5 }' "$res" | median)
            split=$(awk -F'\t' -v t="$test" -v s="$sz" -v c="$cas" '$1 == t && $2 == s && $3 == c { x += $6; y += $7 }
                END { if (x + y > 0) printf "%.0f%% / %.0f%%", 100 * x / (x + y), 100 * y / (x + y); else print "-" }' "$res")
            if is_bw "$test"; then
                of=$(awk -v v="$v" -v a="${bw1:-0}" -v b="${bw2:-0}" 'BEGIN { if (v != "-" && a + b > 0) printf "%.0f%%", 100 * v / (a + b); else print "-" }')
                if [ "$test" = ucp_put_bw ]; then
                    echo "| $sz | $cas | $v | $split | $of | $(ratio "$cas" ucx) | $(ratio "$cas" ucx-rma2) |"
                else
                    echo "| $sz | $cas | $v | $split | $of | $(ratio "$cas" ucx) |"
                fi
            else
                echo "| $sz | $cas | $v | $split |"
            fi
        done
    done
done
echo
echo "MB/s as the tools print it (2^20 B/s), the rails' sum too (the calibration file has B/s)."
echo "Each case ran $runs time(s) per point, the cases alternating; the machine state is not controlled (other load is not stopped)."
[ -n "$keep" ] && echo "Raw outputs and results.tsv: $out"
exit 0
