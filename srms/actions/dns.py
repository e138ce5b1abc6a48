"""DNS: one RFC 2136 update (TSIG) of the zone's prefix-status record per transition.

mast_dns is blocking (dnspython): it runs in a thread. The Knot module then stops (or starts
again) synthesising the prefix's addresses in AAAA answers for every name of the zone.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from mast_common.prefix import IPv6Network, PrefixStatus

from srms.actions import PeerError
from srms.config import DnsZone


class DnsPeer:
    def __init__(self, zone: DnsZone) -> None:
        self.zone = zone
        self._updater: Any = None

    @property
    def name(self) -> str:
        return f"dns:{self.zone.zone}@{self.zone.server}"

    def _open(self) -> Any:
        if self._updater is None:
            try:
                update = importlib.import_module("mast_dns.update")
            except ImportError as exc:
                raise PeerError(f"mast_dns.update is not installed: {exc}") from None
            key = update.TsigKey(self.zone.key_name, self.zone.key_secret, self.zone.key_algorithm)
            self._updater = update.ZoneUpdater(
                self.zone.server,
                self.zone.zone,
                key,
                port=self.zone.port,
                timeout=self.zone.timeout,
                retries=1,  # SRMS's dispatcher retries with backoff itself
            )
        return self._updater

    def _apply(self, prefix: IPv6Network, status: PrefixStatus) -> None:
        # set_prefix_status adds a prefix not yet listed (renumbering), removes a withdrawn
        # one, and sends nothing when the zone already says so: exactly the idempotent action
        # a retry or a restart needs.
        self._open().set_prefix_status(prefix, status)

    async def apply(self, prefix: IPv6Network, status: PrefixStatus, *, is_new: bool) -> None:
        try:
            await asyncio.to_thread(self._apply, prefix, status)
        except PeerError:
            raise
        except Exception as exc:  # DnsUpdateError, dns.exception.Timeout, OSError, ...
            rcode = getattr(exc, "rcode", None)
            where = f"dns {self.zone.zone}@{self.zone.server}:{self.zone.port}"
            detail = f"rcode {rcode}: " if rcode is not None else ""
            raise PeerError(f"{where}: {detail}{type(exc).__name__}: {exc}") from None

    async def close(self) -> None:
        return None
