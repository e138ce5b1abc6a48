"""RFC 2136 + TSIG client for the stub's authoritative DNS (Knot with mod-mast, or plain zones)."""

from mast_dns.update import DnsUpdateError, TsigKey, ZoneUpdater

__all__ = ["DnsUpdateError", "TsigKey", "ZoneUpdater"]
