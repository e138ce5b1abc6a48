"""Runs the pending actions of the store against the peers: one worker per peer, retries.

Peers work in parallel (the chain's latency is the slowest peer, not the sum); actions for one
peer run in order. A failed action stays pending and is retried with exponential backoff
(capped), so a peer that is down gets everything once it is back, even across an SRMS restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable

from mast_common.log import get_logger

from srms.actions import Peer, PeerError
from srms.metrics import SrmsMetrics
from srms.store import Action, Store

log = get_logger(__name__)


def backoff(attempts: int, initial: float, maximum: float, rng: Callable[[], float]) -> float:
    """Delay before try number `attempts + 1`: doubling from `initial`, capped, ±20% jitter."""
    base = min(maximum, initial * (2 ** max(0, attempts - 1)))
    return float(base * (0.8 + 0.4 * rng()))


class Dispatcher:
    def __init__(
        self,
        store: Store,
        peers: list[Peer],
        metrics: SrmsMetrics,
        *,
        retry_initial: float,
        retry_max: float,
        action_timeout: float,
        on_done: Callable[[Action, float], None] | None = None,
    ) -> None:
        self.store = store
        self.peers = {p.name: p for p in peers}
        self.metrics = metrics
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.action_timeout = action_timeout
        self.on_done = on_done
        self._wake = {name: asyncio.Event() for name in self.peers}
        self._tasks: list[asyncio.Task[None]] = []
        self._rng = random.Random()

    @property
    def targets(self) -> list[str]:
        return list(self.peers)

    def start(self) -> None:
        for name in self.peers:
            self._tasks.append(asyncio.create_task(self._worker(name), name=f"peer:{name}"))

    def wake(self) -> None:
        for ev in self._wake.values():
            ev.set()
        self.metrics.pending.set(len(self.store.pending_actions()))

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for p in self.peers.values():
            try:
                await p.close()
            except Exception as exc:  # closing must not hide the shutdown
                log.warning("peer.close_failed", peer=p.name, error=str(exc))

    async def _worker(self, name: str) -> None:
        peer = self.peers[name]
        wake = self._wake[name]
        while True:
            wake.clear()
            pending = self.store.pending_actions(name)
            now = time.time()
            due = [a for a in pending if a.next_try <= now]
            if not due:
                delay = min((a.next_try for a in pending), default=now + 3600) - now
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout=max(0.0, delay))
                continue
            for action in due:
                await self._run(peer, action)
                if wake.is_set():
                    break  # newer work may supersede what is left: re-read the store

    async def _run(self, peer: Peer, action: Action) -> None:
        started = time.time()
        try:
            await asyncio.wait_for(
                peer.apply(action.prefix, action.status, is_new=action.is_new),
                timeout=self.action_timeout,
            )
        except (PeerError, TimeoutError, OSError) as exc:
            error = str(exc) or type(exc).__name__
            retry = getattr(exc, "retry", True)
            if not retry:
                # The peer understood and said no (bad arguments): retrying cannot help.
                self.store.action_refused(action.id, time.time(), error)
                self.metrics.action_failures.labels(peer=_kind(peer.name)).inc()
                log.error(
                    "action.refused",
                    peer=peer.name,
                    prefix=str(action.prefix),
                    status=action.status.value,
                    error=error,
                )
                return
            delay = backoff(
                action.attempts + 1, self.retry_initial, self.retry_max, self._rng.random
            )
            self.store.action_failed(action.id, time.time() + delay, error)
            self.metrics.action_failures.labels(peer=_kind(peer.name)).inc()
            log.warning(
                "action.failed",
                peer=peer.name,
                prefix=str(action.prefix),
                status=action.status.value,
                attempt=action.attempts + 1,
                retry_in=round(delay, 2),
                error=error,
            )
            return
        except Exception as exc:  # a bug in one peer must not stop the others
            self.store.action_failed(action.id, time.time() + self.retry_max, repr(exc))
            self.metrics.action_failures.labels(peer=_kind(peer.name)).inc()
            log.error("action.crashed", peer=peer.name, prefix=str(action.prefix), exc_info=True)
            return
        done = time.time()
        self.store.action_done(action.id, done)
        self.metrics.action_seconds.labels(peer=_kind(peer.name)).observe(done - started)
        self.metrics.chain_seconds.labels(peer=_kind(peer.name)).observe(done - action.received)
        self.metrics.pending.set(len(self.store.pending_actions()))
        log.info(
            "action.done",
            peer=peer.name,
            transition=action.transition_id,
            prefix=str(action.prefix),
            status=action.status.value,
            took_ms=round((done - started) * 1000, 1),
            since_event_ms=round((done - action.received) * 1000, 1),
        )
        if self.on_done is not None:
            self.on_done(action, done)


def _kind(target: str) -> str:
    return target.split(":", 1)[0]
