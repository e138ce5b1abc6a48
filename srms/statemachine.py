"""The prefix state machine: link events in, prefix status transitions out.

Pure logic: every call takes `now` (seconds, wall clock so deadlines survive a restart), so unit
tests drive it with a fake clock. Per provider the access link is DOWN while any event source
says so; a down link discourages every preferred prefix of the provider at once. Prefixes come
back only after the link has stayed up for `hold_down` seconds — each new down restarts the
wait, so a flapping link yields one discourage and one restore.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mast_common.prefix import IPv6Network, PrefixStatus


class StateError(Exception):
    """An operator request that the current state does not allow."""


@dataclass(frozen=True)
class LinkEvent:
    provider: str
    up: bool
    source: str  # "snmp", "netlink", "bird"
    detail: str = ""
    received: float = 0.0  # when SRMS got it: action latencies are measured from here


@dataclass(frozen=True)
class Transition:
    prefix: IPv6Network
    provider: str
    old: PrefixStatus | None  # None: the prefix is new (renumbering)
    new: PrefixStatus
    reason: str
    at: float


@dataclass
class PrefixState:
    provider: str
    status: PrefixStatus
    held: bool = False  # discouraged by an operator: only `restore` brings it back
    since: float = 0.0


@dataclass
class LinkState:
    down_sources: set[str] = field(default_factory=set)
    restore_at: float | None = None  # end of the hold-down, when the link is up again
    flaps: int = 0

    @property
    def up(self) -> bool:
        return not self.down_sources


class PrefixStateMachine:
    def __init__(self, hold_down: float) -> None:
        self.hold_down = hold_down
        self.prefixes: dict[IPv6Network, PrefixState] = {}
        self.links: dict[str, LinkState] = {}

    # -- setup and restore from the store
    def load_prefix(self, prefix: IPv6Network, state: PrefixState) -> None:
        self.prefixes[prefix] = state
        self.links.setdefault(state.provider, LinkState())

    def load_link(self, provider: str, link: LinkState) -> None:
        self.links[provider] = link

    def ensure_provider(self, provider: str) -> None:
        self.links.setdefault(provider, LinkState())

    # -- events
    def link_event(self, event: LinkEvent, now: float) -> list[Transition]:
        link = self.links.setdefault(event.provider, LinkState())
        was_up = link.up
        if event.up:
            link.down_sources.discard(event.source)
            if link.up and not was_up:
                link.restore_at = now + self.hold_down
                # A zero hold-down restores at once.
                return self.tick(now)
            return []
        link.down_sources.add(event.source)
        if was_up:
            link.flaps += 1
        link.restore_at = None
        return self._discourage_provider(event.provider, now, f"{event.source} link down")

    def tick(self, now: float) -> list[Transition]:
        """Restore the prefixes of every link whose hold-down has ended."""
        out: list[Transition] = []
        for provider, link in self.links.items():
            if link.up and link.restore_at is not None and link.restore_at <= now:
                link.restore_at = None
                for prefix, st in self._of(provider):
                    if st.status is PrefixStatus.DISCOURAGED and not st.held:
                        out.append(self._move(prefix, st, PrefixStatus.PREFERRED, "link up", now))
        return out

    def next_deadline(self) -> float | None:
        pending = [
            link.restore_at
            for link in self.links.values()
            if link.up and link.restore_at is not None
        ]
        return min(pending) if pending else None

    # -- operator requests
    def discourage(self, prefix: IPv6Network, now: float) -> list[Transition]:
        st = self._get(prefix)
        if st.status is PrefixStatus.WITHDRAWN:
            raise StateError(f"{prefix} is withdrawn")
        st.held = True
        if st.status is PrefixStatus.DISCOURAGED:
            return []
        return [self._move(prefix, st, PrefixStatus.DISCOURAGED, "operator", now)]

    def restore(self, prefix: IPv6Network, now: float) -> list[Transition]:
        st = self._get(prefix)
        if st.status is PrefixStatus.WITHDRAWN:
            raise StateError(f"{prefix} is withdrawn")
        st.held = False
        link = self.links.setdefault(st.provider, LinkState())
        if not link.up:
            raise StateError(
                f"access link of {st.provider} is down ({', '.join(sorted(link.down_sources))}):"
                f" {prefix} comes back after the link is up for {self.hold_down:g} s"
            )
        if st.status is PrefixStatus.PREFERRED or link.restore_at is not None:
            return []  # already preferred, or the hold-down will restore it
        return [self._move(prefix, st, PrefixStatus.PREFERRED, "operator", now)]

    def add(self, prefix: IPv6Network, provider: str, now: float) -> list[Transition]:
        """A new prefix (renumbering): preferred unless its provider's link is down."""
        for other in self.prefixes:
            if other != prefix and other.overlaps(prefix):
                raise StateError(f"{prefix} overlaps {other}")
        link = self.links.setdefault(provider, LinkState())
        status = PrefixStatus.PREFERRED if link.up else PrefixStatus.DISCOURAGED
        existing = self.prefixes.get(prefix)
        if existing is not None and existing.status is not PrefixStatus.WITHDRAWN:
            return []
        st = PrefixState(provider, status, since=now)
        self.prefixes[prefix] = st
        return [Transition(prefix, provider, None, status, "renumber add", now)]

    def withdraw(
        self, prefix: IPv6Network, now: float, reason: str = "renumber"
    ) -> list[Transition]:
        st = self._get(prefix)
        if st.status is PrefixStatus.WITHDRAWN:
            return []
        st.held = False
        return [self._move(prefix, st, PrefixStatus.WITHDRAWN, reason, now)]

    # -- internals
    def _get(self, prefix: IPv6Network) -> PrefixState:
        try:
            return self.prefixes[prefix]
        except KeyError:
            raise StateError(f"unknown prefix {prefix}") from None

    def _of(self, provider: str) -> list[tuple[IPv6Network, PrefixState]]:
        return [(p, st) for p, st in self.prefixes.items() if st.provider == provider]

    def _discourage_provider(self, provider: str, now: float, reason: str) -> list[Transition]:
        return [
            self._move(prefix, st, PrefixStatus.DISCOURAGED, reason, now)
            for prefix, st in self._of(provider)
            if st.status is PrefixStatus.PREFERRED
        ]

    @staticmethod
    def _move(
        prefix: IPv6Network, st: PrefixState, new: PrefixStatus, reason: str, now: float
    ) -> Transition:
        old = st.status
        st.status = new
        st.since = now
        return Transition(prefix, st.provider, old, new, reason, now)
