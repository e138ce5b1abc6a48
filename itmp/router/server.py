"""NETCONF over SSH in front of the datastores (the PyPI `netconf` server package).

Only the glue lives here: RPC methods translate NETCONF elements to datastore calls and
datastore errors to <rpc-error>s with the router's own words in <error-message>.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from pathlib import Path
from typing import Any

import paramiko
import sshutil.server
from lxml import etree
from mast_common.log import get_logger
from netconf import error as ncerror
from netconf import server as ncserver
from paramiko.common import (
    AUTH_FAILED,
    AUTH_SUCCESSFUL,
    OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED,
    OPEN_SUCCEEDED,
)

from itmp.router.datastore import ApplyError, Datastores
from itmp.router.model import (
    NC_NS,
    NS,
    EditConflict,
    EditOperation,
    ModelError,
    apply_edit,
    router_xml,
)

log = get_logger(__name__)
_NC = "{" + NC_NS + "}"

CAPABILITIES = (
    "urn:ietf:params:netconf:capability:candidate:1.0",
    "urn:ietf:params:netconf:capability:confirmed-commit:1.0",
    "urn:ietf:params:netconf:capability:confirmed-commit:1.1",
    "urn:ietf:params:netconf:capability:rollback-on-error:1.0",
    "urn:ietf:params:netconf:capability:writable-running:1.0",
    "urn:ietf:params:netconf:capability:validate:1.1",
    f"{NS}?module=mast-router&revision=2026-11-22",
)
DEFAULT_CONFIRM_TIMEOUT = 600  # RFC 6241 8.4.5


def _ok() -> Any:
    return etree.Element("ok")


def _error(rpc: Any, tag: str, message: str, etype: str = "application") -> ncerror.RPCServerError:
    return ncerror.RPCServerError(rpc, etype, tag, message=message)


def _datastore_name(elem: Any, rpc: Any) -> str:
    children = [c for c in elem if isinstance(c.tag, str)] if elem is not None else []
    if len(children) != 1:
        raise _error(rpc, "missing-element", "expected exactly one datastore", "protocol")
    name = str(children[0].tag).rpartition("}")[2]
    if name not in ("running", "candidate"):
        raise _error(
            rpc, "invalid-value", f"unsupported datastore {name!r} (running, candidate)", "protocol"
        )
    return name


class AgentSession(ncserver.NetconfServerSession):  # type: ignore[misc]
    """Tells the datastores when a session's reader ends (client gone, killed, closed)."""

    def __init__(self, channel: Any, server: Any, extra_args: Any, debug: bool) -> None:
        self.sid_at_open: int | None = None
        super().__init__(channel, server, extra_args, debug)
        self.sid_at_open = self.session_id

    def _reader_exits(self) -> None:
        sid = self.sid_at_open if self.sid_at_open is not None else self.session_id
        if sid is None:
            return
        # A client that vanished (killed, network gone) must not keep its datastore locks; the
        # package releases them only on close-session.
        with self.server.session_locks_lock:
            for target, holder in self.server.session_locks.items():
                if holder == sid:
                    self.server.session_locks[target] = 0
        methods = getattr(self, "methods", None)
        if isinstance(methods, RouterMethods):
            methods.stores.session_ended(int(sid))


class RouterMethods:
    """The rpc_* methods the `netconf` package calls, one per NETCONF operation."""

    def __init__(self, stores: Datastores) -> None:
        self.stores = stores

    def nc_append_capabilities(self, caps: Any) -> None:
        for cap in CAPABILITIES:
            etree.SubElement(caps, "capability").text = cap

    def _data(self, cfg: Any, with_state: bool) -> Any:
        data = etree.Element(_NC + "data", nsmap={None: NC_NS})
        data.append(router_xml(cfg))
        if with_state:
            data.append(self.stores.backend.state(cfg))
        return data

    def rpc_get(self, session: Any, rpc: Any, filter_or_none: Any) -> Any:
        with self.stores.lock:
            return self._data(self.stores.running, True)

    def rpc_get_config(self, session: Any, rpc: Any, source_elm: Any, filter_or_none: Any) -> Any:
        name = _datastore_name(source_elm, rpc)
        with self.stores.lock:
            cfg = self.stores.running if name == "running" else self.stores.candidate
            return self._data(cfg, False)

    def rpc_edit_config(self, session: Any, rpc: Any, *params: Any) -> Any:
        target = config = None
        default_op = EditOperation.MERGE
        for p in params:
            name = str(p.tag).rpartition("}")[2]
            if name == "target":
                target = _datastore_name(p, rpc)
            elif name == "config":
                config = p
            elif name == "default-operation":
                try:
                    default_op = EditOperation((p.text or "").strip())
                except ValueError:
                    raise _error(
                        rpc, "invalid-value", f"bad default-operation {p.text!r}", "protocol"
                    ) from None
            elif name in ("error-option", "test-option"):
                continue  # every edit is all-or-nothing (rollback-on-error) anyway
            else:
                raise _error(rpc, "unknown-element", f"unknown parameter {name!r}", "protocol")
        if target is None or config is None:
            raise _error(rpc, "missing-element", "edit-config needs target and config", "protocol")
        holder = session.server.is_target_locked(target)
        if holder and holder != session.session_id:
            raise _error(rpc, "in-use", f"{target} is locked by session {holder}", "protocol")
        with self.stores.lock:
            base = self.stores.running if target == "running" else self.stores.candidate
            try:
                new = apply_edit(base, config, default_op)
                if target == "running":
                    self.stores.edit_running(new)
                else:
                    new.validate()
                    self.stores.set_candidate(new, session.session_id)
            except EditConflict as exc:
                raise _error(rpc, exc.tag, str(exc)) from None
            except ModelError as exc:
                raise _error(rpc, "invalid-value", str(exc)) from None
            except ApplyError as exc:
                raise _error(rpc, "operation-failed", str(exc)) from None
        log.info("edit_config.done", target=target, session=session.session_id)
        return _ok()

    def rpc_commit(self, session: Any, rpc: Any, *params: Any) -> Any:
        confirmed = False
        timeout = DEFAULT_CONFIRM_TIMEOUT
        for p in params:
            name = str(p.tag).rpartition("}")[2]
            if name == "confirmed":
                confirmed = True
            elif name == "confirm-timeout":
                try:
                    timeout = int((p.text or "").strip())
                    if timeout < 1:
                        raise ValueError
                except ValueError:
                    raise _error(
                        rpc, "invalid-value", f"bad confirm-timeout {p.text!r}", "protocol"
                    ) from None
            elif name in ("persist", "persist-id"):
                raise _error(
                    rpc,
                    "operation-not-supported",
                    "persistent confirmed commit is not supported",
                    "protocol",
                )
            else:
                raise _error(rpc, "unknown-element", f"unknown parameter {name!r}", "protocol")
        try:
            self.stores.commit(timeout if confirmed else None, session.session_id)
        except ModelError as exc:
            raise _error(rpc, "invalid-value", str(exc)) from None
        except ApplyError as exc:
            raise _error(rpc, "operation-failed", str(exc)) from None
        log.info("commit.done", confirmed=confirmed, session=session.session_id)
        return _ok()

    def rpc_cancel_commit(self, session: Any, rpc: Any, *params: Any) -> Any:
        if not self.stores.cancel():
            raise _error(rpc, "operation-failed", "no confirmed commit is pending", "protocol")
        return _ok()

    def rpc_discard_changes(self, session: Any, rpc: Any, *params: Any) -> Any:
        self.stores.discard()
        return _ok()

    def rpc_validate(self, session: Any, rpc: Any, *params: Any) -> Any:
        with self.stores.lock:
            try:
                self.stores.candidate.validate()
            except ModelError as exc:
                raise _error(rpc, "invalid-value", str(exc)) from None
        return _ok()

    # The package's defaults return nothing, which it turns into an error reply.
    def rpc_lock(self, session: Any, rpc: Any, target: Any) -> Any:
        return _ok()

    def rpc_unlock(self, session: Any, rpc: Any, target: Any) -> Any:
        return _ok()


class PasswordAuth(paramiko.ServerInterface):
    def __init__(self, users: dict[str, str]) -> None:
        self.users = users
        self.event = threading.Event()

    def get_allowed_auths(self, username: str) -> str:
        return "password"

    def check_auth_none(self, username: str) -> int:
        return AUTH_FAILED

    def check_auth_password(self, username: str, password: str) -> int:
        if username in self.users and self.users[username] == password:
            return AUTH_SUCCESSFUL
        log.warning("ssh.auth_failed", user=username)
        return AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return OPEN_SUCCEEDED if kind == "session" else OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_subsystem_request(self, channel: Any, name: str) -> bool:
        self.event.set()
        return name == "netconf"


def ensure_host_key(path: Path) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = paramiko.RSAKey.generate(2048)
        key.write_private_key_file(str(path))
        path.chmod(0o600)
        log.info("ssh.host_key_generated", path=str(path))
    return path


class RouterNetconfServer(ncserver.NetconfSSHServer):  # type: ignore[misc]
    """NetconfSSHServer bound to a chosen address (the package always binds to ::)."""

    def __init__(
        self, methods: RouterMethods, users: dict[str, str], host_key: Path, address: str, port: int
    ) -> None:
        # Re-does SSHServer.__init__'s binding so the operator's listen address is honoured.
        self.server_methods = methods
        self.session_id = 1
        self.session_locks_lock = threading.Lock()
        self.session_locks = {"running": 0, "candidate": 0}
        self.server_ctl = PasswordAuth(users)
        self.server_socket_class = sshutil.server.SSHServerSocket
        self.server_session_class = AgentSession
        self.extra_args = None
        self.debug = False
        self.host_key = sshutil.server.from_private_key_file(str(host_key))
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as exc:
            sock.close()
            raise OSError(
                exc.errno or errno.EADDRNOTAVAIL,
                f"cannot listen on [{address}]:{port}: {exc.strerror}",
            ) from None
        sock.listen(100)
        self.port = sock.getsockname()[1]
        self.ports = {family: self.port}
        self.close_wsocket, self.close_rsocket = socket.socketpair()
        self.lock = threading.Lock()
        self.sockets: list[Any] = []
        self.thread = threading.Thread(
            target=self._accept_socket_thread, args=[sock], name="netconf-accept", daemon=True
        )
        self.thread.start()

    def __del__(self) -> None:  # the package logs every deletion at error level
        return None


def quiet_library_logs(debug: bool) -> None:
    """The netconf/sshutil packages log routine events (lock, unlock) at error level."""
    level = logging.DEBUG if debug else logging.CRITICAL
    for name in ("netconf", "sshutil", "paramiko"):
        logging.getLogger(name).setLevel(level)
