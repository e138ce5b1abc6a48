"""Running and candidate datastores, commit with confirmed-commit and rollback, persistence.

`running` is what is applied to the router; it is persisted (SQLite, one row per list entry so a
commit writes only what changed) and re-applied when the agent starts. A confirmed commit applies
at once but persists only on confirmation: if the agent dies before, the restart re-applies the
old configuration, and BIRD's own `configure timeout` undoes its part even without the agent.
"""

from __future__ import annotations

import ipaddress
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lxml import etree
from mast_common.log import get_logger
from mast_common.prefix import PrefixStatus
from prometheus_client import CollectorRegistry, Counter

from itmp.router.model import (
    Encapsulation,
    Neighbor,
    RouterConfig,
    Tunnel,
    neighbor_xml,
    parse_router,
    prefix_status_xml,
    tunnel_xml,
)

log = get_logger(__name__)


class ApplyError(RuntimeError):
    """The router refused a configuration; it has been rolled back to the previous one."""


class Backend(Protocol):
    """Where a configuration lands: the real kernel + BIRD, or nothing (dry-run benchmark)."""

    name: str

    def encapsulations(self) -> tuple[list[Encapsulation], dict[str, str]]: ...

    def apply(self, old: RouterConfig, new: RouterConfig, confirm_timeout: int | None) -> None:
        """Move the router from `old` to `new`; on failure undo what was done and raise."""

    def confirm(self) -> None: ...

    def revert(self, current: RouterConfig, previous: RouterConfig) -> None:
        """Undo a confirmed commit that was not confirmed in time."""

    def refresh(self, cfg: RouterConfig) -> bool:
        """Re-apply what the kernel may have changed since: prefix statuses to addresses that
        appeared (DHCP, SLAAC, operators), underlay pins it flushed when a link went down.
        True while something could not be re-applied yet (a pinning link still down)."""

    def state(self, cfg: RouterConfig) -> object:
        """An lxml <router-state> element: what the kernel and BIRD really have."""


class StateStore:
    """The persisted running configuration, one row per list entry."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS entry (kind TEXT, key TEXT, xml TEXT, PRIMARY KEY (kind, key))"
        )

    def load(self) -> RouterConfig:
        root = etree.Element("{urn:mast:router:1}router", nsmap={None: "urn:mast:router:1"})
        for (xml,) in self.db.execute("SELECT xml FROM entry ORDER BY kind DESC, key"):
            root.append(etree.fromstring(xml))
        return parse_router(root)

    def save(self, old: RouterConfig, new: RouterConfig) -> None:
        rows: list[tuple[str, str, str | None]] = []

        def diff(
            kind: str,
            a: dict[str, object],
            b: dict[str, object],
            render: Callable[[object], object],
        ) -> None:
            for key, value in b.items():
                # Unchanged entries are the very same objects (shared between datastores).
                old_value = a.get(key)
                if old_value is not value and old_value != value:
                    rows.append((kind, key, etree.tostring(render(value)).decode()))
            for key in a:
                if key not in b:
                    rows.append((kind, key, None))

        holder = etree.Element("x")

        def t_xml(v: object) -> object:
            assert isinstance(v, Tunnel)
            return tunnel_xml(holder, v)

        def n_xml(v: object) -> object:
            assert isinstance(v, Neighbor)
            return neighbor_xml(holder, v)

        diff("tunnel", dict(old.tunnels), dict(new.tunnels), t_xml)
        diff("bgp-neighbor", dict(old.neighbors), dict(new.neighbors), n_xml)
        old_p = {str(k): v for k, v in old.prefix_status.items()}
        new_p = {str(k): v for k, v in new.prefix_status.items()}
        for key, status in new_p.items():
            if old_p.get(key) != status:
                el = prefix_status_xml(holder, ipaddress.IPv6Network(key), PrefixStatus(status))
                rows.append(("prefix-status", key, etree.tostring(el).decode()))
        for key in old_p:
            if key not in new_p:
                rows.append(("prefix-status", key, None))
        if not rows:
            return
        with self.db:
            self.db.execute("BEGIN")
            for kind, key, xml in rows:
                if xml is None:
                    self.db.execute("DELETE FROM entry WHERE kind=? AND key=?", (kind, key))
                else:
                    self.db.execute(
                        "INSERT OR REPLACE INTO entry VALUES (?, ?, ?)", (kind, key, xml)
                    )

    def close(self) -> None:
        self.db.close()


@dataclass
class PendingCommit:
    previous: RouterConfig
    deadline: float
    timer: threading.Timer
    session_id: int | None = None  # the NETCONF session that must confirm (RFC 6241 8.4.1)


class AgentMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commits = Counter(
            "itmp_router_commits_total",
            "changes applied to the router by result",
            ["result"],
            registry=self.registry,
        )
        self.reverts = Counter(
            "itmp_router_reverts_total",
            "confirmed commits reverted, by reason",
            ["why"],
            registry=self.registry,
        )


class Datastores:
    """The agent's datastores; every method holds one lock (NETCONF sessions run in threads)."""

    def __init__(
        self, backend: Backend, store: StateStore, metrics: AgentMetrics | None = None
    ) -> None:
        self.backend = backend
        self.store = store
        self.metrics = metrics or AgentMetrics()
        self.lock = threading.RLock()
        self.running = store.load()
        self.candidate = self.running
        self.candidate_owner: int | None = None  # session with uncommitted candidate edits
        self.pending: PendingCommit | None = None

    def start(self) -> None:
        """Re-apply the persisted configuration (after a restart or reboot the router is blank)."""
        with self.lock:
            self.backend.apply(RouterConfig(), self.running, None)
            log.info(
                "datastore.restored",
                tunnels=len(self.running.tunnels),
                neighbors=len(self.running.neighbors),
                prefix_statuses=len(self.running.prefix_status),
            )

    def edit_running(self, new: RouterConfig) -> None:
        with self.lock:
            new.validate()
            self._apply(new, None)
            self.store.save(self.running, new)
            self.running = new
            if self.pending is None:
                self.candidate = new

    def set_candidate(self, new: RouterConfig, session_id: int | None = None) -> None:
        with self.lock:
            self.candidate = new
            self.candidate_owner = session_id

    def discard(self) -> None:
        with self.lock:
            self.candidate = self.running
            self.candidate_owner = None

    def session_ended(self, session_id: int) -> None:
        """A session ended: drop its uncommitted candidate edits, and roll back a confirmed commit
        it left unconfirmed (RFC 6241 8.4.1), so the next client starts from running."""
        with self.lock:
            if self.candidate_owner == session_id and self.pending is None:
                self.candidate = self.running
                self.candidate_owner = None
            if self.pending is not None and self.pending.session_id == session_id:
                self.pending.timer.cancel()
                self._rollback_pending("session-ended")

    def commit(self, confirm_timeout: int | None = None, session_id: int | None = None) -> None:
        """Apply the candidate. With `confirm_timeout`, roll back unless confirmed in time."""
        with self.lock:
            new = self.candidate
            new.validate()
            self.candidate_owner = None
            if self.pending is not None and confirm_timeout is None and new == self.running:
                self._confirm()
                return
            self._apply(new, confirm_timeout)
            if confirm_timeout is None:
                if self.pending is not None:
                    self._confirm_backend_only()
                    previous = self.pending.previous
                    self.pending = None
                    self.store.save(previous, new)
                else:
                    self.store.save(self.running, new)
                self.running = new
                return
            previous = self.pending.previous if self.pending else self.running
            if self.pending:
                self.pending.timer.cancel()
            timer = threading.Timer(confirm_timeout, self._confirm_timeout_expired)
            timer.daemon = True
            self.pending = PendingCommit(
                previous, time.monotonic() + confirm_timeout, timer, session_id
            )
            self.running = new
            timer.start()
            log.info("commit.confirmed_pending", timeout_s=confirm_timeout)

    def _apply(self, new: RouterConfig, confirm_timeout: int | None) -> None:
        try:
            # BIRD's own timer runs a little longer than ours so ours decides while we live.
            bird_timeout = None if confirm_timeout is None else confirm_timeout + 5
            self.backend.apply(self.running, new, bird_timeout)
        except Exception as exc:
            self.metrics.commits.labels(result="rolled_back").inc()
            log.warning("commit.rolled_back", error=str(exc))
            raise ApplyError(f"commit failed and was rolled back: {exc}") from exc
        self.metrics.commits.labels(result="applied").inc()

    def _confirm_backend_only(self) -> None:
        try:
            self.backend.confirm()
        except Exception as exc:  # BIRD may already have undone; the next configure fixes it
            log.warning("commit.confirm_failed", error=str(exc))

    def _confirm(self) -> None:
        assert self.pending is not None
        self.pending.timer.cancel()
        self._confirm_backend_only()
        self.store.save(self.pending.previous, self.running)
        self.pending = None
        log.info("commit.confirmed")

    def cancel(self) -> bool:
        with self.lock:
            if self.pending is None:
                return False
            self.pending.timer.cancel()
            self._rollback_pending("cancel-commit")
            return True

    def _confirm_timeout_expired(self) -> None:
        with self.lock:
            if self.pending is None or time.monotonic() < self.pending.deadline - 0.01:
                return
            self._rollback_pending("confirm-timeout")

    def _rollback_pending(self, why: str) -> None:
        assert self.pending is not None
        previous = self.pending.previous
        self.pending = None
        try:
            self.backend.revert(self.running, previous)
        except Exception as exc:
            log.error("commit.revert_failed", error=str(exc), why=why)
        self.running = previous
        self.candidate = previous
        self.metrics.reverts.labels(why=why).inc()
        log.warning("commit.reverted", why=why)

    def refresh(self) -> bool:
        with self.lock:
            return self.backend.refresh(self.running)
