"""Runs the hook's C++ core test (no Kea server) and checks that the C++ push encoder and
mast_client.wire produce the same bytes: two implementations of PUSH.md agreeing."""

from __future__ import annotations

import ipaddress
import os
import subprocess
from pathlib import Path

import pytest
from mast_client import wire
from mast_common.prefix import PrefixStatus


def test_core_and_cross_implementation(build_dir: Path, tmp_path: Path) -> None:
    binary = build_dir / "dhcp-hooks" / "dhcp_mast_core_test"
    if not binary.exists():
        pytest.fail(f"{binary} missing: run scripts/build")
    env = {**os.environ, "KEA_LOCKFILE_DIR": str(tmp_path), "KEA_LOGGER_DESTINATION": "stderr"}
    proc = subprocess.run(
        [str(binary), str(tmp_path)], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("push ")]
    from_cpp = bytes.fromhex(line.split()[1])
    entries = [
        wire.PrefixEntry(ipaddress.IPv6Network("2001:db8:a::/64"), PrefixStatus.DISCOURAGED, 0, 0),
        wire.PrefixEntry(ipaddress.IPv6Network("2001:db8:b::/64"), PrefixStatus.PREFERRED, 0, 0),
    ]
    from_python = wire.encode_push(
        entries, key=bytes([0x11] * 32), counter=4242, server_duid=b"\x00\x04mast"
    )
    assert from_cpp == from_python
