#!/usr/bin/env bash
# Selection regret of put, get and active messages inside stock UCX: for
# each transport (shm, tcp over loopback), ucx_perftest test and size, it
# times stock UCP, UCP with protosel's protocol tier (the plugin of a UCX
# >= 1.22, or preloaded) and each of UCP's protocols forced (below; UCX
# 1.16 and later names), in alternating order, ROUNDS times. Per size: the
# medians, the best forced protocol (lowest median; put and get by active
# messages only where no offload protocol ran, as UCP's default
# UCX_PREFER_OFFLOAD=y: their own time is the "emulation" column) and the
# regret of stock and of protosel: their time / the best forced one's, the
# median over the rounds of the ratio within a round. Then the worst
# regret and the geometric mean per transport and test.
#
#   bench/ucx_regret.sh [-b BUILD] [-m plugin|preload] [-r ROUNDS]
#                       [-c CALIBRATION] [-t "shm tcp"] [-T "TESTS"]
#                       [-s "SIZES"] [-v]
#
# BUILD: a protosel build directory (default build-ucx-1.22.0); ROUNDS
# default 3; CALIBRATION: UCX_PSEL_CALIBRATION for protosel (default none:
# attribute lines); TESTS default "ucp_put_bw ucp_get ucp_am_bw
# ucp_am_lat"; SIZES default "8 1024 65536 1048576 4194304". A forced
# protocol that UCP does not run at a size does not apply there (-v says
# what UCP ran in each forced run, on stderr). A benchmark: it prints
# figures and never fails on speed. See bench/README.md, "Put, get and
# active messages: regret (ucx_regret.sh)".
set -u -o pipefail
me=${0##*/}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-ucx-1.22.0 rounds=3 calib=none mode= trs="shm tcp" verbose=
tests="ucp_put_bw ucp_get ucp_am_bw ucp_am_lat"
sizes="8 1024 65536 1048576 4194304"
while getopts "b:m:r:c:t:T:s:vh" opt; do
    case $opt in
    b) build=$OPTARG ;; m) mode=$OPTARG ;; r) rounds=$OPTARG ;;
    c) calib=$OPTARG ;; t) trs=$OPTARG ;; T) tests=$OPTARG ;; s) sizes=$OPTARG ;;
    v) verbose=1 ;;
    *) sed -n '2,27p' "$0"; exit 1 ;;
    esac
done
pids=() srv_pin=() cli_pin=()
# shellcheck source=bench/lib_perftest.sh
. "$top/bench/lib_perftest.sh"   # ucx_lib_setup, pt_run_pair, ucx_time, median
ucx_lib_setup
clear_ucx_env
tmp=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

declare -A tr_env=([shm]="UCX_TLS=posix,sysv,cma" [tcp]="UCX_TLS=tcp UCX_NET_DEVICES=lo")
# UCP's protocols of each test, each forced as psel_calibrate --ucp forces
# it (docs/calibration.md): NAME|what UCP's table calls it|settings. Put
# and get: UCX_PROTOS leaves the protocol and the one by active messages
# (a list that leaves UCP no protocol for some size crashes it); active
# messages: thresholds and the rendezvous scheme. A forced run counts only
# where the client's UCX_PROTO_INFO table says the protocol ran. No field
# has a space (the list is split on them); settings are split on ';'.
forced() {
    case $1 in
    ucp_put_*) echo "put/offload/short|^short$|UCX_PROTOS=put/offload/short,put/am/bcopy" \
                    "put/offload/bcopy|^copy-in$|UCX_PROTOS=put/offload/bcopy,put/am/bcopy;UCX_BCOPY_THRESH=0" \
                    "put/offload/zcopy|^zero-copy$|UCX_PROTOS=put/offload/zcopy,put/am/bcopy;UCX_ZCOPY_THRESH=0" \
                    "put/am/bcopy|^software.emulation$|UCX_PROTOS=put/am/bcopy" ;;
    ucp_get)   echo "get/bcopy|^copy-out$|UCX_PROTOS=get/bcopy,get/am/bcopy,put/*;UCX_BCOPY_THRESH=0" \
                    "get/zcopy|^zero-copy$|UCX_PROTOS=get/zcopy,get/am/bcopy,put/*;UCX_ZCOPY_THRESH=0" \
                    "get/am/bcopy|^software.emulation$|UCX_PROTOS=get/am/bcopy,put/*" ;;
    ucp_am_*)  echo "am/egr/short|^short$|UCX_RNDV_THRESH=inf;UCX_ZCOPY_THRESH=inf;UCX_BCOPY_THRESH=inf" \
                    "am/egr/bcopy|^(multi-frag.)?copy-in|UCX_RNDV_THRESH=inf;UCX_ZCOPY_THRESH=inf;UCX_BCOPY_THRESH=0" \
                    "am/egr/zcopy|^(multi-frag.)?zero-copy$|UCX_RNDV_THRESH=inf;UCX_ZCOPY_THRESH=0" \
                    "am/rndv/get|^rendezvous.*read.from.remote|UCX_RNDV_THRESH=0;UCX_RNDV_SCHEME=get_zcopy" \
                    "am/rndv/put|^rendezvous.*write.to.remote|UCX_RNDV_THRESH=0;UCX_RNDV_SCHEME=put_zcopy" \
                    "am/rndv/am|^rendezvous.*(copy-in|fragmented|zero-copy$)|UCX_RNDV_THRESH=0;UCX_RNDV_SCHEME=am" ;;
    *)         echo "$me: -T $1: put, get and active-message tests only" >&2; exit 2 ;;
    esac
}
# ran FILE TEST SIZE: the description of the row at SIZE of the client's
# last table of TEST's operation (streamed for the *_bw tests)
ran() {
    local title
    case $2 in
    ucp_put_bw) title='by ucp_put\*\(multi\) from' ;;
    ucp_get)    title='by ucp_get\*\(multi\) into' ;;
    ucp_am_bw)  title='by ucp_am_send\*\(multi\) from' ;;
    ucp_am_lat) title='by ucp_am_send\* from' ;;
    esac
    sed 's/^\[[^]]*\] *\[[^]]*\] *//' "$1" | awk -F'|' -v title="$title" -v size="$3" '
        function bytes(v,  m) {
            if (v == "inf") return 2 ^ 64
            m = (v ~ /K$/) ? 1024 : (v ~ /M$/) ? 1048576 : (v ~ /G$/) ? 2 ^ 30 : 1
            sub(/[KMG]$/, "", v); return v * m }
        $0 ~ title { on = 1; next }
        on && /^\+/ && seen { on = 0; seen = 0 }
        on && $2 ~ /^ *[0-9]+[KMG]?(\.\.([0-9]+[KMG]?|inf))? *$/ {
            seen = 1; r = $2; gsub(/ /, "", r); n = split(r, b, /\.\./)
            lo = bytes(b[1]); hi = (n == 2) ? bytes(b[2]) : lo
            if (size >= lo && size <= hi) {
                d = $3; gsub(/^ +| +$/, "", d); sub(/^\(\?\) /, "", d); desc = d } }
        END { print desc }'
}

for test in $tests; do forced "$test" >/dev/null || exit 2; done
echo "# $me $(date -u +%F), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)," \
     "$("$bindir/ucx_info" -v | sed -n 's/^# \(Library version: \|Version \)/UCX /p' | head -1)," \
     "protosel by $mode, UCX_PSEL_CALIBRATION=$calib, $rounds rounds, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# time per message [us]: *_lat average latency, others size / bandwidth; regret = time / best forced's"
printf '| %-4s | %-10s | %8s | %9s | %9s | %-18s | %9s | %9s | %-14s | %-14s |\n' \
    tr test size stock protosel "best forced" time emulation "stock regret" "protosel regret"
printf '|------|------------|---------:|----------:|----------:|--------------------|----------:|----------:|----------------|----------------|\n'
summary=$tmp/summary
: >"$summary"
for tr in $trs; do
    for test in $tests; do
        read -r -a runs <<<"stock psel $(forced "$test")"
        for size in $sizes; do
            # about 0.4 s of data each, 100 to 200000 messages
            n=$((400000000 / (size + 2000)))
            n=$((n > 200000 ? 200000 : (n < 100 ? 100 : n)))
            res=$tmp/$tr-$test-$size
            : >"$res"
            for round in $(seq 1 "$rounds"); do
                # alternate the order: the runs rotate by one each round
                for i in "${!runs[@]}"; do
                    run=${runs[(i + round - 1) % ${#runs[@]}]}
                    # shellcheck disable=SC2206
                    envs=(${tr_env[$tr]})
                    case $run in
                    stock) ;;
                    psel)  envs+=("${psel_env[@]}" UCX_PSEL_CALIBRATION="$calib") ;;
                    *)     IFS=";" read -r -a settings <<<"${run##*|}"
                           envs+=("${settings[@]}" UCX_PROTO_INFO=y) ;;
                    esac
                    f=$tmp/run
                    pt_run_pair "$bin" "$f" 60 envs envs -t "$test" -s "$size" -n "$n" -w $((n / 10)) -f ||
                        continue   # UCP could not run it at all
                    if [ "$run" != stock ] && [ "$run" != psel ]; then
                        desc=$(ran "$f" "$test" "$size")
                        want=${run#*|}; want=${want%%|*}
                        [ -n "$verbose" ] && echo "# $tr $test $size ${run%%|*} forced: UCP ran '$desc'" >&2
                        [[ $desc =~ $want ]] || continue   # it ran another protocol
                    fi
                    echo "$round ${run%%|*} $(ucx_time "$test" "$size" "$f")" >>"$res"
                done
            done
            # each forced protocol's median over the rounds; the best is the
            # lowest, put and get by active messages only where no offload
            # protocol ran (UCP's UCX_PREFER_OFFLOAD=y: they need the target
            # to progress, which ucx_perftest's does all the time)
            awk '$2 != "stock" && $2 != "psel" { print $2, $3 }' "$res" |
                sort -k1,1 | awk '{ v[$1] = v[$1] " " $2 } END { for (p in v) print p, v[p] }' |
                while read -r p ts; do echo "$p $(printf '%s\n' $ts | median)"; done |
                sort -g -k2 >"$res.forced"
            emul_t=$(awk '$1 ~ /^(put|get)\/am\// { print $2 }' "$res.forced")
            read -r best best_t < <({ grep -Ev '^(put|get)/am/' "$res.forced"; cat "$res.forced"; } | head -1)
            regret() {  # RUN: median over the rounds of its time / best's
                awk -v r="$1" -v b="$best" '$2 == r { t[$1] = $3 } $2 == b { u[$1] = $3 }
                    END { for (k in t) if (k in u) print t[k] / u[k] }' "$res" | median
            }
            stock_t=$(awk '$2 == "stock" { print $3 }' "$res" | median)
            psel_t=$(awk '$2 == "psel" { print $3 }' "$res" | median)
            if [ -n "${best:-}" ]; then
                rs=$(regret stock) rp=$(regret psel)
                echo "$tr $test $size $rs $rp" >>"$summary"
            else
                best=- best_t=- rs=- rp=-
            fi
            printf '| %-4s | %-10s | %8s | %9s | %9s | %-18s | %9s | %9s | %-14s | %-14s |\n' \
                "$tr" "$test" "$size" "$stock_t" "$psel_t" "$best" "$best_t" "${emul_t:--}" "$rs" "$rp"
            best=
        done
    done
done
echo
echo "# worst regret (size) and geometric mean per transport and test"
printf '| %-4s | %-10s | %-24s | %-24s |\n' tr test stock protosel
printf '|------|------------|--------------------------|--------------------------|\n'
awk '$4 != "-" && $5 != "-" {
        k = $1 " " $2
        if (!(k in ws) || $4 > ws[k]) { ws[k] = $4; wss[k] = $3 }
        if (!(k in wp) || $5 > wp[k]) { wp[k] = $5; wps[k] = $3 }
        ls[k] += log($4); lp[k] += log($5); n[k]++
        if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
     END { for (i = 1; i <= m; i++) { k = order[i]; split(k, f, " ")
              printf "| %-4s | %-10s | %-24s | %-24s |\n", f[1], f[2],
                  sprintf("%.2f (%d B), %.3f", ws[k], wss[k], exp(ls[k] / n[k])),
                  sprintf("%.2f (%d B), %.3f", wp[k], wps[k], exp(lp[k] / n[k])) } }' "$summary"
