"""The SRMS daemon: event sources → prefix state machine → SQLite → dispatcher → peers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from mast_common.log import get_logger
from mast_common.metrics import MetricsEndpoint
from mast_common.prefix import IPv6Network, PrefixStatus, parse_prefix

from srms import renumber
from srms.actions import Peer
from srms.actions.dns import DnsPeer
from srms.actions.kea import KeaPeer
from srms.actions.netconf import NetconfPeer
from srms.config import SrmsConfig
from srms.control import serve
from srms.dispatch import Dispatcher
from srms.events import EventSource
from srms.events.bird import BirdSource
from srms.events.netlink import NetlinkSource
from srms.events.snmp import SnmpSource
from srms.metrics import SrmsMetrics
from srms.statemachine import LinkEvent, PrefixState, PrefixStateMachine, StateError, Transition
from srms.store import Store

log = get_logger(__name__)

# Renumbering progress is checked at least this often (its steps wait on actions completing).
RENUMBER_POLL = 0.2


def build_peers(cfg: SrmsConfig) -> list[Peer]:
    peers: list[Peer] = []
    if cfg.kea is not None:
        peers += [KeaPeer(s, cfg.kea.timeout) for s in cfg.kea.sockets]
    peers += [DnsPeer(z) for z in cfg.dns]
    peers += [NetconfPeer(r) for r in cfg.routers]
    return peers


class Srms:
    def __init__(
        self,
        cfg: SrmsConfig,
        *,
        peers: list[Peer] | None = None,
        sources: list[EventSource] | None = None,
        metrics: SrmsMetrics | None = None,
    ) -> None:
        self.cfg = cfg
        self.metrics = metrics or SrmsMetrics()
        self.store = Store(cfg.daemon.state_db)
        self.sm = PrefixStateMachine(cfg.timers.hold_down)
        self.peers = peers if peers is not None else build_peers(cfg)
        self.sources: list[EventSource] = sources if sources is not None else self._sources()
        self.dispatcher = Dispatcher(
            self.store,
            self.peers,
            self.metrics,
            retry_initial=cfg.timers.retry_initial,
            retry_max=cfg.timers.retry_max,
            action_timeout=cfg.timers.action_timeout,
            on_done=lambda a, t: self._kick.set(),
        )
        self._events: asyncio.Queue[LinkEvent] = asyncio.Queue()
        self._kick = asyncio.Event()
        self.ready = asyncio.Event()
        self._load()

    def _sources(self) -> list[EventSource]:
        out: list[EventSource] = []
        if self.cfg.snmp is not None:
            out.append(SnmpSource(self.cfg.snmp, self.cfg.providers, self.metrics))
        if self.cfg.netlink is not None and self.cfg.netlink.enabled:
            out.append(NetlinkSource(self.cfg.providers))
        if self.cfg.bird is not None:
            out.append(BirdSource(self.cfg.bird, self.cfg.providers))
        return out

    def _load(self) -> None:
        now = time.time()
        for p in self.cfg.providers:
            self.sm.ensure_provider(p.name)
            for net in p.prefixes:
                self.store.seed_prefix(net, PrefixState(p.name, PrefixStatus.PREFERRED, since=now))
        for prefix, st in self.store.load_prefixes().items():
            self.sm.load_prefix(prefix, st)
        for provider, link in self.store.load_links().items():
            self.sm.load_link(provider, link)
        self._update_gauges()

    # -- the loop
    def emit(self, event: LinkEvent) -> None:
        self._events.put_nowait(event)

    async def run(self) -> None:
        endpoint: MetricsEndpoint | None = None
        if self.cfg.daemon.metrics_port >= 0:
            endpoint = MetricsEndpoint(
                self.metrics.registry, self.cfg.daemon.metrics_addr, self.cfg.daemon.metrics_port
            ).start()
        server = await serve(self.cfg.daemon.control_socket, self.handle_control)
        if self.cfg.daemon.resync_on_start and self.dispatcher.targets:
            self.store.resync(self.sm.prefixes, self.dispatcher.targets, time.time())
        self.dispatcher.start()
        self.dispatcher.wake()
        tasks = [asyncio.create_task(self._run_source(s), name=s.name) for s in self.sources]
        log.info(
            "srms.started",
            providers=[p.name for p in self.cfg.providers],
            peers=self.dispatcher.targets,
            sources=[s.name for s in self.sources],
            metrics=endpoint.url if endpoint else "off",
            control=str(self.cfg.daemon.control_socket),
        )
        self.ready.set()
        try:
            await self._loop()
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            server.close()
            await self.dispatcher.stop()
            if endpoint is not None:
                endpoint.close()
            self.store.close()
            log.info("srms.stopped")

    async def _run_source(self, source: EventSource) -> None:
        delay = 1.0
        while True:
            try:
                await source.run(self.emit)
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a source that breaks restarts; the daemon goes on
                log.error("source.failed", source=source.name, error=repr(exc), retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _loop(self) -> None:
        # One pending get() lives across turns: cancelling and awaiting it each turn could
        # swallow the daemon's own cancellation (stop) if it arrived during that await.
        get: asyncio.Future[LinkEvent] | None = None
        try:
            while True:
                now = time.time()
                self._commit(self.sm.tick(now), now)
                wake_at = self._advance_renumberings(now)
                deadlines = [d for d in (self.sm.next_deadline(), wake_at) if d is not None]
                timeout = max(0.0, min(deadlines) - time.time()) if deadlines else 3600.0
                if self.store.renumberings(active_only=True):
                    timeout = min(timeout, RENUMBER_POLL)
                self._kick.clear()
                if get is None:
                    get = asyncio.ensure_future(self._events.get())
                kick = asyncio.ensure_future(self._kick.wait())
                waiters: set[asyncio.Future[Any]] = {get, kick}
                try:
                    done, _ = await asyncio.wait(
                        waiters, timeout=timeout, return_when="FIRST_COMPLETED"
                    )
                finally:
                    kick.cancel()
                if get in done:
                    event, get = get.result(), None
                    self._on_event(event)
                    while not self._events.empty():
                        self._on_event(self._events.get_nowait())
        finally:
            if get is not None:
                get.cancel()

    def _on_event(self, event: LinkEvent) -> None:
        now = time.time()
        state = "up" if event.up else "down"
        self.metrics.events.labels(source=event.source, state=state).inc()
        self.store.add_event(now, event.source, event.provider, state, event.detail)
        transitions = self.sm.link_event(event, now)
        log.info(
            "link.event",
            provider=event.provider,
            state=state,
            source=event.source,
            detail=event.detail,
            transitions=len(transitions),
        )
        self._commit(transitions, event.received or now, force=True)

    def _commit(
        self, transitions: Sequence[Transition], received: float, *, force: bool = False
    ) -> list[int]:
        """Persist first, then let the dispatcher act (a crash in between loses nothing)."""
        if not transitions and not force:
            return []
        ids = self.store.record(
            transitions,
            self.dispatcher.targets,
            received=received,
            prefixes=self.sm.prefixes,
            links=self.sm.links,
        )
        for t in transitions:
            self.metrics.transitions.labels(to=t.new.value, reason=t.reason).inc()
            log.info(
                "prefix.transition",
                prefix=str(t.prefix),
                provider=t.provider,
                old=t.old.value if t.old else "none",
                new=t.new.value,
                reason=t.reason,
            )
        if transitions:
            self._update_gauges()
            self.dispatcher.wake()
        return ids

    def _advance_renumberings(self, now: float) -> float | None:
        wait = max((z.max_ttl for z in self.cfg.dns), default=0.0)
        nexts = []
        for r in self.store.renumberings(active_only=True):
            nxt = renumber.advance(
                r, self.store, self.sm, lambda ts: self._commit(ts, time.time()), wait, now
            )
            if nxt is not None:
                nexts.append(nxt)
        return min(nexts) if nexts else None

    def _update_gauges(self) -> None:
        for prefix, st in self.sm.prefixes.items():
            for status in PrefixStatus:
                self.metrics.prefix_status.labels(prefix=str(prefix), status=status.value).set(
                    1 if st.status is status else 0
                )

    # -- operator interface
    async def handle_control(self, request: dict[str, Any]) -> dict[str, Any]:
        command = request.get("command")
        now = time.time()
        try:
            if command == "status":
                return {"ok": True, **status_report(self.store, self.sm, now)}
            if command in ("discourage", "restore"):
                prefix = parse_prefix(str(request["prefix"]))
                fn = self.sm.discourage if command == "discourage" else self.sm.restore
                transitions = fn(prefix, now)
                self.store.add_event(now, "operator", None, command, str(prefix))
                # force: the held flag may change without a transition.
                ids = self._commit(transitions, now, force=True)
                return {"ok": True, "transitions": ids}
            if command == "renumber":
                new = parse_prefix(str(request["add"]))
                retire = parse_prefix(str(request["retire"]))
                return self._start_renumber(new, retire, request.get("provider"), now)
        except (StateError, ValueError) as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": False, "error": f"unknown command {command!r}"}

    def _start_renumber(
        self, new: IPv6Network, retire: IPv6Network, provider: Any, now: float
    ) -> dict[str, Any]:
        old = self.sm.prefixes.get(retire)
        if old is None:
            raise StateError(f"unknown prefix {retire}")
        if old.status is PrefixStatus.WITHDRAWN:
            raise StateError(f"{retire} is already withdrawn")
        provider = str(provider) if provider else old.provider
        if provider not in self.sm.links:
            raise StateError(f"unknown provider {provider!r}")
        for other in self.sm.prefixes:
            if other != new and other.overlaps(new):
                raise StateError(f"{new} overlaps {other}")
        if any(r.new == new or r.retire == retire for r in self.store.renumberings(True)):
            raise StateError(f"a renumbering of {retire} or to {new} is already running")
        rid = self.store.add_renumbering(new, retire, provider, now)
        self._kick.set()
        return {"ok": True, "renumbering": rid}


def status_report(store: Store, sm: PrefixStateMachine | None, now: float) -> dict[str, Any]:
    """What `srms status` shows; from the live state machine, or from the database alone."""
    prefixes = sm.prefixes if sm is not None else store.load_prefixes()
    links = sm.links if sm is not None else store.load_links()
    return {
        "prefixes": [
            {
                "prefix": str(p),
                "provider": st.provider,
                "status": st.status.value,
                "held": st.held,
                "since": st.since,
            }
            for p, st in sorted(prefixes.items())
        ],
        "links": [
            {
                "provider": prov,
                "up": link.up,
                "down_sources": sorted(link.down_sources),
                "restore_in": round(link.restore_at - now, 2)
                if link.restore_at is not None and link.up
                else None,
                "flaps": link.flaps,
            }
            for prov, link in sorted(links.items())
        ],
        "pending_actions": [
            {
                "target": a.target,
                "prefix": str(a.prefix),
                "status": a.status.value,
                "attempts": a.attempts,
                "next_try_in": round(max(0.0, a.next_try - now), 2),
                "last_error": a.last_error,
            }
            for a in store.pending_actions()
        ],
        "refused_actions": store.refused_actions(10),
        "transitions": store.recent_transitions(10),
        "events": store.recent_events(10),
        "renumberings": [
            {
                "id": r.id,
                "new": str(r.new),
                "retire": str(r.retire),
                "provider": r.provider,
                "phase": r.phase,
                "wait_remaining": round(max(0.0, r.wait_until - now), 2)
                if r.wait_until is not None and r.phase == renumber.WAITING
                else None,
            }
            for r in store.renumberings()
        ],
    }
