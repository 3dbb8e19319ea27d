#!/usr/bin/env bash
# The queues and the congestion control 'netlab up' sets (root only; exits 77, "skipped",
# without root or network namespaces). On two-subnets, under each --queues setting and under
# a topology file's own keys, the qdiscs in the namespaces are what was asked: a 'fifo' link
# end has one HTB leaf class at the link rate and one bfifo of the buffer's size; a 'fair' one
# has a class per host pair and one for pure ACKs, served first. Every host namespace runs the congestion control asked for, and
# 'netlab info --json' records all of it. Bad values: one line, exit 2 (command line) or 1 (file).
#   usage: netlab_queues_test.sh SOURCE_DIR
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
src=$(realpath "$1")
netlab=$src/scripts/netlab
test_name="netlab queues test"
# shellcheck source=netlab_lib.sh
source "$(dirname "$0")/netlab_lib.sh"

tag=nqt$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-netlab-queues.XXXXXX")
netlab_labs=("$tag")
netlab_cleanup "$netlab" "$tag" "$tmp"

# leaves NS DEV: "CLASSES BFIFO_LIMITS" of DEV's egress: HTB leaf classes, and the bfifo limits.
leaves() {
    local classes limits
    classes=$(tc -n "$1" class show dev "$2" | grep -c ' leaf ' || true)
    limits=$(tc -n "$1" qdisc show dev "$2" | awk '$2 == "bfifo" {print $NF}' | sort -u | tr '\n' ' ')
    echo "$classes ${limits% }"
}

allowed_before=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)

# expect LAB_ARGS... -- HOST_EGRESS SWITCH_PORT UPLINK CC: builds two-subnets, checks it, takes it down.
expect() {
    local args=() want
    while [[ $1 != -- ]]; do args+=("$1"); shift; done
    shift
    "$netlab" up "$src/conf/netlab/two-subnets.yaml" --name "$tag" "${args[@]}" > /dev/null 2> "$tmp/up.err" \
        || fail "up ${args[*]}: $(cat "$tmp/up.err")"
    # 8 hosts: a host's egress carries 7 pairs (+1 default class, +1 for ACKs); a switch
    # port 7 (+2); an uplink 4 x 4 (+2).
    local -A fair=([host]="9" [port]="9" [up]="18")
    local what ns dev got q i=0
    for what in host port up; do
        q=${*:$((++i)):1}
        case $what in
            host) ns=hcl-$tag.a1 dev=hcl-eth0 ;;
            port) ns=hcl-$tag.sw.a dev=hcl-a1 ;;
            up) ns=hcl-$tag.router dev=hcl-a ;;
        esac
        got=$(leaves "$ns" "$dev")
        if [[ $q == fair ]]; then want="${fair[$what]}"; else want="1 ${BUF:-512Kb}"; fi
        [[ ${got%% *} == "${want%% *}" ]] || fail "${args[*]}: $what ($ns $dev): $got, expected $want ($q)"
        if [[ $q == fifo ]]; then
            [[ $got == "$want" ]] || fail "${args[*]}: $what ($ns $dev): bfifo limit ${got#* }, expected ${want#* }"
        fi
        echo "netlab queues test: ${args[*]:-(defaults)}: $what $q: $got"
    done
    local h cc
    for h in a1 a4 b1 b4; do
        cc=$(ip netns exec "hcl-$tag.$h" sysctl -n net.ipv4.tcp_congestion_control)
        [[ $cc == "$4" ]] || fail "${args[*]}: $h runs $cc, expected $4"
    done
    "$netlab" info "$tag" --json | python3 -c '
import json, sys
i = json.load(sys.stdin)
want = sys.argv[1:]
assert i["cc"] == want[3], i["cc"]
for s in i["subnets"]:
    got = [s["queue_host_egress"], s["queue_switch_port"], s["queue_uplink"]]
    assert got == want[:3], (s["name"], got, want)
' "$@" || fail "info --json does not record $*"
    "$netlab" down "$tag" > /dev/null
}

expect -- fair fifo fifo cubic
expect --queues realistic --cc bbr -- fair fifo fifo bbr
expect --queues fair -- fair fair fair cubic
BUF=1Mb expect --queues fifo --buffer 1MiB -- fifo fifo fifo cubic

# A fair link end serves pure ACKs first, in a class of their own (1:3), as fq_codel serves
# a flow with nothing queued: while a4 streams 4 MB to a1, a1's NIC sends the ACKs there,
# all of them short, and next to nothing in the class of the pair a1 -> a4.
"$netlab" up "$src/conf/netlab/two-subnets.yaml" --name "$tag" > /dev/null 2> "$tmp/up.err" || fail "up: $(cat "$tmp/up.err")"
a1=$("$netlab" info "$tag" --json | python3 -c 'import json,sys; print(next(h["address"] for h in json.load(sys.stdin)["hosts"] if h["name"] == "a1"))')
ip netns exec "hcl-$tag.a1" timeout 20 python3 -c '
import socket
s = socket.create_server(("", 7999)); c, _ = s.accept()
while c.recv(65536): pass' &
sleep 0.5
ip netns exec "hcl-$tag.a4" timeout 20 python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 7999)); c.sendall(bytes(4 << 20)); c.close()' "$a1" || fail "stream a4 -> a1 failed"
wait
# "Sent B bytes P pkt" of class 1:3 and of the busiest other leaf class.
read -r ack_b ack_p < <(tc -s -n "hcl-$tag.a1" class show dev hcl-eth0 classid 1:3 | awk '/Sent/ {print $2, $4}')
other_p=$(tc -s -n "hcl-$tag.a1" class show dev hcl-eth0 | awk '/^class htb/ {c = $3} /Sent/ && c != "1:3" && c != "1:1" {print $4}' | sort -n | tail -1)
[[ ${ack_p:-0} -ge 50 ]] || fail "a1's ACK class sent ${ack_p:-0} packets for a 4 MB stream it received"
(( ack_b < 256 * ack_p )) || fail "a1's ACK class sent $ack_b bytes in $ack_p packets: not only short ones"
(( other_p * 10 < ack_p )) || fail "a1 sent $other_p packets in a pair's class against $ack_p ACKs first"
"$netlab" down "$tag" > /dev/null
echo "netlab queues test: ACKs first: $ack_p packets, $ack_b bytes (other classes at most $other_p packets)"

# Keys of the file: global queues/cc, a subnet's own queues and buffer.
sed -e 's/^name: two-subnets/name: two-subnets\nqueues: fair\ncc: bbr/' \
    -e '0,/uplink: 40Mbit/s//uplink: 40Mbit\n    queues: fifo\n    buffer: 256KiB/' \
    "$src/conf/netlab/two-subnets.yaml" > "$tmp/t.yaml"
"$netlab" up "$tmp/t.yaml" --name "$tag" > /dev/null 2> "$tmp/up.err" || fail "up t.yaml: $(cat "$tmp/up.err")"
[[ $(leaves "hcl-$tag.router" hcl-a) == "1 256Kb" ]] || fail "subnet a: $(leaves "hcl-$tag.router" hcl-a)"
[[ $(leaves "hcl-$tag.router" hcl-b | cut -d' ' -f1) == 18 ]] || fail "subnet b: $(leaves "hcl-$tag.router" hcl-b)"
[[ $(ip netns exec "hcl-$tag.b1" sysctl -n net.ipv4.tcp_congestion_control) == bbr ]] || fail "file cc: not bbr"
"$netlab" down "$tag" > /dev/null
echo "netlab queues test: file keys: subnet a fifo 256 KiB, subnet b fair, cc bbr"

for bad in "--queues fast" "--cc reno" "--buffer 12parsecs"; do
    # shellcheck disable=SC2086
    if "$netlab" up "$src/conf/netlab/two-subnets.yaml" --name "$tag" $bad > /dev/null 2> "$tmp/bad.err"; then
        fail "up $bad succeeded"
    fi
    [[ $(wc -l < "$tmp/bad.err") -eq 1 ]] || fail "up $bad: $(cat "$tmp/bad.err")"
done
sed 's/^name: two-subnets/name: two-subnets\nqueues: fast/' "$src/conf/netlab/two-subnets.yaml" > "$tmp/bad.yaml"
if "$netlab" up "$tmp/bad.yaml" --name "$tag" > /dev/null 2> "$tmp/bad.err"; then fail "queues: fast accepted"; fi
grep -q "bad.yaml: queues: 'fast' is not one of" "$tmp/bad.err" || fail "bad file: $(cat "$tmp/bad.err")"
[[ -z $(ip netns list | grep "hcl-$tag\.") ]] || fail "a refused lab left namespaces"
# A machine-wide setting netlab widened for the labs is as it was once no lab is up.
if [[ -z $(ip netns list | grep '^hcl-') ]]; then
    [[ $(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control) == "$allowed_before" ]] ||
        fail "tcp_allowed_congestion_control left as '$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)', was '$allowed_before'"
fi
echo "netlab queues test: ok"
