"""Inter-domain Tunnel Management Protocol: backup tunnels with BGP, provisioned over NETCONF."""
