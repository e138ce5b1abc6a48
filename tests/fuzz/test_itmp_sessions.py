"""Hostile bytes at a live TMS (over TLS 1.3) and at the stub's session reader: neither side dies.

The TMS runs in-process against a dry-run router agent; after every fuzz case it must still
complete a valid exchange, and the stub's Channel must turn any byte stream into messages,
ProtocolError or PeerClosed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itmp.authorization import Customer
from itmp.channel import Channel, PeerClosed, TlsFiles, client_context, hello_body
from itmp.pki import LabCa
from itmp.protocol import MAGIC, VERSION, FrameDecoder, MessageType, ProtocolError, encode
from itmp.tms import RouterSettings, Tms, TmsConfig

pytestmark = pytest.mark.fuzz


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def live_tms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, TlsFiles]]:
    work = tmp_path_factory.mktemp("itmp-fuzz")
    port = free_port()
    (work / "agent.toml").write_text(
        textwrap.dedent(
            f"""\
            state_dir = "{work / "agent"}"
            listen = "127.0.0.1"
            port = {port}
            backend = "dry-run"
            [[users]]
            name = "u"
            password = "p"
            """
        )
    )
    log = open(work / "agent.log", "wb")  # noqa: SIM115
    agent = subprocess.Popen([sys.executable, "-m", "itmp", "router-agent", "-c", str(work / "agent.toml")],
                             stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        yield from _serve(work, port, agent)
    finally:
        agent.terminate()
        agent.wait(10)
        log.close()


def _serve(work: Path, port: int, agent: subprocess.Popen[bytes]) -> Iterator[tuple[int, TlsFiles]]:
    deadline = time.monotonic() + 30
    while "router_agent.ready" not in (work / "agent.log").read_text():
        assert agent.poll() is None and time.monotonic() < deadline, (
            work / "agent.log"
        ).read_text()
        time.sleep(0.1)
    ca = LabCa.create(work / "pki")
    server = ca.issue("tms.a.example", server_names=["tms.a.example"])
    client = ca.issue("stub1")
    cfg = TmsConfig(
        name="A",
        asn=65001,
        state_dir=work / "tms",
        tls=server,
        router=RouterSettings("127.0.0.1", port, "u", "p"),
        endpoint=ipaddress.IPv6Address("2001:db8:a::1"),
        tunnel_pool=ipaddress.IPv6Network("fd00:a::/48"),
        customers=[
            Customer(
                "stub1",
                64512,
                [ipaddress.IPv6Network("2001:db8:a:1::/64")],
                [ipaddress.IPv6Network("2001:db8:b:1::/64")],
            )
        ],
        listen="127.0.0.1",
        port=0,
    )
    loop = asyncio.new_event_loop()
    holder: list[Tms] = []
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        holder.append(Tms(cfg))  # its SQLite connection belongs to this thread
        loop.run_until_complete(holder[0].start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(60)
    try:
        yield holder[0].port, client
    finally:
        asyncio.run_coroutine_threadsafe(holder[0].stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def tls_socket(port: int, files: TlsFiles) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    return client_context(files).wrap_socket(raw, server_hostname="tms.a.example")


def exchange_ok(port: int, files: TlsFiles) -> bool:
    async def go() -> bool:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_context(files), server_hostname="tms.a.example"
        )
        ch = Channel(reader, writer)
        try:
            await ch.send(MessageType.HELLO, hello_body("stub", "s", ["vxlan"], 10))
            await ch.expect(10, MessageType.HELLO)
            await ch.send(MessageType.KEEPALIVE)
            return (await ch.expect(10, MessageType.KEEPALIVE)).type is MessageType.KEEPALIVE
        finally:
            await ch.close()

    return asyncio.run(go())


frames = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda t, body: MAGIC + bytes([VERSION, t]) + len(body).to_bytes(4, "big") + body,
        st.integers(0, 9),
        st.binary(max_size=120)
        | st.sampled_from([b"{}", b"[]", b'{"role":1}', b'{"tunnel_id":"x"}', b"nul\x00"]),
    ),
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.booleans(), st.lists(frames, min_size=1, max_size=4))
def test_tms_survives_hostile_sessions(
    live_tms: tuple[int, TlsFiles], hello_first: bool, junk: list[bytes]
) -> None:
    port, files = live_tms
    with contextlib.closing(tls_socket(port, files)) as s:
        if hello_first:
            s.sendall(encode(MessageType.HELLO, hello_body("stub", "f", ["vxlan"], 10)))
        with contextlib.suppress(OSError):
            for j in junk:
                s.sendall(j)
            s.settimeout(0.3)
            with contextlib.suppress(TimeoutError, OSError):
                while s.recv(4096):
                    pass


def test_tms_still_serves_after_fuzz(live_tms: tuple[int, TlsFiles]) -> None:
    port, files = live_tms
    assert exchange_ok(port, files)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(frames, max_size=5))
def test_stub_channel_reader(chunks: list[bytes]) -> None:
    async def go() -> None:
        reader = asyncio.StreamReader()
        for c in chunks:
            reader.feed_data(c)
        reader.feed_eof()
        # Only the reading half of a Channel is exercised: no writer, no TLS.
        ch = Channel.__new__(Channel)
        ch.reader, ch.decoder, ch.pending = reader, FrameDecoder(), deque()
        with contextlib.suppress(ProtocolError, PeerClosed, TimeoutError):
            for _ in range(20):
                await ch.recv(1)

    asyncio.run(go())
