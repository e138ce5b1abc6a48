"""The netns library and its pytest fixture: labs always tear down, even when a test fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mast_common.netns import Lab, list_namespaces, pid_alive, run_host, sweep_stale
from mast_common.waiting import wait_for

pytestmark = pytest.mark.integration


def test_veth_link_carries_traffic(netns_lab: Lab) -> None:
    netns_lab.link("h1", "h1-eth0", "h2", "h2-eth0")
    netns_lab.nodes["h1"].add_address("h1-eth0", "2001:db8:1::1/64")
    netns_lab.nodes["h2"].add_address("h2-eth0", "2001:db8:1::2/64")
    out = netns_lab.nodes["h1"].exec(
        ["ping", "-6", "-c", "2", "-i", "0.2", "-W", "2", "2001:db8:1::2"]
    )
    assert " 0% packet loss" in out.stdout
    # The root namespace never sees lab interfaces.
    assert "h1-eth0" not in run_host(["ip", "link"]).stdout


def test_close_kills_processes_including_escaped_ones(require_root: None) -> None:
    lab = Lab()
    node = lab.node("r1")
    plain = node.spawn(["sleep", "300"])
    stubborn = node.spawn(["sh", "-c", "trap '' TERM; sleep 300 & wait"], label="stubborn")
    # A daemon that double-forks leaves our process group; namespace sweeping must find it.
    node.exec(["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null &"])
    inside = node.pids()
    assert plain.pid in inside and len(inside) >= 3
    names = lab.namespaces()
    lab.close()
    assert not set(names) & set(list_namespaces())
    wait_for(
        lambda: not any(pid_alive(p) for p in inside), timeout=10, what="lab processes to exit"
    )
    assert not stubborn.alive()
    assert not lab.workdir.exists()


INNER_TEST = """
import json, os

def test_fails_midway(netns_lab):
    netns_lab.link("a", "a-eth", "b", "b-eth")
    proc = netns_lab.nodes["a"].spawn(["sleep", "300"])
    ignored = netns_lab.nodes["b"].spawn(["sh", "-c", "trap '' TERM INT; sleep 300 & wait"])
    with open(os.environ["RECORD"], "w") as fh:
        json.dump({"ns": netns_lab.namespaces(), "pids": netns_lab.nodes["a"].pids()
                   + netns_lab.nodes["b"].pids()}, fh)
    raise AssertionError("deliberate failure inside a netns test")

def test_errors_in_setup_code(netns_lab):
    netns_lab.node("c")
    netns_lab.link("c", "x" * 16, "d", "d-eth")  # name too long: NetnsError
"""


def test_fixture_tears_down_after_failing_test(
    require_root: None, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_inner=INNER_TEST)
    record = tmp_path / "record.json"
    os.environ["RECORD"] = str(record)
    try:
        result = pytester.runpytest_subprocess(
            "-p", "mast_common.pytest_netns", "-q", "-p", "no:cacheprovider", timeout=120
        )
    finally:
        del os.environ["RECORD"]
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*deliberate failure inside a netns test*", "*longer than 15 characters*"]
    )
    seen = json.loads(record.read_text())
    assert len(seen["ns"]) == 2 and len(seen["pids"]) >= 2
    assert not set(seen["ns"]) & set(list_namespaces())
    assert not any(pid_alive(p) for p in seen["pids"])


def test_sweep_removes_namespaces_of_dead_owners(require_root: None) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"mt{dead.pid}x1-stale"
    run_host(["ip", "netns", "add", stale])
    run_host(["ip", "netns", "exec", stale, "sh", "-c", "setsid sleep 300 >/dev/null 2>&1 &"])
    mine = f"mt{os.getpid()}x999-live"
    run_host(["ip", "netns", "add", mine])
    try:
        removed = sweep_stale()
        assert stale in removed and mine not in removed
        assert stale not in list_namespaces() and mine in list_namespaces()
    finally:
        run_host(["ip", "netns", "del", mine], check=False)
        run_host(["ip", "netns", "del", stale], check=False)


def test_exec_reports_command_and_stderr(netns_lab: Lab) -> None:
    from mast_common.netns import NetnsError

    node = netns_lab.node("h1")
    with pytest.raises(
        NetnsError, match=r"exit 1: ip netns exec \S+ ip link set nonexistent up: .*nonexistent"
    ):
        node.ip("link", "set", "nonexistent", "up")
    with pytest.raises(NetnsError, match=r"timed out after 0\.5 s"):
        node.exec(["sleep", "5"], timeout=0.5)
    assert sys.executable  # the venv interpreter runs inside namespaces too
    out = node.exec([sys.executable, "-c", "import mast_common; print('ok')"])
    assert out.stdout.strip() == "ok"
