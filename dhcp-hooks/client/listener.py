"""Listen on one interface for DHCPv6 traffic to port 546: learn the push key from Replies,
verify pushes, apply them. A packet socket (AF_PACKET) sees every datagram to port 546 even
though the host's DHCPv6 client holds that port."""

from __future__ import annotations

import ctypes
import json
import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from mast_client.verifier import PushVerifier
from mast_client.wire import (
    DEFAULT_ENTERPRISE_ID,
    MSG_REPLY,
    PrefixEntry,
    Push,
    PushError,
    find_key_info,
)
from mast_common.log import get_logger
from prometheus_client import CollectorRegistry, Counter, Gauge

log = get_logger(__name__)

ETH_P_IPV6 = 0x86DD
PACKET_OUTGOING = 4
CLIENT_PORT = 546
SERVER_PORT = 547
ALL_SERVERS = "ff02::1:2"


class Applier(Protocol):
    def apply(self, entry: PrefixEntry) -> object: ...


SO_ATTACH_FILTER = 26


def attach_port_filter(sock: socket.socket, port: int) -> None:
    """Classic BPF in the kernel: only UDP to `port` reaches us, not every IPv6 packet of a
    busy host. Offsets are from the IPv6 header (SOCK_DGRAM packet socket)."""
    program = [
        (0x30, 0, 0, 6),  # ldb [6]          next header
        (0x15, 0, 3, 17),  # jeq #17         UDP, else drop
        (0x28, 0, 0, 42),  # ldh [42]        UDP destination port
        (0x15, 0, 1, port),  # jeq #port     else drop
        (0x06, 0, 0, 0xFFFF),  # ret #65535  accept
        (0x06, 0, 0, 0),  # ret #0           drop
    ]
    code = b"".join(struct.pack("HBBI", *insn) for insn in program)
    buf = ctypes.create_string_buffer(code)
    fprog = struct.pack("HL", len(program), ctypes.addressof(buf))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


def udp_payload_to_port(packet: bytes, port: int) -> bytes | None:
    """The UDP payload of an IPv6 packet sent to `port`, or None (no extension headers)."""
    if len(packet) < 48 or packet[0] >> 4 != 6 or packet[6] != 17:
        return None
    _, dport, length, _ = struct.unpack_from("!HHHH", packet, 40)
    if dport != port or length < 8:
        return None
    return packet[48 : 40 + length]


class PushListener:
    def __init__(
        self,
        interface: str,
        applier: Applier,
        *,
        verifier: PushVerifier | None = None,
        enterprise_id: int = DEFAULT_ENTERPRISE_ID,
        stats_file: Path | None = None,
        registry: CollectorRegistry | None = None,
        on_push: Callable[[Push], None] | None = None,
    ) -> None:
        self.interface = interface
        self.applier = applier
        self.verifier = verifier or PushVerifier()
        self.enterprise_id = enterprise_id
        self.stats_file = stats_file
        self.on_push = on_push
        self.registry = registry or CollectorRegistry()
        self.m_accepted = Counter(
            "mast_client_pushes_accepted", "Pushes verified and applied", registry=self.registry
        )
        self.m_rejected = Counter(
            "mast_client_pushes_rejected",
            "Pushes dropped, by reason",
            ["reason"],
            registry=self.registry,
        )
        self.m_counter = Gauge(
            "mast_client_push_counter", "Replay counter of the last accepted push",
            registry=self.registry,
        )
        self.key_learned_at: float | None = None
        self._stop = threading.Event()
        self._sock: socket.socket | None = None

    # --- packet handling (no sockets: unit tests and benchmarks call this directly) ---
    def handle_dhcp(self, payload: bytes) -> str:
        """Handle one DHCPv6 message to port 546; returns what happened (for logs and tests)."""
        if not payload:
            return "ignored"
        if payload[0] == MSG_REPLY:
            info = find_key_info(payload, enterprise_id=self.enterprise_id)
            if info is None:
                return "ignored"
            if self.verifier.learn(info):
                self.key_learned_at = time.time()
                log.info("key.learned", interface=self.interface, counter=info.counter)
                self._write_stats()
            return "key"
        if payload[0] != self.verifier.msg_type:
            return "ignored"
        try:
            push = self.verifier.accept(payload)
        except PushError as exc:
            self.m_rejected.labels(exc.reason).inc()
            log.warning("push.rejected", interface=self.interface, reason=exc.reason, detail=str(exc))
            self._write_stats()
            return exc.reason
        self.m_accepted.inc()
        self.m_counter.set(push.counter)
        for entry in push.entries:
            log.info(
                "push.accepted",
                interface=self.interface,
                prefix=str(entry.prefix),
                status=str(entry.status),
                counter=push.counter,
            )
            self.applier.apply(entry)
        if self.on_push:
            self.on_push(push)
        self._write_stats()
        return "accepted"

    def stats(self) -> dict[str, object]:
        return {
            "interface": self.interface,
            "key_learned": self.verifier.key is not None,
            "accepted": self.verifier.accepted,
            "rejected": dict(self.verifier.rejected),
            "last_counter": self.verifier.last_counter,
        }

    def _write_stats(self) -> None:
        if self.stats_file is None:
            return
        tmp = self.stats_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.stats()))
        os.replace(tmp, self.stats_file)

    # --- the socket loop ---
    def open(self) -> None:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IPV6))
        attach_port_filter(sock, CLIENT_PORT)
        sock.bind((self.interface, ETH_P_IPV6))
        sock.settimeout(0.5)
        self._sock = sock
        self._write_stats()

    def request_key(self) -> None:
        """Ask the servers for a Reply (Information-Request): it carries the key option."""
        duid = b"\x00\x04" + os.urandom(16)  # DUID-UUID: this listener is not a lease holder
        msg = b"\x0b" + os.urandom(3) + struct.pack("!HH", 1, len(duid)) + duid
        msg += struct.pack("!HHH", 8, 2, 0)  # elapsed time
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            ifindex = socket.if_nametoindex(self.interface)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
            s.sendto(msg, (ALL_SERVERS, SERVER_PORT, 0, ifindex))

    def run(self, *, ask_key_every: float = 0.0) -> None:
        if self._sock is None:
            self.open()
        assert self._sock is not None
        next_ask = 0.0
        while not self._stop.is_set():
            if ask_key_every and self.verifier.key is None and time.monotonic() >= next_ask:
                try:
                    self.request_key()
                except OSError as exc:
                    log.warning("key.request_failed", interface=self.interface, error=str(exc))
                next_ask = time.monotonic() + ask_key_every
            try:
                packet, addr = self._sock.recvfrom(65535)
            except TimeoutError:
                continue
            except OSError as exc:
                if self._stop.is_set():
                    break
                raise exc
            if len(addr) >= 3 and addr[2] == PACKET_OUTGOING:
                continue
            payload = udp_payload_to_port(packet, CLIENT_PORT)
            if payload is None:
                continue
            try:
                self.handle_dhcp(payload)
            except OSError as exc:  # netlink refused a change: log, keep listening
                log.error("push.apply_failed", interface=self.interface, error=str(exc))

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self.stop()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
