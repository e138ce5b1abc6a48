"""LIMA renumbering, make-before-break: add and publish the new prefix, wait for the longest
DNS TTL (no resolver still caches an address of the old prefix), then withdraw the old one.

Each step is persisted, so a restarted SRMS continues where it stopped. `advance` is called
by the daemon on every turn of its loop; it returns the transitions it caused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from srms.statemachine import PrefixStateMachine, Transition
from srms.store import Renumbering, Store

PUBLISHING = "publishing"
WAITING = "waiting-ttl"
WITHDRAWING = "withdrawing"
DONE = "done"

Commit = Callable[[Sequence[Transition]], list[int]]


def advance(
    r: Renumbering,
    store: Store,
    sm: PrefixStateMachine,
    commit: Commit,
    wait: float,
    now: float,
) -> float | None:
    """Move renumbering `r` as far as it can go now; return when it next needs a look."""
    if r.phase == PUBLISHING:
        if r.add_transition is None:
            ids = commit(sm.add(r.new, r.provider, now))
            if ids:
                store.update_renumbering(r.id, now, add_transition=ids[0])
                return None  # look again when the actions complete
        elif not store.transition_done(r.add_transition):
            return None
        store.update_renumbering(r.id, now, phase=WAITING, wait_until=now + wait)
        return now + wait
    if r.phase == WAITING:
        if r.wait_until is not None and now < r.wait_until:
            return r.wait_until
        ids = commit(sm.withdraw(r.retire, now))
        store.update_renumbering(
            r.id, now, phase=WITHDRAWING, withdraw_transition=ids[0] if ids else None
        )
        return None
    if r.phase == WITHDRAWING:
        if r.withdraw_transition is None or store.transition_done(r.withdraw_transition):
            store.update_renumbering(r.id, now, phase=DONE)
        return None
    return None
