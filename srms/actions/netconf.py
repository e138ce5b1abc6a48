"""NETCONF: tell a stub router (itmp's router agent) a prefix's status.

The router model (itmp/ROUTER-MODEL.md): `<router xmlns="urn:mast:router:1">` with a list
`prefix-status` keyed by prefix. The agent deprecates (preferred_lft 0) every address inside a
discouraged prefix, makes them preferred again, or removes them when withdrawn. SRMS merges into
the candidate datastore and commits when the router has one, else into running.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any
from xml.sax.saxutils import escape

from mast_common.prefix import IPv6Network, PrefixStatus

from srms.actions import PeerError
from srms.config import Router

NAMESPACE = "urn:mast:router:1"
CANDIDATE = "urn:ietf:params:netconf:capability:candidate:1.0"
NCCLIENT_TICK = 0.005


def prefix_status_config(prefix: IPv6Network, status: PrefixStatus) -> str:
    return (
        '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
        f'<router xmlns="{NAMESPACE}"><prefix-status>'
        f"<prefix>{escape(str(prefix))}</prefix><status>{escape(status.value)}</status>"
        "</prefix-status></router></config>"
    )


class NetconfPeer:
    def __init__(self, router: Router) -> None:
        self.router = router
        self._session: Any = None
        self._lock = threading.Lock()  # one edit at a time on one SSH session

    @property
    def name(self) -> str:
        return f"netconf:{self.router.name}"

    def _connect(self) -> Any:
        if self._session is not None and self._session.connected:
            return self._session
        import ncclient.transport.session as nc_session
        from ncclient import manager

        # ncclient's session thread sleeps TICK between select()s; its 0.1 s default adds up to
        # 100 ms to every RPC, a tenth of SRMS's whole failover budget.
        nc_session.TICK = NCCLIENT_TICK
        self._session = manager.connect(
            host=self.router.host,
            port=self.router.port,
            username=self.router.username,
            password=self.router.password,
            hostkey_verify=False,
            allow_agent=False,
            look_for_keys=False,
            timeout=self.router.timeout,
        )
        self._session.timeout = self.router.timeout
        return self._session

    def _apply(self, prefix: IPv6Network, status: PrefixStatus) -> None:
        with self._lock:
            session = self._connect()
            config = prefix_status_config(prefix, status)
            if CANDIDATE in session.server_capabilities:
                session.edit_config(target="candidate", config=config, default_operation="merge")
                session.commit()
            else:
                session.edit_config(target="running", config=config, default_operation="merge")

    async def apply(self, prefix: IPv6Network, status: PrefixStatus, *, is_new: bool) -> None:
        try:
            await asyncio.to_thread(self._apply, prefix, status)
        except Exception as exc:  # ncclient raises SSHError, RPCError, TimeoutExpiredError...
            self._drop()
            raise PeerError(
                f"netconf {self.router.name} ({self.router.host}:{self.router.port}):"
                f" {type(exc).__name__}: {exc}"
            ) from None

    def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            # The session is already broken: nothing worth reporting if closing fails.
            with contextlib.suppress(Exception):
                session.close_session()

    async def close(self) -> None:
        await asyncio.to_thread(self._drop)
