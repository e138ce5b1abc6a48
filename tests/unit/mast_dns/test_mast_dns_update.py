"""ZoneUpdater's error handling against a scripted UDP responder on loopback (retry policy only;
the real Knot behaviour is in tests/integration/dns_plugins)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import dns.message
import dns.rcode
import pytest
from mast_common.prefix import PrefixStatus
from mast_dns.update import DnsUpdateError, TsigKey, ZoneUpdater


class Responder:
    """Answers each query with the next rcode of `script` (None: stay silent)."""

    def __init__(self, script: list[int | None]) -> None:
        self.script = list(script)
        self.seen = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stopped.is_set():
            try:
                data, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            query = dns.message.from_wire(data)
            self.seen += 1
            rcode = self.script.pop(0) if self.script else dns.rcode.NOERROR
            if rcode is None:
                continue
            reply = dns.message.make_response(query)
            reply.set_rcode(rcode)
            self.sock.sendto(reply.to_wire(), peer)

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(2)
        self.sock.close()


@pytest.fixture
def responder(request: pytest.FixtureRequest) -> Iterator[Responder]:
    r = Responder(request.param)
    yield r
    r.close()


def updater(r: Responder, retries: int = 3) -> ZoneUpdater:
    return ZoneUpdater("127.0.0.1", "lab.mast.", None, port=r.port, timeout=0.3, retries=retries)


@pytest.mark.parametrize(
    "responder", [[dns.rcode.SERVFAIL, None, dns.rcode.NOERROR]], indirect=True
)
def test_servfail_and_timeouts_are_retried(responder: Responder) -> None:
    updater(responder).add_host_address("h1", "2001:db8::1")
    assert responder.seen == 3


@pytest.mark.parametrize(
    ("responder", "rcode"),
    [
        ([dns.rcode.REFUSED], "REFUSED"),
        ([dns.rcode.NOTAUTH], "NOTAUTH"),
        ([dns.rcode.NOTZONE], "NOTZONE"),
    ],
    indirect=["responder"],
)
def test_refusals_are_not_retried_and_say_what_failed(responder: Responder, rcode: str) -> None:
    with pytest.raises(DnsUpdateError) as err:
        updater(responder).remove_host_address("h1", "2001:db8::1")
    assert err.value.rcode == rcode
    assert "remove h1.lab.mast. AAAA 2001:db8::1" in str(err.value) and rcode in str(err.value)
    assert responder.seen == 1


@pytest.mark.parametrize("responder", [[dns.rcode.SERVFAIL] * 5], indirect=True)
def test_persistent_servfail_ends_in_a_clear_error(responder: Responder) -> None:
    with pytest.raises(DnsUpdateError) as err:
        updater(responder, retries=2).set_prefix_status("2001:db8:a::/64", PrefixStatus.DISCOURAGED)
    assert err.value.rcode == "SERVFAIL" and "3 attempts" in str(err.value)
    assert responder.seen == 3


def test_tsig_key_is_checked_up_front() -> None:
    with pytest.raises(ValueError, match="not base64"):
        TsigKey("k.", "not base64!")
    with pytest.raises(ValueError, match="algorithm"):
        TsigKey("k.", "c2VjcmV0", "hmac-sha3")
    assert TsigKey("k.", "c2VjcmV0", "HMAC-SHA512").dns_key().name.to_text() == "k."


def test_bad_prefixes_fail_before_anything_is_sent() -> None:
    u = ZoneUpdater("127.0.0.1", "lab.mast.", None, port=9, timeout=0.1, retries=0)
    with pytest.raises(ValueError, match="longer than /64"):
        u.set_prefix_status("2001:db8::/96", PrefixStatus.PREFERRED)
    with pytest.raises(ValueError, match="withdrawn"):
        u.add_prefix("2001:db8::/64", status=PrefixStatus.WITHDRAWN)
