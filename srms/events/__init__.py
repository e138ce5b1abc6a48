"""Event sources: one module per way SRMS learns that an access link went down or up.

Each source is an `EventSource`: `run(emit)` runs until cancelled and calls `emit` with a
`LinkEvent` naming the provider whose access link changed. Sources never raise on bad input from
the network: they log it, count it and go on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from srms.statemachine import LinkEvent

Emit = Callable[[LinkEvent], None]


class EventSource(Protocol):
    @property
    def name(self) -> str: ...

    async def run(self, emit: Emit) -> None: ...
