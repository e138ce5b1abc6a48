"""Kea: the MAST hook's `mast-prefix-status` command starts the Broadcast Prefix Push."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mast_common.daemons.kea import KeaCommandError, kea_command
from mast_common.prefix import IPv6Network, PrefixStatus

from srms.actions import PeerError

COMMAND = "mast-prefix-status"


class KeaPeer:
    def __init__(self, socket: Path, timeout: float = 2.0) -> None:
        self.socket = socket
        self.timeout = timeout

    @property
    def name(self) -> str:
        return f"kea:{self.socket}"

    async def apply(self, prefix: IPv6Network, status: PrefixStatus, *, is_new: bool) -> None:
        args = {"prefix": str(prefix), "status": status.value}
        try:
            answer = await asyncio.to_thread(
                kea_command, self.socket, COMMAND, args, timeout=self.timeout
            )
        except (OSError, KeaCommandError) as exc:
            raise PeerError(f"kea {self.socket}: {exc}") from None
        check_answer(answer, args)

    async def close(self) -> None:
        return None


def check_answer(answer: dict[str, Any], args: dict[str, str]) -> None:
    result = answer.get("result")
    if result == 0:
        return
    text = answer.get("text", "")
    # 2 = command not supported: the hook library is not loaded (yet); retrying helps once an
    # operator fixes Kea's config. 1 = the hook refused the arguments (e.g. no subnet6 for the
    # prefix): retrying cannot help, the action is recorded as refused.
    raise PeerError(f"kea {COMMAND} {args}: result {result}: {text}", retry=result != 1)
