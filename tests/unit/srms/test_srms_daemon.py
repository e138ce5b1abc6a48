"""The daemon's core with fake peers: persistence before actions, retries, restart, CLI."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from mast_common.prefix import IPv6Network, PrefixStatus
from srms_fakes import FakePeer, make_config, wait_until

from srms import cli
from srms.actions import PeerError
from srms.control import request
from srms.daemon import Srms
from srms.dispatch import backoff
from srms.statemachine import LinkEvent

# A hung daemon shows its stack here instead of eating the suite's time budget.
pytestmark = pytest.mark.timeout(60)

A = IPv6Network("2001:db8:a::/48")
B = IPv6Network("2001:db8:b::/48")
P = PrefixStatus


def peers() -> list[FakePeer]:
    return [FakePeer("kea:sock"), FakePeer("dns:example."), FakePeer("netconf:r1")]


async def with_daemon(daemon: Srms, body: Callable[[Srms], Awaitable[None]]) -> None:
    task = asyncio.create_task(daemon.run())
    await asyncio.wait_for(daemon.ready.wait(), 10)
    try:
        await body(daemon)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_link_down_runs_every_action_and_up_restores_after_hold_down(tmp_path: Path) -> None:
    fakes = peers()
    cfg = make_config(tmp_path, hold_down=0.5)

    async def body(d: Srms) -> None:
        received = time.time()
        d.emit(LinkEvent("A", False, "snmp", "test", received))
        await wait_until(lambda: all(f.statuses(A) == [P.DISCOURAGED] for f in fakes))
        assert all(f.statuses(B) == [] for f in fakes)
        d.emit(LinkEvent("A", True, "snmp", "test", time.time()))
        up_at = time.time()
        await asyncio.sleep(0.25)
        assert all(f.statuses(A) == [P.DISCOURAGED] for f in fakes), "restored before hold-down"
        await wait_until(lambda: all(f.statuses(A)[-1:] == [P.PREFERRED] for f in fakes))
        restored = min(t for f in fakes for t, p, s, _ in f.calls if s is P.PREFERRED)
        assert restored - up_at >= 0.5

    asyncio.run(with_daemon(Srms(cfg, peers=fakes, sources=[]), body))  # type: ignore[arg-type]


def test_flapping_link_one_discourage_one_restore(tmp_path: Path) -> None:
    fakes = peers()
    cfg = make_config(tmp_path, hold_down=2.0)

    async def body(d: Srms) -> None:
        for _ in range(10):
            d.emit(LinkEvent("A", False, "snmp", "", time.time()))
            await asyncio.sleep(0.2)
            d.emit(LinkEvent("A", True, "snmp", "", time.time()))
            await asyncio.sleep(0.2)
        await wait_until(lambda: all(f.statuses(A)[-1:] == [P.PREFERRED] for f in fakes))
        await asyncio.sleep(0.3)
        for f in fakes:
            assert f.statuses(A) == [P.DISCOURAGED, P.PREFERRED]

    asyncio.run(with_daemon(Srms(cfg, peers=fakes, sources=[]), body))  # type: ignore[arg-type]


def test_peer_down_is_retried_until_it_comes_back(tmp_path: Path) -> None:
    fakes = peers()
    fakes[0].down = True
    cfg = make_config(tmp_path)

    async def body(d: Srms) -> None:
        d.emit(LinkEvent("A", False, "snmp", "", time.time()))
        await wait_until(lambda: fakes[1].statuses(A) == [P.DISCOURAGED])
        await wait_until(lambda: fakes[0].failures >= 3, what="retries")
        report = await d.handle_control({"command": "status"})
        [pending] = report["pending_actions"]
        assert pending["target"] == "kea:sock" and "down" in pending["last_error"]
        fakes[0].down = False
        await wait_until(lambda: fakes[0].statuses(A) == [P.DISCOURAGED])
        assert d.store.pending_actions() == []

    asyncio.run(with_daemon(Srms(cfg, peers=fakes, sources=[]), body))  # type: ignore[arg-type]


def test_actions_pending_at_stop_complete_after_restart(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    first = peers()
    for f in first:
        f.down = True

    async def down(d: Srms) -> None:
        d.emit(LinkEvent("A", False, "snmp", "", time.time()))
        await wait_until(lambda: all(f.failures for f in first))

    asyncio.run(with_daemon(Srms(cfg, peers=first, sources=[]), down))  # type: ignore[arg-type]
    second = peers()

    async def after(d: Srms) -> None:
        await wait_until(lambda: all(f.statuses(A) == [P.DISCOURAGED] for f in second))
        assert d.sm.prefixes[A].status is P.DISCOURAGED

    asyncio.run(with_daemon(Srms(cfg, peers=second, sources=[]), after))  # type: ignore[arg-type]


def test_operator_commands_over_control_socket(tmp_path: Path) -> None:
    fakes = peers()
    cfg = make_config(tmp_path)
    sock = cfg.daemon.control_socket

    async def body(d: Srms) -> None:
        ans = await asyncio.to_thread(request, sock, {"command": "discourage", "prefix": str(B)})
        assert ans["ok"], ans
        await wait_until(lambda: all(f.statuses(B) == [P.DISCOURAGED] for f in fakes))
        ans = await asyncio.to_thread(
            request, sock, {"command": "restore", "prefix": "2001:db8:f::/48"}
        )
        assert not ans["ok"] and "unknown prefix" in ans["error"]
        ans = await asyncio.to_thread(request, sock, {"command": "bogus"})
        assert not ans["ok"]
        ans = await asyncio.to_thread(request, sock, {"command": "restore", "prefix": str(B)})
        assert ans["ok"]
        await wait_until(lambda: all(f.statuses(B) == [P.DISCOURAGED, P.PREFERRED] for f in fakes))
        status = await asyncio.to_thread(request, sock, {"command": "status"})
        assert {p["prefix"]: p["status"] for p in status["prefixes"]} == {
            str(A): "preferred",
            str(B): "preferred",
        }

    asyncio.run(with_daemon(Srms(cfg, peers=fakes, sources=[]), body))  # type: ignore[arg-type]


def test_renumber_publishes_waits_ttl_then_withdraws(tmp_path: Path) -> None:
    fakes = peers()
    cfg = make_config(tmp_path, max_ttl=0.6)
    new = IPv6Network("2001:db8:c::/48")

    async def body(d: Srms) -> None:
        ans = await d.handle_control({"command": "renumber", "add": str(new), "retire": str(A)})
        assert ans["ok"], ans
        await wait_until(lambda: all(f.statuses(new) == [P.PREFERRED] for f in fakes))
        published = max(t for f in fakes for t, p, _, _ in f.calls if p == new)
        assert all(is_new for f in fakes for _, p, _, is_new in f.calls if p == new)
        await wait_until(lambda: all(f.statuses(A) == [P.WITHDRAWN] for f in fakes))
        withdrawn = min(t for f in fakes for t, p, _, _ in f.calls if p == A)
        assert withdrawn - published >= 0.6
        await wait_until(lambda: d.store.renumberings()[0].phase == "done")
        again = await d.handle_control(
            {"command": "renumber", "add": "2001:db8:d::/48", "retire": str(A)}
        )
        assert not again["ok"] and "withdrawn" in again["error"]

    asyncio.run(with_daemon(Srms(cfg, peers=fakes, sources=[]), body))  # type: ignore[arg-type]


def test_status_cli_reads_database_when_daemon_is_down(tmp_path: Path, capsys: object) -> None:
    cfg = make_config(tmp_path)

    async def body(d: Srms) -> None:
        d.emit(LinkEvent("A", False, "snmp", "eth1", time.time()))
        await wait_until(lambda: d.sm.prefixes[A].status is P.DISCOURAGED)

    asyncio.run(with_daemon(Srms(cfg, peers=[FakePeer("kea:x", down=True)], sources=[]), body))  # type: ignore[list-item]
    toml = tmp_path / "srms.toml"
    toml.write_text(
        f"""
[daemon]
state_db = "{cfg.daemon.state_db}"
control_socket = "{tmp_path / "absent.sock"}"
[[providers]]
name = "A"
prefixes = ["2001:db8:a::/48"]
access = {{ router = "10.0.0.1", if_index = 2 }}
"""
    )
    assert cli.main(["-c", str(toml), "status", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert out["source"].startswith("database")
    assert out["prefixes"][0]["status"] == "discouraged"
    assert out["pending_actions"][0]["target"] == "kea:x"
    assert cli.main(["-c", str(toml), "status"]) == 0
    assert cli.main(["-c", str(toml), "discourage", str(A)]) == 69  # daemon not running
    assert cli.main(["-c", str(toml), "discourage", "2001:db8::1/48"]) == 64
    assert cli.main(["-c", str(tmp_path / "missing.toml"), "status"]) == 78


def test_backoff_doubles_and_caps() -> None:
    delays = [backoff(n, 0.5, 4.0, lambda: 0.5) for n in range(1, 8)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0]


def test_refused_action_is_not_retried(tmp_path: Path) -> None:
    class Refusing(FakePeer):
        async def apply(self, prefix: IPv6Network, status: PrefixStatus, *, is_new: bool) -> None:
            self.failures += 1
            raise PeerError("result 1: prefix not served", retry=False)

    refusing = Refusing("kea:sock")
    cfg = make_config(tmp_path)

    async def body(d: Srms) -> None:
        d.emit(LinkEvent("A", False, "snmp", "", time.time()))
        await wait_until(lambda: refusing.failures == 1)
        await asyncio.sleep(0.5)
        assert refusing.failures == 1
        report = await d.handle_control({"command": "status"})
        assert report["pending_actions"] == []
        [refused] = report["refused_actions"]
        assert "not served" in refused["error"]
        assert "REFUSED" in cli.format_status(report)

    asyncio.run(with_daemon(Srms(cfg, peers=[refusing], sources=[]), body))  # type: ignore[list-item]
