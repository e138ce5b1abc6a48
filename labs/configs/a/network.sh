#!/bin/sh
# Addresses and routes of this node; run inside the node (containerlab exec or mast-lab).
set -e
sysctl -qw net.ipv6.conf.all.forwarding=1
# Like a real router, keep the configured addresses while a link is down.
sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1
ip -6 addr add 2001:db8:a00::1/128 dev lo
ip -6 addr add 2001:db8:f00:a::2/64 dev eth1 nodad
ip -6 addr add 2001:db8:a00:1::1/64 dev eth2 nodad
# Backup tunnel to the stub's r2, carried through B's network (static until ITMP provisions it).
ip link add tun-r2 type vxlan id 4201 local 2001:db8:a00::1 remote 2001:db8:b01::2 dstport 4789
ip link set tun-r2 mtu 1400 up
ip -6 addr add 2001:db8:a01:fff0::1/64 dev tun-r2 nodad
