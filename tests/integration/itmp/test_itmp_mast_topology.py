"""ITMP end to end: stub—A, stub—B, A—B with real BIRD 2, router agents (NETCONF/SSH), two TMSs
and `itmp stub` over TLS 1.3; backup tunnels carry the stub's prefix when its access link fails.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
import ssl
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mast_common.netns import Lab
from mast_common.waiting import wait_for

from itmp.channel import Channel, PeerClosed, client_context, hello_body
from itmp.labkit import PLANS, MastTopology, build_mast_topology, socket_in_netns
from itmp.pki import LabCa
from itmp.protocol import ErrorCode, MessageType

pytestmark = pytest.mark.integration

PING_INTERVAL = 0.05

TCP_ECHO_SERVER = """
import socket, sys
srv = socket.create_server((sys.argv[1], 7007), family=socket.AF_INET6)
print("listening", flush=True)
conn, _ = srv.accept()
while data := conn.recv(4096):
    conn.sendall(data)
"""
TCP_CLIENT = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], 7007), timeout=30, source_address=(sys.argv[3], 0))
end, n, worst, last = time.monotonic() + float(sys.argv[2]), 0, 0.0, time.monotonic()
while time.monotonic() < end:
    c.sendall(b"x")
    assert c.recv(1) == b"x"
    now = time.monotonic()
    worst, last, n = max(worst, now - last), now, n + 1
    time.sleep(0.05)
print(f"echoes={n} longest_gap={worst:.2f}s", flush=True)
"""


@pytest.fixture(scope="module")
def topo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MastTopology]:
    import os

    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if not (shutil.which("bird") and shutil.which("birdc")):
        pytest.fail("missing: bird/birdc (Debian package bird2) — run scripts/install-deps")
    lab = Lab(tmp_path_factory.mktemp("itmp-lab"))
    try:
        t = build_mast_topology(lab)
        wait_for(
            lambda: t.birds["s"].birdc("show", "protocols").count("Established") >= 2,
            timeout=60,
            what="stub's direct BGP sessions",
        )
        yield t
    finally:
        lab.close()


def router_tunnels(t: MastTopology, key: str) -> set[str]:
    with t.agents[key].session() as s:
        return set(s.running().tunnels)


def kernel_links(t: MastTopology, key: str) -> set[str]:
    out = t.nodes[key].ip("-o", "link", "show")
    return {m.group(1) for m in re.finditer(r"^\d+: ([^:@]+)", out, re.M)}


def route_dev(t: MastTopology, key: str, addr: str) -> str:
    out = t.nodes[key].ip("-6", "route", "get", addr)
    m = re.search(r" dev (\S+)", out)
    return m.group(1) if m else out


def test_tunnels_negotiated_and_failover(topo: MastTopology) -> None:
    out = topo.run_stub_once()
    print(out)
    # The output says which encapsulation was negotiated and why (this kernel has no GRE).
    assert "A/B: up" in out and "B/A: up" in out
    assert "encapsulation=vxlan" in out and "gre not supported" in out
    for key in ("a", "b"):
        assert "tunnel.offered" in topo.tms[key].process.log()
        assert "gre not supported" in topo.tms[key].process.log()

    def both_paths(key: str) -> str | None:
        """A's (B's) view of the stub's A- (B-) prefix once both paths are in BIRD."""
        routes = topo.birds[key].birdc("show", "route", "for", PLANS[key].stub_endpoint, "all")
        if "[itmp_0" not in routes or "[stub_direct" not in routes:
            return None
        if route_dev(topo, key, PLANS[key].stub_endpoint) != f"{key}-s":
            return None
        return routes

    # Sessions may still be settling (BFD on a shared machine): wait for the converged state.
    wait_for(
        lambda: all(both_paths(k) for k in ("a", "b")),
        timeout=60,
        what="direct and tunnel paths in BIRD",
    )
    # Tunnels have no carrier: BFD watches them.
    wait_for(
        lambda: all(
            re.search(r"itmp0\s+Up", topo.birds[k].birdc("show", "bfd", "sessions"))
            for k in ("a", "b", "s")
        ),
        timeout=30,
        what="BFD up on the tunnels",
    )
    for key in ("a", "b"):
        routes = wait_for(lambda k=key: both_paths(k), timeout=30, what="both paths")
        print(routes)
        # Both paths known: direct (local pref 200, best) and through the tunnel (50).
        tunnel_part = routes[routes.index("[itmp_0") :]
        assert "BGP.local_pref: 50" in tunnel_part and "on itmp0" in tunnel_part
        best = routes[routes.index("unicast") :].splitlines()[0]
        assert "stub_direct" in best and "*" in best

    # Cut stub—A at the switch while A pings the stub's A-address every 50 ms. A's own port
    # keeps its carrier: only BFD (100 ms x 3) tells A's BIRD that the stub is gone.
    a, s, swa = topo.nodes["a"], topo.nodes["s"], topo.nodes["swa"]
    target = PLANS["a"].stub_endpoint
    count = 200
    ping = a.spawn(
        [
            "ping",
            "-6",
            "-n",
            "-I",
            PLANS["a"].gateway,
            "-i",
            str(PING_INTERVAL),
            "-c",
            str(count),
            "-W",
            "1",
            target,
        ],
        label="ping",
    )
    # And a TCP connection to the same address, one echo every 50 ms: it must survive the cut.
    server = s.spawn([sys.executable, "-c", TCP_ECHO_SERVER, target], label="tcp-echo")
    wait_for(lambda: "listening" in server.log(), timeout=10, what="TCP echo server")
    client = a.spawn(
        [sys.executable, "-c", TCP_CLIENT, target, "6", PLANS["a"].gateway], label="tcp-client"
    )
    time.sleep(2)
    cut = time.monotonic()
    swa.set_link("swa-s", False)
    wait_for(
        lambda: route_dev(topo, "a", target) == "itmp0",
        timeout=15,
        what="A's route to move to the tunnel",
    )
    moved = time.monotonic() - cut
    assert "LOWER_UP" in a.ip("link", "show", "a-s"), "A's access port lost carrier: not a BFD test"
    direct_state = topo.birds["a"].birdc("show", "protocols", "stub_direct").splitlines()[-1]
    wait_for(lambda: not ping.alive(), timeout=count * PING_INTERVAL + 30, what="ping to finish")
    log = ping.log()
    m = re.search(r"(\d+) packets transmitted, (\d+) received", log)
    assert m, log
    sent, got = int(m.group(1)), int(m.group(2))
    window = (sent - got) * PING_INTERVAL
    print(
        f"failover: route via tunnel after {moved:.2f} s; ping {got}/{sent}, loss window {window:.2f} s"
    )
    print("bird on a:", " ".join(direct_state.split()))
    if window > 1:
        for key in ("a", "s"):  # what BIRD saw around the cut, for whoever reads a slow run
            events = [
                ln
                for ln in topo.birds[key].process.log().splitlines()
                if "itmp" in ln or "stub_direct" in ln
            ]
            print(f"--- bird on {key}:\n" + "\n".join(events[-15:]))
    # Typically about BFD's 0.3 s (the tunnel route is ready beforehand); the bound is loose
    # because this machine is shared and BIRD may be starved for a while.
    assert got >= sent - int(6 / PING_INTERVAL), f"loss window {window:.2f} s too long:\n{log}"
    # Packets after the switch came through the tunnel: the last ones were all answered.
    tail = [ln for ln in log.splitlines() if "icmp_seq=" in ln][-10:]
    assert len(tail) == 10

    wait_for(lambda: not client.alive(), timeout=30, what="TCP client to finish")
    print("tcp:", client.log().strip())
    assert client.popen.returncode == 0 and "echoes=" in client.log(), client.log()
    server.stop()

    # Restore: traffic moves back to the direct path.
    swa.set_link("swa-s", True)
    wait_for(
        lambda: route_dev(topo, "a", target) == "a-s",
        timeout=60,
        what="A's route back to the access link",
    )
    a.exec(
        ["ping", "-6", "-n", "-c", "3", "-i", "0.2", "-W", "2", "-I", PLANS["a"].gateway, target],
        timeout=20,
    )


def pin_devs(t: MastTopology, remotes: set[str]) -> dict[str, str]:
    """The stub's host routes to the given tunnel remotes: remote → `gateway dev`."""
    out: dict[str, str] = {}
    for line in t.nodes["s"].ip("-6", "route", "show", "table", "main").splitlines():
        m = re.match(r"(\S+?)(?:/128)? via (\S+) dev (\S+)", line)
        if m and m.group(1) in remotes:
            out[m.group(1)] = f"{m.group(2)} {m.group(3)}"
    return out


def tx_bytes(t: MastTopology, ifname: str) -> int:
    out = t.nodes["s"].ip("-s", "-j", "link", "show", "dev", ifname)
    return int(json.loads(out)[0]["stats64"]["tx"]["bytes"])


def test_underlay_pins_restored_after_access_link_flap(topo: MastTopology) -> None:
    """Setting stub—A down makes Linux delete the /128 that pins B's tunnel to A's link; the
    agent must put it back when the link returns, or B's backup tunnel rides B's own link."""
    s = topo.nodes["s"]
    with topo.agents["s"].session() as sess:
        running = sess.running()
    if sum(t.underlay_next_hop is not None for t in running.tunnels.values()) < 2:
        topo.run_stub_once()  # run alone (-k): negotiate the tunnels first
        with topo.agents["s"].session() as sess:
            running = sess.running()
    # Each pin leaves through the access link its next hop sits on.
    link_of = {p.access(1): f"s-{p.key}" for p in PLANS.values()}
    wanted = {
        str(t.remote): f"{t.underlay_next_hop} {link_of[str(t.underlay_next_hop)]}"
        for t in running.tunnels.values()
        if t.underlay_next_hop is not None
    }
    b_remote = PLANS["b"].gateway
    assert wanted.get(b_remote, "").endswith(" s-a"), wanted
    wait_for(lambda: pin_devs(topo, set(wanted)) == wanted, timeout=10, what="underlay pins")

    s.set_link("s-a", False)
    try:
        # The kernel flushed B's pin with the link: this is what the agent has to repair.
        wait_for(
            lambda: b_remote not in pin_devs(topo, set(wanted)),
            timeout=5,
            what="the kernel to flush the pin through s-a",
        )
        time.sleep(0.5)
    finally:
        s.set_link("s-a", True)
    up = time.monotonic()
    wait_for(
        lambda: pin_devs(topo, set(wanted)) == wanted,
        timeout=10,
        what="the agent to restore every underlay pin",
    )
    restored = time.monotonic() - up
    print(f"underlay pins back {restored:.2f} s after s-a came up")
    assert "underlay.route_restored" in topo.agents["s"].process.log()

    # B's backup tunnel's outer packets leave through s-a again, not through s-b.
    b_tunnel = next(t for t in running.tunnels.values() if str(t.remote) == b_remote)
    inner = next(n for n in running.neighbors.values() if n.tunnel == b_tunnel.name).address
    count, size = 40, 1200
    wait_for(
        lambda: (
            s.exec(["ping", "-6", "-n", "-c", "1", "-W", "1", str(inner)], check=False).returncode
            == 0
        ),
        timeout=20,
        what=f"ping over {b_tunnel.name}",
    )
    before_a, before_b = tx_bytes(topo, "s-a"), tx_bytes(topo, "s-b")
    s.exec(
        ["ping", "-6", "-n", "-q", "-c", str(count), "-i", "0.05", "-s", str(size), str(inner)],
        check=False,
        timeout=20,
    )
    sent_a, sent_b = tx_bytes(topo, "s-a") - before_a, tx_bytes(topo, "s-b") - before_b
    print(f"{count} x {size} B over {b_tunnel.name}: s-a sent {sent_a} B, s-b sent {sent_b} B")
    # BFD and BGP add a few kB per second on each link; the pings alone are 48 kB.
    assert sent_a >= count * size, (sent_a, sent_b)
    assert sent_b < count * size // 2, (sent_a, sent_b)


async def _raw_request(
    t: MastTopology, files: Any, prefix: str, endpoint: str, server: str = "tms.a.example"
) -> dict[str, Any]:
    sock = socket_in_netns(t.nodes["a"], "::1", 4700)
    reader, writer = await asyncio.open_connection(
        sock=sock, ssl=client_context(files), server_hostname=server
    )
    ch = Channel(reader, writer)
    try:
        await ch.send(MessageType.HELLO, hello_body("stub", "test", ["vxlan"], 10))
        await ch.expect(10, MessageType.HELLO)
        await ch.send(
            MessageType.TUNNEL_REQUEST,
            {
                "request_id": 9,
                "prefix": prefix,
                "stub_endpoint": endpoint,
                "stub_as": 64512,
                "encapsulations": ["vxlan"],
            },
        )
        msg = await ch.recv(30)
        return {"type": msg.type, **msg.body}
    finally:
        await ch.close()


def test_undelegated_prefix_gets_error_and_nothing_configured(topo: MastTopology) -> None:
    ca = LabCa.load(topo.pki_dir)
    files = ca.issue("stub1")
    before, links = router_tunnels(topo, "a"), kernel_links(topo, "a")
    reply = asyncio.run(_raw_request(topo, files, "2001:db8:a:99::/64", PLANS["b"].stub_endpoint))
    assert reply["type"] is MessageType.ERROR and reply["code"] == ErrorCode.PREFIX_NOT_DELEGATED
    reply = asyncio.run(_raw_request(topo, files, PLANS["a"].stub_prefix, "2001:db8:c::1"))
    assert reply["code"] == ErrorCode.ENDPOINT_NOT_AUTHORIZED
    mallory = ca.issue("mallory")
    reply = asyncio.run(
        _raw_request(topo, mallory, PLANS["a"].stub_prefix, PLANS["b"].stub_endpoint)
    )
    assert reply["code"] == ErrorCode.UNKNOWN_CUSTOMER
    assert router_tunnels(topo, "a") == before and kernel_links(topo, "a") == links


def test_untrusted_certificate_refused_and_nothing_configured(
    topo: MastTopology, tmp_path: Any
) -> None:
    rogue = LabCa.create(tmp_path / "rogue", "rogue-ca")
    files = rogue.issue("stub1", trust=topo.pki_dir / "itmp-test-ca.ca.pem")
    before, links = router_tunnels(topo, "a"), kernel_links(topo, "a")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        asyncio.run(_raw_request(topo, files, PLANS["a"].stub_prefix, PLANS["b"].stub_endpoint))
    assert "session.up" not in topo.tms["a"].process.log().split("stub_id=test")[-1]
    assert router_tunnels(topo, "a") == before and kernel_links(topo, "a") == links


def test_failed_router_commit_rolls_back_and_stub_gets_error(topo: MastTopology) -> None:
    ca = LabCa.load(topo.pki_dir)
    files = ca.issue("stub1")
    inc = topo.nodes["a"].lab.workdir / "a.itmp.d"
    broken = inc / "zz-operator-typo.conf"
    broken.write_text("protocol bgp {{{ this is not BIRD\n")
    before, links = router_tunnels(topo, "a"), kernel_links(topo, "a")
    try:
        # A new endpoint means a new tunnel; BIRD refuses the configuration, so the commit fails.
        reply = asyncio.run(_raw_request(topo, files, PLANS["a"].stub_prefix, "2001:db8:b:1::77"))
    finally:
        broken.unlink()
    assert reply["type"] is MessageType.ERROR and reply["code"] == ErrorCode.PROVISIONING_FAILED
    assert "rolled back" in reply["reason"]
    assert router_tunnels(topo, "a") == before and kernel_links(topo, "a") == links


def test_tms_kill9_mid_provisioning_then_restart_reconciles(topo: MastTopology) -> None:
    ca = LabCa.load(topo.pki_dir)
    files = ca.issue("stub1")
    tms = topo.tms["a"]

    async def session(i: int, first_offer: asyncio.Event) -> None:
        sock = await asyncio.to_thread(socket_in_netns, topo.nodes["a"], "::1", 4700)
        reader, writer = await asyncio.open_connection(
            sock=sock, ssl=client_context(files), server_hostname="tms.a.example"
        )
        ch = Channel(reader, writer)
        try:
            await ch.send(MessageType.HELLO, hello_body("stub", f"flood{i}", ["vxlan"], 10))
            await ch.expect(10, MessageType.HELLO)
            await ch.send(
                MessageType.TUNNEL_REQUEST,
                {"request_id": i, "prefix": PLANS["a"].stub_prefix, "stub_endpoint": f"2001:db8:b:1::{i + 0x100:x}",
                 "stub_as": 64512, "encapsulations": ["vxlan"]},
            )  # fmt: skip
            await ch.expect(30, MessageType.TUNNEL_OFFER)
            first_offer.set()
        except (OSError, PeerClosed, ssl.SSLError):
            pass  # the TMS was killed under this session
        finally:
            await ch.close()

    async def flood() -> None:
        # Twelve stubs at once: the first offer comes back while the rest are being committed.
        first_offer = asyncio.Event()
        tasks = [asyncio.create_task(session(i, first_offer)) for i in range(12)]
        await asyncio.wait_for(first_offer.wait(), 30)
        tms.process.stop(sig=9)
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(flood())
    assert not tms.process.alive()
    db = sqlite3.connect(str(tms.state_dir / "tms.sqlite"))
    states = [state for (state,) in db.execute("SELECT state FROM tunnel")]
    db.close()
    print(
        f"after kill -9: {states.count('provisioning')} rows mid-provisioning, {len(states)} rows"
    )
    topo.tms["a"] = tms = tms.restart()
    log = tms.process.log()
    assert "tms.reconciled" in log
    db = sqlite3.connect(str(tms.state_dir / "tms.sqlite"))
    rows = {f"itmp{idx}": state for idx, state in db.execute("SELECT idx, state FROM tunnel")}
    db.close()
    assert "provisioning" not in rows.values()
    # The router holds exactly the intended tunnels: the table's rows (incl. the stub's A-0).
    on_router = {n for n in router_tunnels(topo, "a") if n.startswith("itmp")}
    assert on_router == set(rows), (on_router, rows)
    assert "itmp0" in on_router
    assert {n for n in kernel_links(topo, "a") if n.startswith("itmp")} == set(rows)


def test_stub_daemon_tears_down_on_config_change(topo: MastTopology) -> None:
    """`itmp stub` as a daemon: a changed endpoint replaces the tunnel (TEARDOWN of the old one)."""
    s = topo.nodes["s"]
    s.ip("-6", "addr", "add", "2001:db8:b:1::2/128", "dev", "lo")
    changed = topo.stub_config.with_name("s.itmp-stub-changed.toml")
    changed.write_text(
        topo.stub_config.read_text().replace(
            'endpoint = "2001:db8:b:1::1"', 'endpoint = "2001:db8:b:1::2"'
        )
    )
    proc = s.spawn(
        [sys.executable, "-m", "itmp", "stub", "-c", str(changed), "--log-format", "logfmt"],
        label="itmp-stub",
    )
    try:
        wait_for(
            lambda: proc.log().count("tunnel.up") >= 2,
            timeout=60,
            what="both tunnels up in daemon mode",
        )
        log = proc.log()
        assert "tunnel.torn_down path=A/B" in log
        assert "tunnel.torn_down" in topo.tms["a"].process.log()
        with topo.agents["s"].session() as sess:
            running = sess.running()
        assert str(running.tunnels["itmp0"].local) == "2001:db8:b:1::2"
        db = sqlite3.connect(str(topo.tms["a"].state_dir / "tms.sqlite"))
        endpoints = {
            e for (e,) in db.execute("SELECT stub_endpoint FROM tunnel WHERE state = 'active'")
        }
        db.close()
        assert "2001:db8:b:1::2" in endpoints and "2001:db8:b:1::1" not in endpoints
        # Keepalives flow while the daemon runs; the session stays up.
        time.sleep(1)
        assert proc.alive(), proc.log()
    finally:
        proc.stop()
