from __future__ import annotations

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
