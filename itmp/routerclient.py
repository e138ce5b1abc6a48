"""The client side of the router model: an ncclient session speaking `urn:mast:router:1`.

Used by the TMS (provider gateway) and by `itmp stub` (stub border router). Every change goes
to the candidate datastore, then a confirmed commit, a read-back check, and the confirming
commit; any failure discards the candidate and raises `RouterError` with the router's words.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import ncclient.transport.session
from lxml import etree
from ncclient import manager
from ncclient.operations.rpc import RPCError

from itmp.router.model import (
    NS,
    Encapsulation,
    Neighbor,
    RouterConfig,
    Tunnel,
    neighbor_xml,
    parse_router,
    tunnel_xml,
)

# ncclient's session thread sleeps this long between sends; 0.1 s per RPC would dominate a
# commit (edit + confirmed commit + confirm = three RPCs).
ncclient.transport.session.TICK = 0.002
# ncclient logs every RPC at info level (with the XML); our own log says what was changed.
logging.getLogger("ncclient").setLevel(logging.WARNING)

_NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
_Q = "{" + NS + "}"


class RouterError(RuntimeError):
    """The router agent refused or could not be reached; carries its words."""


@dataclass(frozen=True)
class RouterEndpoint:
    host: str
    port: int
    username: str
    password: str
    timeout: float = 30


def _config(entries: Iterable[Any]) -> str:
    cfg = etree.Element("{" + _NC_NS + "}config", nsmap={"nc": _NC_NS})
    root = etree.SubElement(cfg, _Q + "router", nsmap={None: NS})
    for e in entries:
        root.append(e)
    return str(etree.tostring(cfg).decode())


class RouterSession:
    """One NETCONF session to a router agent (a context manager)."""

    def __init__(self, endpoint: RouterEndpoint, sock: socket.socket | None = None) -> None:
        self.endpoint = endpoint
        try:
            self.m = manager.connect(
                host=endpoint.host,
                port=endpoint.port,
                username=endpoint.username,
                password=endpoint.password,
                hostkey_verify=False,  # routers are reached over the operator's management network
                allow_agent=False,
                look_for_keys=False,
                timeout=endpoint.timeout,
                sock=sock,
            )
        except Exception as exc:
            raise RouterError(f"NETCONF to [{endpoint.host}]:{endpoint.port}: {exc}") from exc
        self.m.timeout = endpoint.timeout

    def close(self) -> None:
        # The peer may be gone already; nothing is left to release then.
        with contextlib.suppress(Exception):
            self.m.close_session()

    def __enter__(self) -> RouterSession:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _rpc(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RPCError as exc:
            raise RouterError(f"{what}: {exc.message or exc}") from exc
        except Exception as exc:
            raise RouterError(f"{what}: {exc}") from exc

    def running(self) -> RouterConfig:
        reply = self._rpc("get-config", self.m.get_config, source="running")
        root = reply.data_ele.find(_Q + "router")
        return RouterConfig() if root is None else parse_router(root)

    def state(self) -> Any:
        reply = self._rpc("get", self.m.get)
        return reply.data_ele.find(_Q + "router-state")

    def encapsulations(self) -> list[Encapsulation]:
        st = self.state()
        if st is None:
            return []
        return [Encapsulation(e.text) for e in st.findall(_Q + "supported-encapsulation")]

    def backend(self) -> str:
        st = self.state()
        el = st.find(_Q + "backend") if st is not None else None
        return el.text if el is not None else "unknown"

    def change(
        self,
        *,
        put_tunnels: Iterable[Tunnel] = (),
        put_neighbors: Iterable[Neighbor] = (),
        delete_tunnels: Iterable[str] = (),
        delete_neighbors: Iterable[str] = (),
        confirm_timeout: int = 60,
    ) -> None:
        """One atomic change: candidate edit, confirmed commit, confirm; rolled back on failure."""
        holder = etree.Element("x")
        entries: list[Any] = []
        op = "{" + _NC_NS + "}operation"
        for name in delete_neighbors:
            e = etree.SubElement(holder, _Q + "bgp-neighbor", {op: "remove"})
            etree.SubElement(e, _Q + "name").text = name
            entries.append(e)
        for name in delete_tunnels:
            e = etree.SubElement(holder, _Q + "tunnel", {op: "remove"})
            etree.SubElement(e, _Q + "name").text = name
            entries.append(e)
        for t in put_tunnels:
            e = tunnel_xml(holder, t)
            e.set(op, "replace")
            entries.append(e)
        for n in put_neighbors:
            e = neighbor_xml(holder, n)
            e.set(op, "replace")
            entries.append(e)
        if not entries:
            return
        # The candidate is shared by every session: lock it and start from running, so neither a
        # half-finished edit of another client nor one of ours gets committed by mistake.
        self._lock_candidate()
        try:
            self._rpc("discard-changes", self.m.discard_changes)
            self._rpc(
                "edit-config", self.m.edit_config, target="candidate", config=_config(entries)
            )
            self._rpc("commit", self.m.commit, confirmed=True, timeout=str(confirm_timeout))
            self._rpc("confirm", self.m.commit)
        except RouterError:
            # The session may be dead; the agent's confirm timer still reverts.
            with contextlib.suppress(Exception):
                self.m.discard_changes()
            raise
        finally:
            with contextlib.suppress(Exception):
                self.m.unlock("candidate")

    def _lock_candidate(self, wait: float = 30) -> None:
        deadline = time.monotonic() + wait
        while True:
            try:
                self.m.lock("candidate")
                return
            except RPCError as exc:
                if time.monotonic() > deadline:
                    raise RouterError(f"lock candidate: {exc.message or exc}") from exc
                time.sleep(0.05)  # another client is mid-change; changes are short
            except Exception as exc:
                raise RouterError(f"lock candidate: {exc}") from exc
