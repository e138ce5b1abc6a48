"""Verify pushes: authentic (HMAC-SHA256 with the learned key) and fresh (counter rule)."""

from __future__ import annotations

import hmac
from collections import Counter
from dataclasses import dataclass, field

from mast_client.wire import (
    DEFAULT_MSG_TYPE,
    ForgedPush,
    KeyInfo,
    Push,
    PushError,
    ReplayedPush,
    UnauthenticatedPush,
    compute_mac,
    parse_push,
)


@dataclass
class PushVerifier:
    """Holds the key and the highest counter seen; `accept` returns a verified Push or raises.

    Replay rule (PUSH.md): a push is fresh only if its counter is strictly greater than both the
    counter of the last accepted push and the counter floor learned with the key.
    """

    key: bytes | None = None
    last_counter: int = 0
    msg_type: int = DEFAULT_MSG_TYPE
    rejected: Counter[str] = field(default_factory=Counter)
    accepted: int = 0

    def learn(self, info: KeyInfo) -> bool:
        """Adopt the key from a Reply; returns True when it changed."""
        changed = info.key != self.key
        if changed:
            self.key = info.key
            # A new key starts a new counter sequence, known to be past info.counter.
            self.last_counter = info.counter
        else:
            self.last_counter = max(self.last_counter, info.counter)
        self.msg_type = info.msg_type
        return changed

    def check(self, data: bytes) -> Push:
        push = parse_push(data, msg_type=self.msg_type)
        if self.key is None:
            raise UnauthenticatedPush("no key learned yet")
        expected = compute_mac(data, push.auth_offset, self.key)
        if not hmac.compare_digest(expected, push.mac):
            raise ForgedPush(f"MAC mismatch (counter {push.counter})")
        if push.counter <= self.last_counter:
            raise ReplayedPush(f"counter {push.counter} not above {self.last_counter}")
        return push

    def accept(self, data: bytes) -> Push:
        try:
            push = self.check(data)
        except PushError as exc:
            self.rejected[exc.reason] += 1
            raise
        self.last_counter = push.counter
        self.accepted += 1
        return push
