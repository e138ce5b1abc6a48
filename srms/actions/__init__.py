"""Actions: one module per peer SRMS tells about a prefix status (kea, dns, netconf).

Each peer is a `Peer`: `apply` sets one prefix's status on it and must be idempotent (SRMS
re-sends after a restart or a retry); it raises `PeerError` (with the peer's words) when the
peer is down or refuses, and the dispatcher retries with backoff.
"""

from __future__ import annotations

from typing import Protocol

from mast_common.prefix import IPv6Network, PrefixStatus


class PeerError(Exception):
    """The peer could not be reached or refused the change; `retry` says whether to try again."""

    def __init__(self, message: str, *, retry: bool = True) -> None:
        super().__init__(message)
        self.retry = retry


class Peer(Protocol):
    @property
    def name(self) -> str:
        """Target id, stable across restarts (pending actions are stored under it)."""
        ...

    async def apply(self, prefix: IPv6Network, status: PrefixStatus, *, is_new: bool) -> None: ...

    async def close(self) -> None: ...
