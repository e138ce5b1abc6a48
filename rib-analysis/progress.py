"""A one-line progress bar on stderr, drawn only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.t0 = time.monotonic()
        self.drawn = False

    @staticmethod
    def wanted(stream: TextIO | None = None) -> bool:
        s = stream or sys.stderr
        return hasattr(s, "isatty") and s.isatty()

    def __call__(self, name: str, done: int, total: int) -> None:
        frac = min(1.0, done / total) if total else 1.0
        filled = int(frac * self.width)
        rate = done / max(1e-6, time.monotonic() - self.t0) / 1e6
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{name[:40]:40} [{bar}] {frac:6.1%} {rate:6.1f} MB/s")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
