"""ITMP provisioning throughput: one TMS provisioning 2,589 backup tunnels (the largest
per-provider stub count in the Dec 2012 RIB) against an `itmp router-agent` over NETCONF/SSH.

Every tunnel is a real ITMP exchange from its own customer over TLS 1.3 with mutual certificates
(HELLO, TUNNEL-REQUEST, authorization, negotiation, NETCONF candidate edit + confirmed commit +
confirm on the gateway router, TUNNEL-OFFER, TUNNEL-CONFIRM). The router agent runs the
**dry-run backend** (nothing applied to a kernel or BIRD: 2,589 VXLAN links and BGP sessions are
not what is measured) and says so below. Printed: tunnels/s and total seconds against the 60 s
goal, and the ratio to the named peer — the same TMS committing one tunnel per NETCONF commit
(batch = 1) instead of batching what is queued (batch = 64).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

GOAL_S = 60.0
FULL = 2589


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_agent(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    cfg = workdir / "agent.toml"
    cfg.write_text(
        textwrap.dedent(
            f"""\
            state_dir = "{workdir / "agent-state"}"
            listen = "127.0.0.1"
            port = {port}
            backend = "dry-run"
            dry_run_encapsulations = ["vxlan"]
            [[users]]
            name = "bench"
            password = "bench"
            """
        )
    )
    log = open(workdir / "agent.log", "wb")  # noqa: SIM115 (lives as long as the process)
    proc = subprocess.Popen(
        [sys.executable, "-m", "itmp", "router-agent", "-c", str(cfg)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while "router_agent.ready" not in (workdir / "agent.log").read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                "router agent did not start:\n" + (workdir / "agent.log").read_text()
            )
        time.sleep(0.1)
    return proc, port


def customer_prefix(i: int) -> ipaddress.IPv6Network:
    return ipaddress.IPv6Network((int(ipaddress.IPv6Address("2001:db8:1::")) + (i << 64), 64))


def customer_endpoint(i: int) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(int(ipaddress.IPv6Address("2001:db8:2::1")) + (i << 64))


def customer_other_prefix(i: int) -> ipaddress.IPv6Network:
    return ipaddress.IPv6Network((int(customer_endpoint(i)) - 1, 64))


def tms_config(
    run_dir: Path,
    count: int,
    batch: int,
    agent_host: str,
    agent_port: int,
    server_tls: Any,
    listen: str,
    metrics_port: int | None,
) -> Path:
    customers = "".join(
        f'[[customers]]\nname = "stub{i}"\nasn = {64512 + (i % 1000)}\n'
        f'prefixes = ["{customer_prefix(i)}"]\nother_prefixes = ["{customer_other_prefix(i)}"]\n'
        for i in range(count)
    )
    cfg = run_dir / "tms.toml"
    metrics = f"metrics_port = {metrics_port}" if metrics_port is not None else ""
    cfg.write_text(
        textwrap.dedent(
            f"""\
            name = "A"
            asn = 65001
            state_dir = "{run_dir / "tms-state"}"
            listen = "{listen}"
            port = 0
            endpoint = "2001:db8:a::1"
            tunnel_pool = "fd00:a::/48"
            batch = {batch}
            offer_timeout = 600
            {metrics}
            [tls]
            cert = "{server_tls.cert}"
            key = "{server_tls.key}"
            ca = "{server_tls.ca}"
            [router]
            host = "{agent_host}"
            port = {agent_port}
            username = "bench"
            password = "bench"
            timeout = 120
            """
        )
        + customers
    )
    return cfg


def wait_tms_port(log_path: Path, alive: Any) -> int:
    deadline = time.monotonic() + 60
    while True:
        text = log_path.read_text() if log_path.exists() else ""
        m = re.search(r"tms\.ready .*port=(\d+)", text)
        if m:
            return int(m.group(1))
        if not alive() or time.monotonic() > deadline:
            raise RuntimeError("itmp tms did not start:\n" + text)
        time.sleep(0.1)


def start_tms(
    run_dir: Path, count: int, batch: int, agent_port: int, server_tls: Any
) -> tuple[subprocess.Popen[bytes], int, int]:
    metrics_port = free_port()
    cfg = tms_config(
        run_dir, count, batch, "127.0.0.1", agent_port, server_tls, "127.0.0.1", metrics_port
    )
    log_path = run_dir / "tms.log"
    log = open(log_path, "wb")  # noqa: SIM115 (lives as long as the process)
    proc = subprocess.Popen(
        [sys.executable, "-m", "itmp", "tms", "-c", str(cfg)], stdout=log, stderr=subprocess.STDOUT
    )
    return proc, wait_tms_port(log_path, lambda: proc.poll() is None), metrics_port


async def drive(count: int, contexts: list[ssl.SSLContext], connect: Any) -> tuple[float, int]:
    """`count` stubs, 64 at a time, each: TLS, HELLO, REQUEST, OFFER, CONFIRM. Returns (s, done)."""
    from itmp.channel import Channel, hello_body
    from itmp.protocol import MessageType

    sem = asyncio.Semaphore(64)
    done = 0

    async def stub(i: int) -> None:
        nonlocal done
        async with sem:
            reader, writer = await connect(contexts[i])
            ch = Channel(reader, writer)
            await ch.send(MessageType.HELLO, hello_body("stub", f"stub{i}", ["gre", "vxlan"], 30))
            await ch.expect(30, MessageType.HELLO)
            await ch.send(
                MessageType.TUNNEL_REQUEST,
                {"request_id": 1, "prefix": str(customer_prefix(i)), "stub_endpoint": str(customer_endpoint(i)),
                 "stub_as": 64512 + (i % 1000), "encapsulations": ["gre", "vxlan"]},
            )  # fmt: skip
            offer = await ch.expect(300, MessageType.TUNNEL_OFFER)
            await ch.send(MessageType.TUNNEL_CONFIRM, {"tunnel_id": offer.body["tunnel_id"]})
            await ch.expect(60, MessageType.TUNNEL_CONFIRM)
            await ch.close()
            done += 1

    t0 = time.monotonic()
    await asyncio.gather(*(stub(i) for i in range(count)))
    return time.monotonic() - t0, done


async def run_once(
    workdir: Path, count: int, batch: int, contexts: list[ssl.SSLContext], server_tls: Any
) -> dict[str, Any]:
    from itmp.routerclient import RouterEndpoint, RouterSession

    run_dir = workdir / f"run-{batch}-{count}"
    run_dir.mkdir()
    agent, agent_port = start_agent(run_dir)
    procs = [agent]
    try:
        tms, port, metrics_port = start_tms(run_dir, count, batch, agent_port, server_tls)
        procs.insert(0, tms)

        def connect(ctx: ssl.SSLContext) -> Any:
            return asyncio.open_connection(
                "127.0.0.1", port, ssl=ctx, server_hostname="tms.a.example"
            )

        elapsed, done = await drive(count, contexts, connect)
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
            metrics = resp.read().decode()
        m = re.search(r'itmp_tms_router_commits_total\{result="ok"\} (\S+)', metrics)
        commits = float(m.group(1)) if m else float("nan")

        def check() -> tuple[int, str]:
            with RouterSession(RouterEndpoint("127.0.0.1", agent_port, "bench", "bench", 120)) as s:
                return len(s.running().tunnels), s.backend()

        on_router, backend = await asyncio.to_thread(check)
        return {
            "elapsed": elapsed,
            "done": done,
            "on_router": on_router,
            "commits": commits,
            "backend": backend,
        }
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def run_kernel(
    workdir: Path, count: int, contexts: list[ssl.SSLContext], server_tls: Any
) -> dict[str, Any] | None:
    """The same exchange against the kernel backend: real VXLAN links and BIRD protocols in a namespace."""
    if os.geteuid() != 0 or not shutil.which("bird"):
        return None
    from mast_common.daemons import start_bird
    from mast_common.netns import Lab

    from itmp.labkit import bird_include_body, socket_in_netns, start_router_agent

    with Lab(workdir / "kernel-lab") as lab:
        gw = lab.node("gw")
        gw.ip("-6", "addr", "add", "2001:db8:a::1/128", "dev", "lo")
        inc = lab.workdir / "gw.itmp.d"
        bird = start_bird(gw, router_id="10.0.0.1", body=bird_include_body(inc))
        agent = start_router_agent(
            gw, bird=bird, include_dir=inc, username="bench", password="bench"
        )
        run_dir = lab.workdir / "tms"
        run_dir.mkdir()
        cfg = tms_config(run_dir, count, 64, "::1", agent.endpoint.port, server_tls, "::1", None)
        proc = gw.spawn([sys.executable, "-m", "itmp", "tms", "-c", str(cfg)], label="tms")
        port = wait_tms_port(proc.log_path, proc.alive)

        async def connect(ctx: ssl.SSLContext) -> Any:
            sock = await asyncio.to_thread(socket_in_netns, gw, "::1", port)
            return await asyncio.open_connection(
                sock=sock, ssl=ctx, server_hostname="tms.a.example"
            )

        elapsed, done = asyncio.run(drive(count, contexts, connect))
        links = len(gw.ip("-o", "link", "show", "type", "vxlan").splitlines())
        protocols = bird.birdc("show", "protocols").count(" BGP ")
        proc.stop()
    return {"elapsed": elapsed, "done": done, "links": links, "protocols": protocols}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_itmp", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="300 tunnels instead of 2,589")
    parser.add_argument("-n", "--tunnels", type=int, default=None)
    args = parser.parse_args(argv)
    count = args.tunnels or (300 if args.quick else FULL)
    peer_count = min(count, 200 if args.quick else 400)
    kernel_count = min(count, 50 if args.quick else 200)

    from cryptography.hazmat.primitives.asymmetric import ec

    from itmp.channel import client_context
    from itmp.pki import LabCa

    with tempfile.TemporaryDirectory(prefix="bench-itmp-") as tmp:
        workdir = Path(tmp)
        t0 = time.monotonic()
        ca = LabCa.create(workdir / "pki")
        server_tls = ca.issue("tms.a.example", server_names=["tms.a.example"])
        shared_key = ec.generate_private_key(ec.SECP256R1())
        certs = [ca.issue(f"stub{i}", key=shared_key) for i in range(count)]
        # Each stub is its own machine in reality: its TLS context is made before the clock runs.
        contexts = [client_context(c) for c in certs]
        print(f"setup: {count} customer certificates in {time.monotonic() - t0:.1f} s (not timed)")
        print(f"cpu: {os.cpu_count()} cores (shared)")
        batched = asyncio.run(run_once(workdir, count, 64, contexts, server_tls))
        peer = asyncio.run(run_once(workdir, peer_count, 1, contexts, server_tls))
        kernel = run_kernel(workdir, kernel_count, contexts, server_tls)

    ok = batched["done"] == count and batched["on_router"] == count
    rate = count / batched["elapsed"]
    peer_rate = peer_count / peer["elapsed"]
    note = "dry-run: NETCONF + datastores + persistence, nothing applied to kernel/BIRD"
    print(f"router agent backend: {batched['backend']} ({note})")
    print(
        f"itmp tms (batch 64): {count} tunnels in {batched['elapsed']:.1f} s = {rate:.0f} tunnels/s, "
        f"{int(batched['commits'])} NETCONF commits, {batched['on_router']} tunnels in router running"
    )
    print(
        f"peer: one commit per tunnel (batch 1): {peer_count} tunnels in {peer['elapsed']:.1f} s"
        f" = {peer_rate:.0f} tunnels/s, {int(peer['commits'])} commits"
    )
    print(f"ratio batched / per-tunnel commits: {rate / peer_rate:.2f}x tunnels/s")
    projected = FULL / rate
    verdict = "MET" if projected <= GOAL_S else "MISSED"
    what = "measured" if count == FULL else "projected from this run's rate"
    print(
        f"goal: {FULL} tunnels <= {GOAL_S:.0f} s; {what}: {projected:.1f} s"
        f" ({GOAL_S / projected:.2f}x of budget) -> {verdict}"
    )
    if kernel is None:
        print("kernel backend: skipped (needs root and bird2)")
    else:
        ok = ok and kernel["done"] == kernel_count and kernel["links"] == kernel_count
        print(
            f"kernel backend (real VXLAN links + BIRD protocols, batch 64): {kernel_count} tunnels in"
            f" {kernel['elapsed']:.1f} s = {kernel_count / kernel['elapsed']:.0f} tunnels/s;"
            f" {kernel['links']} vxlan links, {kernel['protocols']} BGP protocols in BIRD"
            f" (ratio to dry-run: {kernel_count / kernel['elapsed'] / rate:.2f}x)"
        )
    if not ok:
        print(
            f"FAILED: {batched['done']} exchanges done, {batched['on_router']} on the router, expected {count}"
        )
        return 1
    return 0 if projected <= GOAL_S else 1
