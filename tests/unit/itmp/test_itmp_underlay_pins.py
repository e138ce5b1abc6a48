"""Underlay pins: which /128 routes the agent re-installs, and when a link event wakes it."""

from __future__ import annotations

import ipaddress
import json
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from itmp.router import kernel
from itmp.router.agent import IFF_RUNNING, IFF_UP, LinkWatch
from itmp.router.model import Encapsulation, Tunnel

A6 = ipaddress.IPv6Address


def tunnel(name: str, remote: str, via: str | None) -> Tunnel:
    return Tunnel(
        name=name,
        encapsulation=Encapsulation.VXLAN,
        local=A6("2001:db8:a:1::1"),
        remote=A6(remote),
        vni=7,
        underlay_next_hop=A6(via) if via else None,
    )


class FakeIp:
    """Stands in for `ip`: a main table and the replace commands the agent runs."""

    def __init__(self, routes: list[dict[str, Any]], refuse: bool = False) -> None:
        self.routes = routes
        self.refuse = refuse
        self.replaced: list[list[str]] = []

    def __call__(self, args: Sequence[str], *, check: bool = True, timeout: float = 10) -> str:
        args = list(args)
        if args[:3] == ["-6", "-j", "route"]:
            return json.dumps(self.routes)
        if args[:3] == ["-6", "route", "replace"]:
            if self.refuse:
                raise kernel.KernelError(f"ip {' '.join(args)}: No route to host")
            self.replaced.append(args)
            return ""
        raise AssertionError(f"unexpected ip {args}")


def test_only_missing_or_wrong_pins_are_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    ip = FakeIp(
        [
            {"dst": "2001:db8:a::1", "gateway": "2001:db8:b:f001::1", "dev": "s-b"},
            {"dst": "2001:db8:c::1", "gateway": "2001:db8:b:f001::9", "dev": "s-b"},
            {"dst": "2001:db8:d::1", "type": "blackhole"},
            {"dst": "2001:db8:b::/48", "gateway": "fe80::1", "dev": "s-b"},
        ]
    )
    monkeypatch.setattr(kernel, "run_ip", ip)
    tunnels = [
        tunnel("ok", "2001:db8:a::1", "2001:db8:b:f001::1"),  # in place
        tunnel("flushed", "2001:db8:b::1", "2001:db8:a:f001::1"),  # gone with its link
        tunnel("moved", "2001:db8:c::1", "2001:db8:b:f001::1"),  # wrong gateway
        tunnel("blackholed", "2001:db8:d::1", "2001:db8:b:f001::1"),  # no gateway at all
        tunnel("unpinned", "2001:db8:e::1", None),
    ]
    restored, missing = kernel.restore_underlay_routes(tunnels)
    assert missing == []
    assert [r[3] for r in ip.replaced] == [
        "2001:db8:b::1/128",
        "2001:db8:c::1/128",
        "2001:db8:d::1/128",
    ]
    assert all("flushed" in r or "moved" in r or "blackholed" in r for r in restored)


def test_pin_through_a_down_link_is_reported_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "run_ip", FakeIp([], refuse=True))
    restored, missing = kernel.restore_underlay_routes(
        [tunnel("t", "2001:db8:b::1", "2001:db8:a:f001::1")]
    )
    assert restored == [] and len(missing) == 1 and "No route to host" in missing[0]


def test_no_pins_no_kernel_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "run_ip", FakeIp([], refuse=True))
    assert kernel.restore_underlay_routes([tunnel("t", "2001:db8:b::1", None)]) == ([], [])


class Msg(dict[str, Any]):
    """The two things LinkWatch reads of a pyroute2 ifinfmsg."""


def link(index: int, flags: int, event: str = "RTM_NEWLINK") -> Msg:
    return Msg(index=index, flags=flags, event=event, ifname=f"if{index}")


def test_link_watch_wakes_only_on_a_link_coming_back_up() -> None:
    wake = threading.Event()
    w = LinkWatch(wake)
    up = IFF_UP | IFF_RUNNING
    w.seen(link(2, up))  # first sight (the initial dump): nothing to repair
    w.seen(link(3, IFF_UP))  # admin up, no carrier yet
    assert not wake.is_set()
    w.seen(link(2, up))  # statistics / address change on a link already up
    assert not wake.is_set()
    w.seen(link(2, 0))  # set down: the kernel flushes its routes
    assert not wake.is_set()
    w.seen(link(2, up))
    assert wake.is_set()
    wake.clear()
    w.seen(link(3, up))  # carrier arrived
    assert wake.is_set()
    wake.clear()
    w.seen(link(4, up, "RTM_DELLINK"))
    w.seen(link(4, up))  # a new link reusing the index
    assert wake.is_set()
