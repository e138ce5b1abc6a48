from __future__ import annotations

from pathlib import Path

from mast_common.prefix import IPv6Network, PrefixStatus

from srms.statemachine import LinkEvent, PrefixState, PrefixStateMachine
from srms.store import Store

A1 = IPv6Network("2001:db8:a::/48")
B1 = IPv6Network("2001:db8:b::/48")
TARGETS = ["kea:/run/kea.sock", "dns:example.", "netconf:r1"]


def setup(tmp_path: Path) -> tuple[Store, PrefixStateMachine]:
    store = Store(tmp_path / "state.db")
    sm = PrefixStateMachine(5)
    for p, prov in ((A1, "A"), (B1, "B")):
        store.seed_prefix(p, PrefixState(prov, PrefixStatus.PREFERRED))
    for p, st in store.load_prefixes().items():
        sm.load_prefix(p, st)
    return store, sm


def test_transition_and_actions_survive_reopen(tmp_path: Path) -> None:
    store, sm = setup(tmp_path)
    ts = sm.link_event(LinkEvent("A", False, "snmp"), now=10)
    [tid] = store.record(ts, TARGETS, received=9.5, prefixes=sm.prefixes, links=sm.links)
    store.close()

    store = Store(tmp_path / "state.db")
    assert store.load_prefixes()[A1].status is PrefixStatus.DISCOURAGED
    assert store.load_links()["A"].down_sources == {"snmp"}
    pending = store.pending_actions()
    assert [(a.target, a.prefix, a.status) for a in pending] == [
        (t, A1, PrefixStatus.DISCOURAGED) for t in TARGETS
    ]
    assert all(a.received == 9.5 and a.transition_id == tid for a in pending)
    assert not store.transition_done(tid)
    for a in pending:
        store.action_done(a.id, 11)
    assert store.transition_done(tid)


def test_newer_status_supersedes_pending_action(tmp_path: Path) -> None:
    store, sm = setup(tmp_path)
    t1 = store.record(
        sm.link_event(LinkEvent("A", False, "snmp"), 1),
        TARGETS[:1],
        received=1,
        prefixes=sm.prefixes,
        links=sm.links,
    )
    sm.link_event(LinkEvent("A", True, "snmp"), 2)
    t2 = store.record(sm.tick(100), TARGETS[:1], received=100, prefixes=sm.prefixes, links=sm.links)
    [a] = store.pending_actions()
    assert a.status is PrefixStatus.PREFERRED and a.transition_id == t2[0]
    assert store.transition_done(t1[0])  # superseded counts as done


def test_pending_add_stays_an_add_when_superseded(tmp_path: Path) -> None:
    store, sm = setup(tmp_path)
    new = IPv6Network("2001:db8:c::/48")
    store.record(sm.add(new, "A", 1), ["dns:z"], received=1, prefixes=sm.prefixes, links=sm.links)
    store.record(
        sm.link_event(LinkEvent("A", False, "snmp"), 2),
        ["dns:z"],
        received=2,
        prefixes=sm.prefixes,
        links=sm.links,
    )
    by_prefix = {a.prefix: a for a in store.pending_actions()}
    assert by_prefix[new].is_new and by_prefix[new].status is PrefixStatus.DISCOURAGED
    assert not by_prefix[A1].is_new


def test_failed_action_keeps_error_and_next_try(tmp_path: Path) -> None:
    store, sm = setup(tmp_path)
    store.record(
        sm.discourage(A1, 1), TARGETS[:1], received=1, prefixes=sm.prefixes, links=sm.links
    )
    [a] = store.pending_actions()
    store.action_failed(a.id, 50, "connection refused")
    [a] = store.pending_actions()
    assert (a.attempts, a.next_try, a.last_error) == (1, 50, "connection refused")
    assert store.load_prefixes()[A1].held


def test_resync_queues_current_state_once(tmp_path: Path) -> None:
    store, sm = setup(tmp_path)
    store.record(
        sm.discourage(A1, 1), TARGETS[:1], received=1, prefixes=sm.prefixes, links=sm.links
    )
    store.resync(sm.prefixes, TARGETS[:1], 2)
    pending = store.pending_actions()
    # A1's discourage was still pending: kept; B1 gets its (preferred) status pushed again.
    assert sorted((str(a.prefix), a.status.value) for a in pending) == [
        (str(A1), "discouraged"),
        (str(B1), "preferred"),
    ]


def test_events_are_capped(tmp_path: Path) -> None:
    store, _ = setup(tmp_path)
    for i in range(300):
        store.add_event(i, "snmp", "A", "down", f"#{i}")
    events = store.recent_events(1000)
    assert len(events) <= 201
    assert events[0]["detail"] == "#299"
