"""BIRD protocol state over BIRD's control socket: the BGP session on the access link.

SRMS polls `show protocols` (BIRD 2 has no push of protocol state to control clients). The reply
is BIRD's numbered-line format: `1002-name proto table state since info`, continuation lines
start with a space, and `0000` ends a reply.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from mast_common.log import get_logger

from srms.config import Bird, Provider
from srms.events import Emit
from srms.statemachine import LinkEvent

log = get_logger(__name__)


class BirdError(Exception):
    pass


@dataclass(frozen=True)
class ProtocolState:
    name: str
    proto: str
    state: str  # up, down, start, ...
    info: str  # BGP: Established, Idle, Connect, Active, ...

    @property
    def up(self) -> bool:
        if self.proto.upper() == "BGP":
            return self.state == "up" and self.info.startswith("Established")
        return self.state == "up"


def parse_show_protocols(text: str) -> dict[str, ProtocolState]:
    """Parse the lines of a `show protocols` reply (with or without BIRD's numeric codes)."""
    out: dict[str, ProtocolState] = {}
    for raw in text.splitlines():
        line = raw
        if len(line) >= 5 and line[:4].isdigit() and line[4] in "- ":
            code, line = line[:4], line[5:]
            if code != "1002":
                continue
        elif line.startswith(" "):
            line = line[1:]
        fields = line.split(None, 5)
        if len(fields) < 4 or fields[0] == "Name":
            continue
        name, proto, _table, state = fields[:4]
        # `since` is one or two words (date, or date and time); info is whatever follows.
        rest = fields[4:] if len(fields) > 4 else []
        tail = " ".join(rest)
        info = ""
        if tail:
            words = tail.split()
            # Skip since: a date (2026-01-01) and optionally a time (12:00:00.123).
            i = 0
            while (
                i < len(words)
                and any(c.isdigit() for c in words[i])
                and ("-" in words[i] or ":" in words[i])
            ):
                i += 1
            info = " ".join(words[i:])
        out[name] = ProtocolState(name, proto, state, info)
    return out


async def bird_command(socket: Path, command: str, timeout: float = 2.0) -> str:
    async def talk() -> str:
        reader, writer = await asyncio.open_unix_connection(str(socket))
        try:
            await reader.readline()  # greeting: 0001 BIRD x.y.z ready.
            writer.write(command.encode() + b"\n")
            await writer.drain()
            lines: list[str] = []
            while True:
                raw = await reader.readline()
                if not raw:
                    raise BirdError("BIRD closed the control socket mid-reply")
                line = raw.decode("utf-8", "replace").rstrip("\n")
                lines.append(line)
                if len(line) >= 5 and line[:4].isdigit() and line[4] == " ":
                    if line.startswith(("8", "9")):
                        raise BirdError(f"BIRD: {line[5:]}")
                    if line[:4] == "0000" or line[:1] != "1":
                        return "\n".join(lines)
        finally:
            writer.close()

    return await asyncio.wait_for(talk(), timeout)


class BirdSource:
    name = "bird"

    def __init__(self, cfg: Bird, providers: list[Provider]) -> None:
        self.cfg = cfg
        self.by_protocol = {
            p.access.bird_protocol: p.name for p in providers if p.access.bird_protocol
        }
        self.state: dict[str, bool] = {}
        self.ready = asyncio.Event()

    def observe(self, emit: Emit, protocols: dict[str, ProtocolState], received: float) -> None:
        for proto, provider in self.by_protocol.items():
            st = protocols.get(proto)
            up = st.up if st is not None else False
            if self.state.get(proto) == up:
                continue
            self.state[proto] = up
            detail = f"{proto} {st.state} {st.info}" if st else f"{proto} not configured in BIRD"
            emit(LinkEvent(provider, up, "bird", detail, received))

    async def run(self, emit: Emit) -> None:
        log.info("bird.polling", socket=str(self.cfg.socket), protocols=sorted(self.by_protocol))
        failing = False
        while True:
            try:
                text = await bird_command(self.cfg.socket, "show protocols")
                self.observe(emit, parse_show_protocols(text), time.time())
                failing = False
                self.ready.set()
            except (OSError, BirdError, TimeoutError) as exc:
                # BIRD down says nothing about the link: keep the last known state.
                if not failing:
                    log.warning("bird.unreachable", socket=str(self.cfg.socket), error=str(exc))
                failing = True
            await asyncio.sleep(self.cfg.poll_interval)
