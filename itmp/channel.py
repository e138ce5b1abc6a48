"""An ITMP connection: TLS 1.3 with mutual certificates, framed messages, bounded waits."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itmp.protocol import (
    VERSION,
    ErrorCode,
    FrameDecoder,
    Message,
    MessageType,
    ProtocolError,
    encode,
    error_body,
)


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path
    ca: Path  # the CA whose certificates the peer must present


def server_context(files: TlsFiles) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_cert_chain(files.cert, files.key)
    ctx.load_verify_locations(files.ca)
    return ctx


def client_context(files: TlsFiles) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(files.cert, files.key)
    ctx.load_verify_locations(files.ca)
    ctx.check_hostname = True
    return ctx


def peer_name(writer: asyncio.StreamWriter) -> str:
    """The common name of the peer's (already verified) certificate."""
    cert: Any = writer.get_extra_info("peercert") or {}
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return ""


class PeerClosed(ConnectionError):
    """The peer closed the connection."""


class PeerError(Exception):
    """The peer sent ERROR."""

    def __init__(self, msg: Message) -> None:
        self.code = int(msg.body.get("code", 0))
        self.reason = str(msg.body.get("reason", ""))
        self.message = msg
        try:
            name = ErrorCode(self.code).name
        except ValueError:
            name = f"code {self.code}"
        super().__init__(f"{name}: {self.reason}")


class Channel:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder()
        self.pending: deque[Message] = deque()
        self.peer = peer_name(writer)

    async def send(self, mtype: MessageType, body: dict[str, Any] | None = None) -> None:
        self.writer.write(encode(mtype, body))
        await self.writer.drain()

    async def send_error(self, code: ErrorCode, reason: str, **extra: Any) -> None:
        # The peer may be gone; the caller logs the error either way.
        with contextlib.suppress(ConnectionError, OSError):
            await self.send(MessageType.ERROR, error_body(code, reason, **extra))

    async def recv(self, timeout: float) -> Message:
        """The next message; ProtocolError for garbage, PeerClosed at EOF, TimeoutError."""
        async with asyncio.timeout(timeout):
            while not self.pending:
                data = await self.reader.read(65536)
                if not data:
                    raise PeerClosed("peer closed the connection")
                self.pending.extend(self.decoder.feed(data))
        return self.pending.popleft()

    async def expect(self, timeout: float, *types: MessageType) -> Message:
        msg = await self.recv(timeout)
        if msg.type is MessageType.ERROR:
            raise PeerError(msg)
        if msg.type not in types:
            raise ProtocolError(
                ErrorCode.UNEXPECTED_MESSAGE,
                f"expected {'/'.join(t.name for t in types)}, got {msg.type.name}",
            )
        return msg

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(TimeoutError, ConnectionError, OSError, ssl.SSLError):
            await asyncio.wait_for(self.writer.wait_closed(), 2)


def hello_body(role: str, ident: str, encaps: list[str], keepalive: int) -> dict[str, Any]:
    return {
        "role": role,
        "id": ident,
        "versions": [VERSION],
        "encapsulations": encaps,
        "auth": ["tls13-mutual"],
        "keepalive": keepalive,
    }


def check_hello(msg: Message, expected_role: str) -> None:
    if msg.body["role"] != expected_role:
        raise ProtocolError(
            ErrorCode.UNEXPECTED_MESSAGE,
            f"HELLO role {msg.body['role']!r}, expected {expected_role!r}",
        )
    if VERSION not in msg.body["versions"]:
        raise ProtocolError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"peer speaks versions {msg.body['versions']}, this side {VERSION}",
        )
