#!/bin/sh
# Container entrypoint of a MAST lab node under containerlab: start the daemons listed in
# MAST_DAEMONS with the configs bound at /etc/mast (containerlab runs /etc/mast/network.sh
# through the node's `exec` once the links exist). `mast-lab` does the same in namespaces.
set -e
node=$(hostname)
run=/run/mast/$node
mkdir -p "$run"
for daemon in $MAST_DAEMONS; do
  case $daemon in
    bird) bird -c /etc/mast/bird.conf -s "$run/bird.ctl" ;;
    snmpd) mkdir -p "$run/snmp"; snmpd -C -c /etc/mast/snmpd.conf -p "$run/snmpd.pid" ;;
    kea) kea-dhcp6 -c /etc/mast/kea-dhcp6.json & ;;
    knot) knotd -d -c /etc/mast/knot.conf ;;
    srms) srms -c /etc/mast/srms.toml run & ;;
    mast-client) mast-client run -i "${MAST_CLIENT_INTERFACE:-eth1}" ${MAST_PUSH_KEY:+--key "$MAST_PUSH_KEY"} & ;;
    *) echo "mast-lab-node: unknown daemon $daemon" >&2; exit 64 ;;
  esac
done
exec sleep infinity
