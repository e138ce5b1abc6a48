#!/bin/sh
# Addresses and routes of this node; run inside the node (containerlab exec or mast-lab).
set -e
ip -6 addr add 2001:db8:f01:1::100/64 dev eth1 nodad
ip -6 route add default via 2001:db8:f01:1::1 dev eth1
