#!/bin/sh
# Provider B with ITMP: no static tunnel; the TMS provisions one over NETCONF when the stub asks.
set -e
sysctl -qw net.ipv6.conf.all.forwarding=1
sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1
ip -6 addr add 2001:db8:b00::1/128 dev lo
ip -6 addr add 2001:db8:f00:b::2/64 dev eth1 nodad
ip -6 addr add 2001:db8:b00:2::1/64 dev eth2 nodad
