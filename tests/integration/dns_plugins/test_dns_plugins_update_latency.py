"""Update latency in knotd 3.2: the one-second hold documented in README "Known limitations".

After every DDNS commit knotd plans a NOTIFY event for time(2) + 1 (whole seconds) and arms its
timer 1000 ms after the commit. An UPDATE that arrives in the next wall-clock second, before that
timer, is planned for the same whole second, so knotd does not re-arm the timer and the update
waits for it. These tests pin both halves: the hold exists and is bounded by the previous change
+ 1 s (what SRMS can rely on), and an update outside that window is answered at once.

Timing is made robust for a loaded machine by choosing the send moments relative to the wall
clock with wide margins and by taking the best of a few attempts.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from mast_common.prefix import PrefixStatus
from mast_dns.update import ZoneUpdater

from .conftest import PREFIX_A, DnsLab

pytestmark = pytest.mark.integration

ATTEMPTS = 3
PROMPT = 0.3  # s: an update knotd does not hold takes ~10 ms here


def _sleep_until(wall: float) -> None:
    delay = wall - time.time()
    if delay > 0:
        time.sleep(delay)


def _flip(dns: ZoneUpdater, n: int) -> float:
    """One status change (alternating), returning the wall time its answer arrived."""
    dns.set_prefix_status(PREFIX_A, PrefixStatus.DISCOURAGED if n % 2 else PrefixStatus.PREFERRED)
    return time.time()


def _pair(
    dns: ZoneUpdater, n: int, first_phase: float, second_at: Callable[[float], float]
) -> tuple[float, float] | None:
    """Change #1 at `first_phase` into a wall-clock second, change #2 at second_at(t1).
    Returns (#2's duration, #2's answer - #1's answer), or None if load spoilt the timing."""
    time.sleep(1.2)  # let the NOTIFY planned by any earlier change fire
    _sleep_until(int(time.time()) + 1 + first_phase)
    t1 = _flip(dns, n)
    if t1 % 1 > first_phase + 0.2:  # #1 itself was slow: the planned moments no longer hold
        return None
    _sleep_until(second_at(t1))
    t2 = time.time()
    t3 = _flip(dns, n + 1)
    return t3 - t2, t3 - t1


def test_update_in_the_second_after_a_change_is_held_until_that_change_plus_1s(
    start_dns: Callable[..., DnsLab],
) -> None:
    lab = start_dns(extra_zone_options="    zonefile-sync: -1\n")
    dns = lab.updater(timeout=3.0, retries=0)
    seen: list[tuple[float, float]] = []
    for attempt in range(ATTEMPTS):
        # #1 ~0.5 s into a second, #2 just after the next boundary: ~0.5 s before #1 + 1 s.
        got = _pair(dns, 2 * attempt, 0.5, lambda t1: int(t1) + 1.03)
        if got is None:
            continue
        seen.append(got)
        held, since_first = got
        if held >= 0.25 and 0.95 <= since_first <= 1.3:
            return
    pytest.fail(
        "expected knotd to hold the second update until ~1 s after the first "
        f"(README 'Known limitations'); (held s, #2 answer - #1 answer s) per attempt: {seen}. "
        "If knotd no longer does this, update the README and this test."
    )


def test_update_in_the_same_second_or_after_the_notify_is_prompt(
    start_dns: Callable[..., DnsLab],
) -> None:
    lab = start_dns(extra_zone_options="    zonefile-sync: -1\n")
    dns = lab.updater(timeout=3.0, retries=0)
    same_second: list[float] = []
    after_notify: list[float] = []
    for attempt in range(ATTEMPTS):
        got = _pair(dns, 4 * attempt, 0.1, lambda t1: t1 + 0.3)
        if got is not None:
            same_second.append(got[0])
        got = _pair(dns, 4 * attempt + 2, 0.5, lambda t1: t1 + 1.1)
        if got is not None:
            after_notify.append(got[0])
        if same_second and after_notify and min(same_second) < PROMPT > min(after_notify):
            return
    pytest.fail(f"updates outside the hold window were slow: {same_second=} {after_notify=}")
