"""itmp router-agent against real BIRD 2 in a namespace, driven by ncclient over NETCONF/SSH."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import pytest
from mast_common.daemons import start_bird
from mast_common.netns import Lab
from mast_common.waiting import wait_for
from ncclient.operations.rpc import RPCError

from itmp.labkit import bird_include_body, start_router_agent
from itmp.router.model import Encapsulation, Neighbor, Tunnel
from itmp.routerclient import RouterError

pytestmark = pytest.mark.integration

A = ipaddress.IPv6Address


def tunnel(name: str = "itmp0", vni: int = 100) -> Tunnel:
    return Tunnel(
        name=name,
        encapsulation=Encapsulation.VXLAN,
        local=A("2001:db8:1::1"),
        remote=A("2001:db8:1::2"),
        vni=vni,
        addresses=(ipaddress.IPv6Interface("fd00:1::1/64"),),
    )


def neighbor(name: str = "stub1", tun: str = "itmp0") -> Neighbor:
    return Neighbor(
        name=name,
        address=A("fd00:1::2"),
        remote_as=64512,
        local_as=65001,
        local_pref=50,
        bfd=True,
        tunnel=tun,
        import_prefixes=(ipaddress.IPv6Network("2001:db8:a:1::/64"),),
    )


def prefix_status(prefix: str, status: str) -> str:
    return (
        '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><router xmlns="urn:mast:router:1">'
        f"<prefix-status><prefix>{prefix}</prefix><status>{status}</status></prefix-status>"
        "</router></config>"
    )


@pytest.fixture
def router(netns_lab: Lab, require_binaries: Callable[..., None]):  # type: ignore[no-untyped-def]
    require_binaries(bird="bird2", birdc="bird2")
    r = netns_lab.node("r")
    netns_lab.link("r", "r-h", "h", "h-r")
    r.add_address("r-h", "2001:db8:1::1/64")
    r.add_address("r-h", "2001:db8:a:1::1/64")
    r.add_address("r-h", "2001:db8:b:1::1/64")
    inc = netns_lab.workdir / "r.itmp.d"
    bird = start_bird(r, router_id="10.0.0.1", body=bird_include_body(inc))
    agent = start_router_agent(r, bird=bird, include_dir=inc)
    return r, bird, agent


def test_tunnel_and_neighbor_reach_kernel_and_bird(router) -> None:  # type: ignore[no-untyped-def]
    r, bird, agent = router
    with agent.session() as s:
        encaps = s.encapsulations()
        assert Encapsulation.VXLAN in encaps
        s.change(put_tunnels=[tunnel()], put_neighbors=[neighbor()])
        running = s.running()
        assert running.tunnels["itmp0"] == tunnel()
        assert running.neighbors["stub1"] == neighbor()
    link = r.ip("-d", "link", "show", "itmp0")
    assert "vxlan id 100" in link and "remote 2001:db8:1::2" in link and "mtu 1430" in link
    assert "fd00:1::1/64" in r.ip("-6", "addr", "show", "dev", "itmp0")
    protos = bird.birdc("show", "protocols")
    assert "stub1" in protos and "itmp_bfd" in protos
    assert (
        "bgp_local_pref = 50"
        in (agent.node.lab.workdir / "r.itmp.d" / "itmp_stub1.conf").read_text()
    )
    # An agent restart finds its tunnel already in the kernel and carries on.
    agent = agent.restart()
    assert "vxlan id 100" in r.ip("-d", "link", "show", "itmp0")
    with agent.session() as s:
        assert s.running().tunnels["itmp0"] == tunnel()
    with agent.session() as s:
        s.change(delete_neighbors=["stub1"], delete_tunnels=["itmp0"])
    assert "itmp0" not in r.ip("link", "show")
    assert "stub1" not in bird.birdc("show", "protocols")


def test_failed_commit_rolls_back_kernel_and_bird(router) -> None:  # type: ignore[no-untyped-def]
    r, bird, agent = router
    with agent.session() as s:
        s.change(put_tunnels=[tunnel()], put_neighbors=[neighbor()])
        # `device1` is the base config's own protocol: BIRD refuses the snippet at configure time.
        with pytest.raises(RouterError, match="already defined"):
            s.change(
                put_tunnels=[tunnel("itmp1", 101)], put_neighbors=[neighbor("device1", "itmp1")]
            )
        running = s.running()
        assert set(running.tunnels) == {"itmp0"} and set(running.neighbors) == {"stub1"}
    assert "itmp1" not in r.ip("link", "show")
    assert "itmp0" in r.ip("link", "show")
    assert not (agent.node.lab.workdir / "r.itmp.d" / "itmp_device1.conf").exists()
    assert "stub1" in bird.birdc("show", "protocols")


def test_confirmed_commit_reverts_without_confirmation(router) -> None:  # type: ignore[no-untyped-def]
    r, _bird, agent = router
    with agent.session() as s:
        s.m.edit_config(target="candidate", config=prefix_status("2001:db8:a::/48", "discouraged"))
        s.m.commit(confirmed=True, timeout="2")
        assert "deprecated" in r.ip("-6", "addr", "show", "to", "2001:db8:a:1::1/128")
        wait_for(
            lambda: "deprecated" not in r.ip("-6", "addr", "show", "to", "2001:db8:a:1::1/128"),
            timeout=10,
            what="confirmed commit to revert",
        )
        assert not s.running().prefix_status
    # RFC 6241 8.4.1: the session that issued the confirmed commit ends -> rolled back at once.
    s = agent.session()
    s.m.edit_config(target="candidate", config=prefix_status("2001:db8:a::/48", "discouraged"))
    s.m.commit(confirmed=True, timeout="300")
    assert "deprecated" in r.ip("-6", "addr", "show", "to", "2001:db8:a:1::1/128")
    s.close()
    wait_for(
        lambda: "deprecated" not in r.ip("-6", "addr", "show", "to", "2001:db8:a:1::1/128"),
        timeout=10,
        what="rollback when the confirming session ends",
    )


def test_prefix_status_candidate_and_running_and_restart(router) -> None:  # type: ignore[no-untyped-def]
    r, _bird, agent = router

    def show(addr: str) -> str:
        return r.ip("-6", "addr", "show", "to", f"{addr}/128")

    with agent.session() as s:
        s.m.edit_config(target="candidate", config=prefix_status("2001:db8:a::/48", "discouraged"))
        s.m.commit()
        out = show("2001:db8:a:1::1")
        assert "preferred_lft 0sec" in out and "valid_lft forever" in out
        assert "deprecated" not in show("2001:db8:b:1::1")
        # An address added later is caught by the periodic refresh.
        r.add_address("r-h", "2001:db8:a:1::99/64")
        wait_for(lambda: "deprecated" in show("2001:db8:a:1::99"), timeout=10, what="refresh")
        s.m.edit_config(target="running", config=prefix_status("2001:db8:a::/48", "preferred"))
        assert "preferred_lft forever" in show("2001:db8:a:1::1")
        s.m.edit_config(target="running", config=prefix_status("2001:db8:b::/48", "discouraged"))
        with pytest.raises(RPCError, match="expected preferred, discouraged or withdrawn"):
            s.m.edit_config(target="running", config=prefix_status("2001:db8:b::/48", "gone"))
    agent = agent.restart()
    # Restart: a reboot-like loss of kernel state is repaired from the state directory.
    r.ip(
        "-6",
        "addr",
        "change",
        "2001:db8:b:1::1/64",
        "dev",
        "r-h",
        "preferred_lft",
        "forever",
        "nodad",
    )
    wait_for(lambda: "deprecated" in show("2001:db8:b:1::1"), timeout=10, what="re-applied status")
    with agent.session() as s:
        s.m.edit_config(target="running", config=prefix_status("2001:db8:b::/48", "withdrawn"))
        state = s.state()
    assert show("2001:db8:b:1::1").strip() == ""
    assert state is not None
