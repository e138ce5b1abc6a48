#!/bin/sh
# Addresses and routes of this node; run inside the node (containerlab exec or mast-lab).
set -e
sysctl -qw net.ipv6.conf.all.forwarding=1
# Like a real router, keep the configured addresses while a link is down.
sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1
ip -6 addr add 2001:db8:a00:1::2/64 dev eth1 nodad
ip -6 addr add 2001:db8:a01:1::1/64 dev eth2 nodad
ip -6 addr add 2001:db8:b01:1::1/64 dev eth2 nodad
