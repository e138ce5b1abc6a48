from __future__ import annotations

import shutil

from mast_common.netns import NetnsError, Process
from mast_common.waiting import WaitAborted


def require_binary(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise NetnsError(f"{name} not found: install the Debian package {package}")
    return path


class DaemonExited(NetnsError, WaitAborted):
    """A daemon exited while we waited for it to answer."""


def ensure_running(proc: Process, what: str) -> None:
    """Raise with the daemon's own log when it exited during start-up."""
    if not proc.alive():
        raise DaemonExited(
            f"{what} exited with {proc.popen.returncode} during start-up:\n{proc.log()}"
        )
