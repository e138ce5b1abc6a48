"""Headless Chromium screenshots, so tests can look at a report as a person would."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

# Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


class ScreenshotError(RuntimeError):
    pass


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(
    page: Path, png: Path, *, width: int = 1200, height: int = 2000, timeout: float = 120
) -> Path:
    """Render `page` (a local HTML file) into `png`; raise ScreenshotError with Chromium's words."""
    chromium = chromium_path()
    if chromium is None:
        raise ScreenshotError("chromium is not installed (Debian package chromium)")
    with tempfile.TemporaryDirectory(prefix="mast-chromium-") as profile:
        try:
            proc = subprocess.run(
                [chromium, *_FLAGS, f"--user-data-dir={profile}",
                 f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
                capture_output=True, text=True, timeout=timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise ScreenshotError(f"chromium took over {timeout} s on {page}") from None
    if not png.exists() or png.stat().st_size == 0:
        raise ScreenshotError(f"chromium wrote no screenshot of {page}: {proc.stderr[-2000:]}")
    return png
