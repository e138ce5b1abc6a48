"""SQLite state: prefix statuses, link states, transitions, pending actions, renumberings.

Every transition and the actions it implies are written in one SQLite transaction before any
action runs, so an SRMS killed at any point finds, after restart, either nothing (the event is
lost with the process, and the router's next trap brings it back) or the transition with its
actions still pending, which it then completes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mast_common.prefix import IPv6Network, PrefixStatus

from srms.statemachine import LinkState, PrefixState, Transition

SCHEMA = """
CREATE TABLE IF NOT EXISTS prefix (
    prefix TEXT PRIMARY KEY, provider TEXT NOT NULL, status TEXT NOT NULL,
    held INTEGER NOT NULL DEFAULT 0, since REAL NOT NULL);
CREATE TABLE IF NOT EXISTS link (
    provider TEXT PRIMARY KEY, down_sources TEXT NOT NULL, restore_at REAL, flaps INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS transition (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, received REAL NOT NULL, prefix TEXT NOT NULL,
    provider TEXT NOT NULL, old TEXT, new TEXT NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS action (
    id INTEGER PRIMARY KEY, transition_id INTEGER NOT NULL, target TEXT NOT NULL,
    prefix TEXT NOT NULL, status TEXT NOT NULL, is_new INTEGER NOT NULL,
    state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_try REAL NOT NULL,
    last_error TEXT, created REAL NOT NULL, done_at REAL);
CREATE INDEX IF NOT EXISTS action_pending ON action (state, target, id);
CREATE TABLE IF NOT EXISTS event (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, source TEXT NOT NULL, provider TEXT,
    kind TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS renumber (
    id INTEGER PRIMARY KEY, new TEXT NOT NULL, retire TEXT NOT NULL, provider TEXT NOT NULL,
    phase TEXT NOT NULL, wait_until REAL, started REAL NOT NULL, updated REAL NOT NULL,
    add_transition INTEGER, withdraw_transition INTEGER);
"""

EVENTS_KEPT = 200


@dataclass(frozen=True)
class Action:
    id: int
    transition_id: int
    target: str
    prefix: IPv6Network
    status: PrefixStatus
    is_new: bool  # the prefix appears for the first time (renumbering): peers must add it
    attempts: int
    next_try: float
    received: float  # when the triggering event arrived
    last_error: str | None


@dataclass(frozen=True)
class Renumbering:
    id: int
    new: IPv6Network
    retire: IPv6Network
    provider: str
    phase: str  # publishing, waiting-ttl, withdrawing, done
    wait_until: float | None
    started: float
    updated: float
    add_transition: int | None
    withdraw_transition: int | None


class Store:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), isolation_level=None, timeout=10)
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: a transition acknowledged to the state machine is on disk even after power loss.
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # -- state
    def load_prefixes(self) -> dict[IPv6Network, PrefixState]:
        rows = self.db.execute("SELECT prefix, provider, status, held, since FROM prefix")
        return {
            IPv6Network(p): PrefixState(prov, PrefixStatus(s), bool(h), since)
            for p, prov, s, h, since in rows
        }

    def load_links(self) -> dict[str, LinkState]:
        rows = self.db.execute("SELECT provider, down_sources, restore_at, flaps FROM link")
        return {
            prov: LinkState(set(json.loads(down)), restore_at, flaps)
            for prov, down, restore_at, flaps in rows
        }

    def seed_prefix(self, prefix: IPv6Network, state: PrefixState) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO prefix VALUES (?,?,?,?,?)",
            (str(prefix), state.provider, state.status.value, int(state.held), state.since),
        )

    def record(
        self,
        transitions: Sequence[Transition],
        targets: Sequence[str],
        *,
        received: float,
        prefixes: dict[IPv6Network, PrefixState],
        links: dict[str, LinkState],
    ) -> list[int]:
        """Persist transitions, the new state and one pending action per target, atomically."""
        ids: list[int] = []
        with self._txn():
            for prov, link in links.items():
                self.db.execute(
                    "INSERT OR REPLACE INTO link VALUES (?,?,?,?)",
                    (prov, json.dumps(sorted(link.down_sources)), link.restore_at, link.flaps),
                )
            for t in transitions:
                st = prefixes[t.prefix]
                self.db.execute(
                    "INSERT OR REPLACE INTO prefix VALUES (?,?,?,?,?)",
                    (str(t.prefix), st.provider, st.status.value, int(st.held), st.since),
                )
                cur = self.db.execute(
                    "INSERT INTO transition (at, received, prefix, provider, old, new, reason)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (
                        t.at,
                        received,
                        str(t.prefix),
                        t.provider,
                        t.old.value if t.old else None,
                        t.new.value,
                        t.reason,
                    ),
                )
                tid = int(cur.lastrowid or 0)
                ids.append(tid)
                self._enqueue(tid, t.prefix, t.new, t.old is None, targets, t.at)
            # Held flags can change without a transition (discourage of a discouraged prefix).
            for prefix, st in prefixes.items():
                self.db.execute(
                    "UPDATE prefix SET held=? WHERE prefix=?", (int(st.held), str(prefix))
                )
        return ids

    def resync(
        self, prefixes: dict[IPv6Network, PrefixState], targets: Sequence[str], now: float
    ) -> int:
        """Queue every prefix's current status for every peer again (after a restart)."""
        with self._txn():
            cur = self.db.execute(
                "INSERT INTO transition (at, received, prefix, provider, old, new, reason)"
                " VALUES (?,?,?,?,?,?,?)",
                (now, now, "*", "*", None, "resync", "restart"),
            )
            tid = int(cur.lastrowid or 0)
            for prefix, st in sorted(prefixes.items()):
                self._enqueue(tid, prefix, st.status, False, targets, now, keep_pending=True)
        return tid

    def _enqueue(
        self,
        tid: int,
        prefix: IPv6Network,
        status: PrefixStatus,
        is_new: bool,
        targets: Iterable[str],
        now: float,
        *,
        keep_pending: bool = False,
    ) -> None:
        for target in targets:
            pending = self.db.execute(
                "SELECT id, is_new FROM action WHERE state='pending' AND target=? AND prefix=?",
                (target, str(prefix)),
            ).fetchall()
            if keep_pending and pending:
                continue  # the pending action already carries the newest status
            # Actions set a status (idempotent): only the newest one per peer and prefix matters.
            # An add still pending must stay an add, or the peer never learns the prefix.
            is_new = is_new or any(row[1] for row in pending)
            self.db.execute(
                "UPDATE action SET state='superseded' WHERE state='pending' AND target=?"
                " AND prefix=?",
                (target, str(prefix)),
            )
            self.db.execute(
                "INSERT INTO action (transition_id, target, prefix, status, is_new, state,"
                " next_try, created) VALUES (?,?,?,?,?,'pending',?,?)",
                (tid, target, str(prefix), status.value, int(is_new), now, now),
            )

    # -- actions
    def pending_actions(self, target: str | None = None) -> list[Action]:
        sql = (
            "SELECT a.id, a.transition_id, a.target, a.prefix, a.status, a.is_new, a.attempts,"
            " a.next_try, t.received, a.last_error FROM action a JOIN transition t"
            " ON t.id = a.transition_id WHERE a.state='pending'"
        )
        args: tuple[Any, ...] = ()
        if target is not None:
            sql += " AND a.target=?"
            args = (target,)
        rows = self.db.execute(sql + " ORDER BY a.id", args).fetchall()
        return [
            Action(
                r[0],
                r[1],
                r[2],
                IPv6Network(r[3]),
                PrefixStatus(r[4]),
                bool(r[5]),
                r[6],
                r[7],
                r[8],
                r[9],
            )
            for r in rows
        ]

    def action_done(self, action_id: int, at: float) -> None:
        self.db.execute(
            "UPDATE action SET state='done', done_at=?, attempts=attempts+1"
            " WHERE id=? AND state='pending'",
            (at, action_id),
        )

    def action_failed(self, action_id: int, next_try: float, error: str) -> None:
        self.db.execute(
            "UPDATE action SET attempts=attempts+1, next_try=?, last_error=?"
            " WHERE id=? AND state='pending'",
            (next_try, error[:500], action_id),
        )

    def action_refused(self, action_id: int, at: float, error: str) -> None:
        """The peer refused the change for good (e.g. Kea: prefix not served): stop retrying."""
        self.db.execute(
            "UPDATE action SET state='refused', done_at=?, attempts=attempts+1, last_error=?"
            " WHERE id=? AND state='pending'",
            (at, error[:500], action_id),
        )

    def refused_actions(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT target, prefix, status, done_at, last_error FROM action"
            " WHERE state='refused' ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        keys = ("target", "prefix", "status", "at", "error")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def transition_done(self, transition_id: int) -> bool:
        """True when no action of this transition is pending (done or superseded)."""
        (n,) = self.db.execute(
            "SELECT count(*) FROM action WHERE transition_id=? AND state='pending'",
            (transition_id,),
        ).fetchone()
        return int(n) == 0

    def transition_actions(self, transition_id: int) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT target, state, attempts, created, done_at, last_error FROM action"
            " WHERE transition_id=? ORDER BY id",
            (transition_id,),
        )
        keys = ("target", "state", "attempts", "created", "done_at", "last_error")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def recent_transitions(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT id, at, received, prefix, provider, old, new, reason FROM transition"
            " WHERE prefix != '*' ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        keys = ("id", "at", "received", "prefix", "provider", "old", "new", "reason")
        out = [dict(zip(keys, r, strict=True)) for r in rows]
        for t in out:
            t["complete"] = self.transition_done(int(t["id"]))
        return out

    # -- events
    def add_event(
        self, at: float, source: str, provider: str | None, kind: str, detail: str
    ) -> None:
        self.db.execute(
            "INSERT INTO event (at, source, provider, kind, detail) VALUES (?,?,?,?,?)",
            (at, source, provider, kind, detail),
        )
        self.db.execute(
            "DELETE FROM event WHERE id <= (SELECT max(id) FROM event) - ?", (EVENTS_KEPT,)
        )

    def recent_events(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT at, source, provider, kind, detail FROM event ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        keys = ("at", "source", "provider", "kind", "detail")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # -- renumbering
    def add_renumbering(
        self, new: IPv6Network, retire: IPv6Network, provider: str, now: float
    ) -> int:
        cur = self.db.execute(
            "INSERT INTO renumber (new, retire, provider, phase, started, updated)"
            " VALUES (?,?,?,'publishing',?,?)",
            (str(new), str(retire), provider, now, now),
        )
        return int(cur.lastrowid or 0)

    def update_renumbering(self, rid: int, now: float, **fields: Any) -> None:
        allowed = {"phase", "wait_until", "add_transition", "withdraw_transition"}
        if not set(fields) <= allowed:
            raise ValueError(f"unknown renumber fields {set(fields) - allowed}")
        sets = ", ".join(f"{k}=?" for k in fields)
        self.db.execute(
            f"UPDATE renumber SET {sets}, updated=? WHERE id=?", (*fields.values(), now, rid)
        )

    def renumberings(self, active_only: bool = False) -> list[Renumbering]:
        sql = (
            "SELECT id, new, retire, provider, phase, wait_until, started, updated,"
            " add_transition, withdraw_transition FROM renumber"
        )
        if active_only:
            sql += " WHERE phase != 'done'"
        rows = self.db.execute(sql + " ORDER BY id").fetchall()
        return [
            Renumbering(
                r[0],
                IPv6Network(r[1]),
                IPv6Network(r[2]),
                r[3],
                r[4],
                r[5],
                r[6],
                r[7],
                r[8],
                r[9],
            )
            for r in rows
        ]

    def _txn(self) -> _Txn:
        return _Txn(self.db)


class _Txn:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
