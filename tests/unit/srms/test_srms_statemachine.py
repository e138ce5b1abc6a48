from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mast_common.prefix import IPv6Network, PrefixStatus

from srms.statemachine import LinkEvent, PrefixState, PrefixStateMachine, StateError

A1 = IPv6Network("2001:db8:a::/48")
A2 = IPv6Network("2001:db8:aa::/48")
B1 = IPv6Network("2001:db8:b::/48")
P = PrefixStatus


def machine(hold_down: float = 10.0) -> PrefixStateMachine:
    sm = PrefixStateMachine(hold_down)
    sm.load_prefix(A1, PrefixState("A", P.PREFERRED))
    sm.load_prefix(A2, PrefixState("A", P.PREFERRED))
    sm.load_prefix(B1, PrefixState("B", P.PREFERRED))
    return sm


def down(provider: str = "A", source: str = "snmp") -> LinkEvent:
    return LinkEvent(provider, False, source)


def up(provider: str = "A", source: str = "snmp") -> LinkEvent:
    return LinkEvent(provider, True, source)


def status(sm: PrefixStateMachine, prefix: IPv6Network) -> PrefixStatus:
    return sm.prefixes[prefix].status


def test_link_down_discourages_every_prefix_of_that_provider_only() -> None:
    sm = machine()
    ts = sm.link_event(down(), now=100)
    assert {(t.prefix, t.old, t.new) for t in ts} == {
        (A1, P.PREFERRED, P.DISCOURAGED),
        (A2, P.PREFERRED, P.DISCOURAGED),
    }
    assert status(sm, B1) is P.PREFERRED
    assert sm.link_event(down(), now=101) == []  # repeated trap: nothing new


def test_restore_only_after_hold_down() -> None:
    sm = machine(hold_down=10)
    sm.link_event(down(), now=0)
    assert sm.link_event(up(), now=1) == []
    assert sm.next_deadline() == 11
    assert sm.tick(10.9) == []
    ts = sm.tick(11)
    assert {t.prefix for t in ts} == {A1, A2}
    assert all(t.new is P.PREFERRED and t.reason == "link up" for t in ts)
    assert sm.next_deadline() is None


def test_down_during_hold_down_restarts_it() -> None:
    sm = machine(hold_down=10)
    sm.link_event(down(), now=0)
    sm.link_event(up(), now=1)
    assert sm.link_event(down(), now=8) == []  # already discouraged
    sm.link_event(up(), now=9)
    assert sm.tick(11) == []
    assert len(sm.tick(19)) == 2


def test_ten_flaps_in_five_seconds_give_one_discourage_and_one_restore() -> None:
    sm = machine(hold_down=3)
    transitions = []
    t = 0.0
    for _ in range(10):
        transitions += sm.link_event(down(), now=t)
        transitions += sm.tick(t + 0.1)
        transitions += sm.link_event(up(), now=t + 0.25)
        transitions += sm.tick(t + 0.4)
        t += 0.5
    assert t <= 5
    now = t
    while now < t + 10:
        transitions += sm.tick(now)
        now += 0.1
    a1 = [tr.new for tr in transitions if tr.prefix == A1]
    assert a1 == [P.DISCOURAGED, P.PREFERRED]
    assert sm.links["A"].flaps == 10


def test_link_is_down_while_any_source_says_so() -> None:
    sm = machine(hold_down=0)
    sm.link_event(down(source="snmp"), now=0)
    sm.link_event(down(source="bird"), now=0.1)
    assert sm.link_event(up(source="snmp"), now=1) == []
    assert status(sm, A1) is P.DISCOURAGED
    ts = sm.link_event(up(source="bird"), now=2)  # hold-down 0: at once
    assert {t.prefix for t in ts} == {A1, A2}


def test_operator_discourage_is_held_through_link_recovery() -> None:
    sm = machine(hold_down=1)
    [t] = sm.discourage(A1, now=0)
    assert t.new is P.DISCOURAGED and t.reason == "operator"
    sm.link_event(down(), now=1)
    sm.link_event(up(), now=2)
    ts = sm.tick(10)
    assert [t.prefix for t in ts] == [A2]
    assert status(sm, A1) is P.DISCOURAGED
    [t] = sm.restore(A1, now=11)
    assert t.new is P.PREFERRED


def test_restore_refused_while_link_down() -> None:
    sm = machine()
    sm.link_event(down(), now=0)
    with pytest.raises(StateError, match="down"):
        sm.restore(A1, now=1)


def test_unknown_prefix_named_in_error() -> None:
    sm = machine()
    with pytest.raises(StateError, match="2001:db8:ff::/48"):
        sm.discourage(IPv6Network("2001:db8:ff::/48"), now=0)


def test_add_and_withdraw_for_renumbering() -> None:
    sm = machine()
    new = IPv6Network("2001:db8:c::/48")
    [t] = sm.add(new, "A", now=0)
    assert t.old is None and t.new is P.PREFERRED
    assert sm.add(new, "A", now=1) == []
    [t] = sm.withdraw(A1, now=2)
    assert t.new is P.WITHDRAWN
    assert sm.withdraw(A1, now=3) == []
    # A withdrawn prefix is not discouraged or restored by link events.
    ts = sm.link_event(down(), now=4)
    assert {t.prefix for t in ts} == {A2, new}
    with pytest.raises(StateError, match="overlaps"):
        sm.add(IPv6Network("2001:db8:c::/56"), "A", now=5)


def test_new_prefix_on_a_down_link_starts_discouraged() -> None:
    sm = machine()
    sm.link_event(down(), now=0)
    [t] = sm.add(IPv6Network("2001:db8:c::/48"), "A", now=1)
    assert t.new is P.DISCOURAGED


# ---- properties over random event sequences -----------------------------------------------


EVENT = st.tuples(
    st.floats(0.0, 3.0),  # time since the previous event
    st.sampled_from(["A", "B"]),
    st.booleans(),
    st.sampled_from(["snmp", "bird"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENT, max_size=40), st.floats(0.5, 5.0))
def test_never_preferred_on_a_down_link_and_never_before_hold_down(
    events: list[tuple[float, str, bool, str]], hold_down: float
) -> None:
    sm = machine(hold_down)
    now = 0.0
    last_up: dict[str, float] = {}
    for gap, provider, is_up, source in events:
        # Tick through the gap so hold-downs end where they should.
        for tr in sm.tick(now + gap):
            assert tr.new is P.PREFERRED
            assert sm.links[tr.provider].up
            assert now + gap - last_up[tr.provider] >= hold_down - 1e-9
        now += gap
        sm.link_event(LinkEvent(provider, is_up, source), now)
        if is_up and sm.links[provider].up and sm.links[provider].restore_at is not None:
            last_up.setdefault(provider, now)
            last_up[provider] = sm.links[provider].restore_at - hold_down
        for prefix, st_ in sm.prefixes.items():
            if not sm.links[st_.provider].up:
                assert st_.status is P.DISCOURAGED, prefix
    # Once every link is up and the hold-down passed, everything is preferred again.
    for provider in ("A", "B"):
        for source in ("snmp", "bird"):
            sm.link_event(LinkEvent(provider, True, source), now)
    sm.tick(now + hold_down + 1)
    assert all(s.status is P.PREFERRED for s in sm.prefixes.values())
