"""Fake peers and a daemon fixture for SRMS unit tests (real daemons are in integration/)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

from mast_common.config import parse_config
from mast_common.prefix import IPv6Network, PrefixStatus

from srms.actions import PeerError
from srms.config import SrmsConfig


@dataclass
class FakePeer:
    """Records what it was told; fails while `down` is set."""

    target: str
    down: bool = False
    delay: float = 0.0
    calls: list[tuple[float, IPv6Network, PrefixStatus, bool]] = field(default_factory=list)
    failures: int = 0

    @property
    def name(self) -> str:
        return self.target

    async def apply(self, prefix: IPv6Network, status: PrefixStatus, *, is_new: bool) -> None:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.down:
            self.failures += 1
            raise PeerError(f"{self.target} is down")
        self.calls.append((time.time(), prefix, status, is_new))

    async def close(self) -> None:
        return None

    def statuses(self, prefix: IPv6Network) -> list[PrefixStatus]:
        return [s for _, p, s, _ in self.calls if p == prefix]


def make_config(tmp_path: Path, *, hold_down: float = 0.5, max_ttl: float = 0.3) -> SrmsConfig:
    raw = {
        "daemon": {
            "state_db": str(tmp_path / "state.db"),
            "control_socket": str(tmp_path / "control.sock"),
            "metrics_port": -1,
            "resync_on_start": False,
        },
        "timers": {"hold_down": hold_down, "retry_initial": 0.05, "retry_max": 0.2},
        "providers": [
            {
                "name": "A",
                "prefixes": ["2001:db8:a::/48"],
                "access": {"router": "10.0.0.1", "if_index": 2},
            },
            {
                "name": "B",
                "prefixes": ["2001:db8:b::/48"],
                "access": {"router": "10.0.0.1", "if_index": 3},
            },
        ],
        "dns": [
            {
                "zone": "example.",
                "server": "127.0.0.1",
                "key_name": "k.",
                "key_secret": "c2VjcmV0",
                "max_ttl": max_ttl,
            }
        ],
    }
    return parse_config(raw, SrmsConfig, "test")


async def wait_until(probe: object, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")
