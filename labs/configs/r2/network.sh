#!/bin/sh
# Addresses and routes of this node; run inside the node (containerlab exec or mast-lab).
set -e
sysctl -qw net.ipv6.conf.all.forwarding=1
# Like a real router, keep the configured addresses while a link is down.
sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1
ip -6 addr add 2001:db8:b01::2/128 dev lo
ip -6 addr add 2001:db8:b00:2::2/64 dev eth1 nodad
ip -6 addr add 2001:db8:a01:1::2/64 dev eth2 nodad
ip -6 addr add 2001:db8:b01:1::2/64 dev eth2 nodad
# The tunnel's outer packets must always leave through B, never through r1's direct A link.
ip -6 route add 2001:db8:a00::1/128 via 2001:db8:b00:2::1 dev eth1
ip link add tun-a type vxlan id 4201 local 2001:db8:b01::2 remote 2001:db8:a00::1 dstport 4789
ip link set tun-a mtu 1400 up
ip -6 addr add 2001:db8:a01:fff0::2/64 dev tun-a nodad
