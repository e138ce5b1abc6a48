"""MAST failover lab: containerlab topology realised in network namespaces."""
