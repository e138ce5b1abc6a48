"""Malformed SNMP packets never stop SRMS's notification receiver.

The receiver (pysnmp engine + SRMS's varbind parser) runs on an asyncio loop in a thread; the
test throws random bytes and mutated valid notifications (SNMPv1/v2c/v3) at its UDP port, then
checks that a valid linkDown still gets through and that the malformed ones were counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mast_common.prefix import IPv6Network
from pyasn1.codec.ber import encoder
from pysnmp.proto import api

from srms.config import AccessLink, Provider, Snmp, SnmpUser
from srms.events.snmp import SnmpSource, parse_notification
from srms.metrics import SrmsMetrics
from srms.statemachine import LinkEvent

pytestmark = pytest.mark.fuzz

PROVIDER = Provider(
    "A", [IPv6Network("2001:db8:a::/48")], AccessLink(router="127.0.0.1", if_index=2)
)


def v2c_trap(kind: str = "1.3.6.1.6.3.1.1.5.3", community: str = "public") -> bytes:
    mod = api.PROTOCOL_MODULES[api.SNMP_VERSION_2C]
    pdu = mod.SNMPv2TrapPDU()
    mod.apiTrapPDU.set_defaults(pdu)
    varbinds = mod.apiPDU.get_varbinds(pdu)  # sysUpTime.0 and snmpTrapOID.0 defaults
    varbinds = [
        (varbinds[0][0], varbinds[0][1]),
        (mod.ObjectIdentifier("1.3.6.1.6.3.1.1.4.1.0"), mod.ObjectIdentifier(kind)),
        (mod.ObjectIdentifier("1.3.6.1.2.1.2.2.1.1.2"), mod.Integer(2)),
        (mod.ObjectIdentifier("1.3.6.1.2.1.2.2.1.8.2"), mod.Integer(2)),
        (mod.ObjectIdentifier("1.3.6.1.2.1.31.1.1.1.1.2"), mod.OctetString("acca")),
    ]
    mod.apiPDU.set_varbinds(pdu, varbinds)
    msg = mod.Message()
    mod.apiMessage.set_defaults(msg)
    mod.apiMessage.set_community(msg, community)
    mod.apiMessage.set_pdu(msg, pdu)
    return bytes(encoder.encode(msg))


class Receiver:
    def __init__(self) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cfg = Snmp(
            listen=[f"127.0.0.1:{self.port}"],
            communities=["public"],
            users=[SnmpUser("srms", "auth-key-123", "priv-key-123", engine_id="8000000001020304")],
        )
        self.events: list[LinkEvent] = []
        self.source = SnmpSource(cfg, [PROVIDER], SrmsMetrics())
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.source.ready.is_set():
            if time.monotonic() > deadline:
                raise TimeoutError("receiver did not start")
            time.sleep(0.01)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.task = self.loop.create_task(self.source.run(self.events.append))
        with contextlib.suppress(asyncio.CancelledError):
            self.loop.run_until_complete(self.task)

    def send(self, data: bytes) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(data, ("127.0.0.1", self.port))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(timeout=5)

    def alive_and_working(self) -> bool:
        before = len(self.events)
        self.send(v2c_trap())
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if len(self.events) > before:
                ev = self.events[-1]
                return ev.provider == "A" and not ev.up
            time.sleep(0.01)
        return False


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


VALID = v2c_trap()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from([VALID, v2c_trap("1.3.6.1.6.3.1.1.5.4", "x" * 40)])))
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["flip", "cut", "dup", "len"]))
        if op == "flip":
            data[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[i:]
            if not data:
                data = bytearray(b"\x30")
        elif op == "dup":
            data[i:i] = data[i : i + draw(st.integers(1, 16))]
        else:
            data[i] = 0x84  # long-form length: lengths up to 4 GB in a 500-byte datagram
    return bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(packet=st.one_of(st.binary(min_size=0, max_size=600), mutated()))
def test_garbage_never_stops_the_receiver(receiver: Receiver, packet: bytes) -> None:
    receiver.send(packet)


def test_receiver_still_works_and_counted_garbage(receiver: Receiver) -> None:
    for junk in (b"", b"\x30", b"\x30\x84\xff\xff\xff\xff", b"\xff" * 500):
        receiver.send(junk)
    assert receiver.alive_and_working()
    counts = receiver.source.drop_counts()
    assert counts["malformed"] > 0
    assert receiver.thread.is_alive()


def test_what_pyasn1_chokes_on_is_counted_not_raised_into_the_loop(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    # A context-specific constructed tag where the message SEQUENCE belongs makes pyasn1 raise
    # TypeError past pysnmp; asyncio would log a traceback per datagram.
    choke = b"\xa9" + VALID[1:]
    before = receiver.source.drop_counts()["malformed"]
    with caplog.at_level("WARNING"):
        for _ in range(20):
            receiver.send(choke)
        assert receiver.alive_and_working()
    assert receiver.source.drop_counts()["malformed"] >= before + 20
    assert not [r for r in caplog.records if r.name == "asyncio"]
    assert len([r for r in caplog.records if r.getMessage() == "snmp.undecodable"]) <= 1


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.lists(st.integers(-(2**70), 2**70), max_size=14),
                st.text(max_size=5),
                st.none(),
            ),
            st.one_of(
                st.integers(),
                st.binary(max_size=20),
                st.text(max_size=20),
                st.none(),
                st.lists(st.integers(0, 2**32), max_size=12),
            ),
        ),
        max_size=8,
    )
)
def test_varbind_parser_total(varbinds: list[tuple[object, object]]) -> None:
    note = parse_notification(varbinds)  # type: ignore[arg-type]
    if note is not None:
        assert note.if_index is None or 0 < note.if_index < 2**31
