"""Datastore semantics without a kernel: candidate, confirmed commit, rollback, persistence."""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path

import pytest
from mast_common.prefix import PrefixStatus

from itmp.router.backends import DryRunBackend
from itmp.router.datastore import ApplyError, Datastores, StateStore
from itmp.router.model import Encapsulation, RouterConfig, Tunnel

T0 = Tunnel(
    "t0", Encapsulation.VXLAN, ipaddress.IPv6Address("::1"), ipaddress.IPv6Address("::2"), vni=1
)
T1 = Tunnel("t1", Encapsulation.GRE, ipaddress.IPv6Address("::1"), ipaddress.IPv6Address("::3"))
P = ipaddress.IPv6Network("2001:db8:a::/48")


class Recorder(DryRunBackend):
    def __init__(self) -> None:
        super().__init__([Encapsulation.VXLAN])
        self.applied: list[RouterConfig] = []

    def apply(self, old: RouterConfig, new: RouterConfig, confirm_timeout: int | None) -> None:
        super().apply(old, new, confirm_timeout)  # refuses GRE: this "kernel" has none
        self.applied.append(new)

    def revert(self, current: RouterConfig, previous: RouterConfig) -> None:
        self.applied.append(previous)


def stores(tmp_path: Path) -> tuple[Datastores, Recorder]:
    backend = Recorder()
    return Datastores(backend, StateStore(tmp_path / "running.sqlite")), backend


def test_candidate_commit_and_persistence(tmp_path: Path) -> None:
    ds, backend = stores(tmp_path)
    ds.set_candidate(RouterConfig({"t0": T0}, {}, {P: PrefixStatus.DISCOURAGED}))
    assert not ds.running.tunnels
    ds.commit()
    assert ds.running.tunnels == {"t0": T0} and backend.applied[-1] is ds.running
    again, _ = stores(tmp_path)
    assert again.running == ds.running


def test_refused_commit_keeps_running(tmp_path: Path) -> None:
    ds, _ = stores(tmp_path)
    ds.set_candidate(RouterConfig({"t1": T1}))
    with pytest.raises(ApplyError, match="rolled back"):
        ds.commit()
    assert not ds.running.tunnels
    assert ds.metrics.commits.labels(result="rolled_back")._value.get() == 1


def test_confirmed_commit_reverts_unless_confirmed(tmp_path: Path) -> None:
    ds, backend = stores(tmp_path)
    ds.set_candidate(RouterConfig({"t0": T0}))
    ds.commit(confirm_timeout=1)
    assert ds.running.tunnels and ds.pending is not None
    # Not persisted until confirmed: a restart now would come back without t0.
    assert not stores(tmp_path)[0].running.tunnels
    time.sleep(1.5)
    assert not ds.running.tunnels and backend.applied[-1] == RouterConfig()
    ds.set_candidate(RouterConfig({"t0": T0}))
    ds.commit(confirm_timeout=30)
    ds.commit()  # the confirming commit
    assert ds.pending is None and stores(tmp_path)[0].running.tunnels == {"t0": T0}


def test_cancel_commit(tmp_path: Path) -> None:
    ds, _ = stores(tmp_path)
    assert not ds.cancel()
    ds.set_candidate(RouterConfig({"t0": T0}))
    ds.commit(confirm_timeout=30)
    assert ds.cancel() and not ds.running.tunnels and not ds.candidate.tunnels


def test_ended_session_leaves_no_candidate_edits(tmp_path: Path) -> None:
    ds, _ = stores(tmp_path)
    ds.set_candidate(RouterConfig({"t0": T0}), session_id=7)
    ds.session_ended(8)
    assert ds.candidate.tunnels  # someone else's session: untouched
    ds.session_ended(7)
    assert not ds.candidate.tunnels and ds.candidate == ds.running


def test_ended_session_rolls_back_its_confirmed_commit(tmp_path: Path) -> None:
    ds, _ = stores(tmp_path)
    ds.set_candidate(RouterConfig({"t0": T0}), session_id=3)
    ds.commit(confirm_timeout=300, session_id=3)
    assert ds.running.tunnels
    ds.session_ended(3)
    assert not ds.running.tunnels and ds.pending is None
