"""RFC 2136 + TSIG client for the stub's authoritative DNS (Knot with mod-mast, or plain zones)."""
