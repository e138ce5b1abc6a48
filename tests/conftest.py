from __future__ import annotations

import signal
from pathlib import Path

import pytest

pytest_plugins = ["mast_common.pytest_netns"]

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (real MRT dumps); tests that need it are skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """Where the top-level CMake build puts the native parts (hook library, Knot module)."""
    return REPO / "build"


def pytest_runtest_setup(item: pytest.Item) -> None:
    # mrtparse restores SIGPIPE's default action when imported (at collection); a test that then
    # writes into a socket its peer closed would kill the whole run instead of getting EPIPE.
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
