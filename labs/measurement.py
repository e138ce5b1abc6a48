"""What the probes' logs say: loss window, path changes, TCP survival (pure functions)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Loss:
    sent: int
    received: int
    lost: int
    window_s: float  # longest stretch of consecutive lost packets, in sender time
    window_start: float | None  # send time of the first packet of that stretch
    window_end: float | None  # send time of the first packet after it


@dataclass(frozen=True)
class PathSample:
    t: float
    direct_tx: int
    tunnel_tx: int


def parse_sent(lines: Iterable[str]) -> list[tuple[int, float]]:
    """Sender log lines 'seq time [errno]'; a torn last line (file still written) is skipped."""
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            out.append((int(parts[0]), float(parts[1])))
        except ValueError:
            continue
    return out


def parse_received(lines: Iterable[str]) -> dict[int, float]:
    """Receiver log lines 'seq sent-time receive-time' → {seq: receive time}."""
    out: dict[int, float] = {}
    for line in lines:
        parts = line.split()
        if len(parts) != 3:
            continue
        try:
            out.setdefault(int(parts[0]), float(parts[2]))
        except ValueError:
            continue
    return out


def parse_path(lines: Iterable[str]) -> list[PathSample]:
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) != 3:
            continue
        try:
            out.append(PathSample(float(parts[0]), int(parts[1]), int(parts[2])))
        except ValueError:
            continue
    return out


def loss(sent: list[tuple[int, float]], received: dict[int, float], interval: float) -> Loss:
    """Losses of a constant stream; the window is the longest run of consecutive lost packets."""
    lost = 0
    best_len = run_len = 0
    best_start = run_start = None
    best_end = None
    ordered = sorted(sent)
    for i, (seq, t) in enumerate(ordered):
        if seq in received:
            run_len = 0
            continue
        lost += 1
        if run_len == 0:
            run_start = t
        run_len += 1
        if run_len > best_len:
            best_len = run_len
            best_start = run_start
            best_end = ordered[i + 1][1] if i + 1 < len(ordered) else t + interval
    window = 0.0
    if best_start is not None and best_end is not None:
        window = best_end - best_start
    return Loss(len(ordered), len(received), lost, window, best_start, best_end)


def path_in_use(
    samples: list[PathSample],
    *,
    after: float,
    path: str,
    window: float,
    min_packets: int,
    until: float | None = None,
) -> float | None:
    """When `path` ('direct' or 'tunnel') started carrying the stream after `after`: the first
    window of `window` seconds with at least `min_packets` packets (link-up chatter, BFD and
    keepalives stay below it), dated by the first sample of that window that saw a packet."""

    def count(s: PathSample) -> int:
        return s.direct_tx if path == "direct" else s.tunnel_tx

    times = [s.t for s in samples]
    for i, s in enumerate(samples):
        if s.t < after or (until is not None and s.t > until):
            continue
        j = bisect.bisect_left(times, s.t - window)
        j = max(j, bisect.bisect_left(times, after))
        if j >= i or count(samples[j]) < 0:
            continue
        if count(s) - count(samples[j]) >= min_packets:
            for k in range(j + 1, i + 1):
                if count(samples[k]) > count(samples[k - 1]):
                    return samples[k].t
    return None


def first_time_after(times: Iterable[float], after: float) -> float | None:
    later = [t for t in times if t >= after]
    return min(later) if later else None
