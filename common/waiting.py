"""Bounded waiting: every wait in the toolkit has a timeout and says what it waited for."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    pass


class WaitAborted(Exception):
    """Raised by a probe when waiting longer cannot help (the daemon already exited)."""


def wait_for(
    probe: Callable[[], T | bool | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.05,
) -> T:
    """Call `probe` until it returns something truthy; raise WaitTimeout naming `what` otherwise.

    Exceptions raised by `probe` count as "not yet" (daemons refuse connections while starting);
    the last one is reported in the timeout message. `WaitAborted` ends the wait at once.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            result = probe()
            if result:
                return result  # type: ignore[return-value]
        except WaitAborted:
            raise
        except Exception as exc:
            last_error = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            raise WaitTimeout(f"timed out after {timeout:.1f} s waiting for {what}{detail}")
        time.sleep(interval)
