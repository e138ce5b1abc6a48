"""Run the calling thread inside a lab node's network namespace (sockets opened there stay there).

Integration tests use it to drive a daemon in a namespace with an in-process client, so a timing
assertion measures the daemon and not a `ip netns exec python` start-up.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from contextlib import contextmanager

from mast_common.netns import NetnsError, Node

_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetnsError(f"setns failed: {os.strerror(err)}")


@contextmanager
def inside(node: Node) -> Iterator[None]:
    """Within the block, this thread's new sockets live in `node`'s namespace."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{node.netns}", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(target)
        os.close(home)
