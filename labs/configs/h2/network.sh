#!/bin/sh
# Addresses and routes of this node; run inside the node (containerlab exec or mast-lab).
set -e
# One address per provider prefix, same interface ID (MAST multi-addressing).
ip -6 addr add 2001:db8:a01:1::102/64 dev eth1 nodad
ip -6 addr add 2001:db8:b01:1::102/64 dev eth1 nodad
# r1 stays the first hop; it reaches B through r2 over iBGP when its A link is down.
ip -6 route add default via 2001:db8:b01:1::1 dev eth1
