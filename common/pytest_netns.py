"""pytest fixtures for network-namespace tests (loaded from tests/conftest.py).

- `netns_lab`: a fresh `Lab` per test, closed after the test whatever its outcome.
- `require_root`: skip cleanly when not root (integration tests need namespaces).
- `require_binaries(...)`: fail with the Debian package name when a daemon is missing.
At session start, namespaces left by a killed earlier run are swept.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator

import pytest
from mast_common.netns import Lab, sweep_stale


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.geteuid() == 0 and shutil.which("ip"):
        sweep_stale()


@pytest.fixture
def require_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")


@pytest.fixture
def netns_lab(require_root: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    lab = Lab(tmp_path_factory.mktemp("lab"))
    try:
        yield lab
    finally:
        lab.close()


@pytest.fixture
def require_binaries() -> Callable[..., None]:
    """`require_binaries(bird="bird2", knotd="knot")` fails naming the missing package."""

    def check(**binaries: str) -> None:
        missing = [f"{b} (Debian package {p})" for b, p in binaries.items() if not shutil.which(b)]
        if missing:
            pytest.fail("missing: " + ", ".join(missing) + " — run scripts/install-deps")

    return check
