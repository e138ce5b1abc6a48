"""The control socket: `srms status|discourage|restore|renumber` talk to the running daemon.

One JSON object per line each way over a unix stream socket: {"command": ..., ...} in,
{"ok": true, ...} or {"ok": false, "error": "..."} out.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mast_common.log import get_logger

log = get_logger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
MAX_REQUEST = 65536


class ControlError(Exception):
    pass


async def serve(path: Path, handler: Handler) -> asyncio.AbstractServer:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), timeout=10)
            try:
                request = json.loads(line[:MAX_REQUEST])
                if not isinstance(request, dict):
                    raise ValueError("request must be a JSON object")
                answer = await handler(request)
            except (ValueError, KeyError, TypeError) as exc:
                answer = {"ok": False, "error": f"bad request: {exc}"}
            writer.write(json.dumps(answer, default=str).encode() + b"\n")
            await writer.drain()
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_unix_server(client, path=str(path))
    # Operators in the srms group may use the CLI; nobody else.
    os.chmod(path, 0o660)
    return server


def request(path: Path, command: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
    """Send one command to the daemon (blocking: the CLI's side)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError as exc:
            raise ControlError(f"srms is not running ({path}: {exc.strerror})") from None
        sock.sendall(json.dumps(command).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
    try:
        answer = json.loads(buf)
    except ValueError:
        raise ControlError(f"unreadable answer from srms: {buf[:200]!r}") from None
    if not isinstance(answer, dict):
        raise ControlError(f"unreadable answer from srms: {answer!r}")
    return answer
