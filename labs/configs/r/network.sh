#!/bin/sh
# r: the stub's single border router in the ITMP variant, with both access links (ITMP's stub
# client provisions one router that holds them) and one tunnel endpoint per provider prefix.
set -e
sysctl -qw net.ipv6.conf.all.forwarding=1
sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1
ip -6 addr add 2001:db8:a01::1/128 dev lo
ip -6 addr add 2001:db8:b01::1/128 dev lo
ip -6 addr add 2001:db8:a00:1::2/64 dev eth1 nodad
ip -6 addr add 2001:db8:b00:2::2/64 dev eth2 nodad
ip -6 addr add 2001:db8:a01:1::1/64 dev eth3 nodad
ip -6 addr add 2001:db8:b01:1::1/64 dev eth3 nodad
