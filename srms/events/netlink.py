"""netlink link events, when SRMS runs on the border router itself: immediate, no polling."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mast_common.log import get_logger

from srms.config import Provider
from srms.events import Emit
from srms.statemachine import LinkEvent

log = get_logger(__name__)

IFF_UP = 0x1
IFF_RUNNING = 0x40  # carrier and administratively up: the kernel's "operationally up"


def link_is_up(flags: int, deleted: bool = False) -> bool:
    return not deleted and bool(flags & IFF_UP) and bool(flags & IFF_RUNNING)


class NetlinkSource:
    name = "netlink"

    def __init__(self, providers: list[Provider]) -> None:
        self.by_ifname = {
            p.access.netlink_ifname: p.name for p in providers if p.access.netlink_ifname
        }
        self.state: dict[str, bool] = {}
        self.ready = asyncio.Event()

    def _seen(self, emit: Emit, msg: Any, received: float) -> None:
        ifname = msg.get("ifname")
        provider = self.by_ifname.get(ifname)
        if provider is None:
            return
        up = link_is_up(int(msg.get("flags") or 0), msg.get("event") == "RTM_DELLINK")
        if self.state.get(ifname) == up:
            return  # address or statistics change on a link whose state is unchanged
        self.state[ifname] = up
        detail = f"{ifname} operstate={msg.get('operstate')}"
        emit(LinkEvent(provider, up, "netlink", detail, received))

    async def run(self, emit: Emit) -> None:
        from pyroute2 import AsyncIPRoute

        async with AsyncIPRoute() as events:
            await events.bind()
            # The current state first (a link may have gone down while SRMS was stopped).
            async with AsyncIPRoute() as dump:
                async for msg in await dump.link("dump"):
                    self._seen(emit, msg, time.time())
            self.ready.set()
            log.info("netlink.watching", interfaces=sorted(self.by_ifname))
            while True:
                async for msg in events.get():
                    if msg.get("event") in ("RTM_NEWLINK", "RTM_DELLINK"):
                        try:
                            self._seen(emit, msg, time.time())
                        except Exception as exc:  # one odd message must not end the watch
                            log.warning("netlink.unreadable", error=repr(exc))
