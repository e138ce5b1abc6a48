"""SRMS (real `srms run`) receiving linkDown/linkUp from real net-snmp snmpd in a router namespace."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import pytest
from mast_common.netns import Lab
from mast_common.waiting import wait_for
from srmslab import (
    PREFIX_A,
    PREFIX_B,
    ROUTER_ENGINE,
    V3_USER,
    build_stub_lab,
    print_timeline,
    providers_block,
    snmp_block,
    wait_status,
)

from srms.snmpd_conf import V3Sink

pytestmark = pytest.mark.integration


def test_v2c_link_down_up_by_if_name(netns_lab: Lab, require_binaries: Callable[..., None]) -> None:
    require_binaries(snmpd="snmpd", snmpget="snmp")
    lab = build_stub_lab(netns_lab)
    body = providers_block(
        'router = "fd00:ff::1", if_name = "acca"', 'router = "fd00:ff::1", if_name = "accb"'
    ) + snmp_block(community="public")
    s = lab.start_srms(lab.srms_config(body, hold_down=2.0))
    lab.start_snmpd(community="public")
    time.sleep(1.5)  # snmpd's start-up linkUp notifications (links are up: nothing changes)
    t_down = time.time()
    lab.r1.set_link("acca", False)
    t_disc = wait_status(s, PREFIX_A, "discouraged")
    assert s.prefix_status(PREFIX_B) == "preferred"
    [ev] = [e for e in s.events("link.event") if e["state"] == "down"]
    assert "acca" in ev["detail"]
    print_timeline(
        "v2c linkDown",
        [("ip link set acca down", t_down), ("trap handled", ev["ts"]), ("status seen", t_disc)],
    )
    assert t_disc - t_down < 5, "monitor -r 1 should give ~1 s"

    lab.r1.set_link("acca", True)
    wait_for(
        lambda: any(e["state"] == "up" for e in s.events("link.event")), timeout=10, what="linkUp"
    )
    up_at = [e["ts"] for e in s.events("link.event") if e["state"] == "up"][-1]
    assert s.prefix_status(PREFIX_A) == "discouraged"  # hold-down not over yet
    t_pref = wait_status(s, PREFIX_A, "preferred")
    assert t_pref - up_at >= 2.0
    trans = [t for t in s.status()["transitions"] if t["prefix"] == PREFIX_A]
    assert [t["new"] for t in reversed(trans)] == ["discouraged", "preferred"]


@pytest.mark.parametrize("inform", [False, True], ids=["trap", "inform"])
def test_v3_authpriv_by_if_index(
    netns_lab: Lab, require_binaries: Callable[..., None], inform: bool
) -> None:
    require_binaries(snmpd="snmpd", snmpget="snmp")
    lab = build_stub_lab(netns_lab)
    idx_a, idx_b = lab.if_index("acca"), lab.if_index("accb")
    body = providers_block(
        f'router = "fd00:ff::1", if_index = {idx_a}', f'router = "fd00:ff::1", if_index = {idx_b}'
    ) + snmp_block(community=None, v3=V3_USER)
    s = lab.start_srms(lab.srms_config(body))
    # Traps carry the router's engine ID (configured in srms.toml); informs discover SRMS's.
    v3 = V3Sink(
        V3_USER.user, V3_USER.auth_key, V3_USER.priv_key, engine_id=ROUTER_ENGINE, inform=inform
    )
    lab.start_snmpd(community=None, v3=v3)
    time.sleep(1.5)
    lab.r1.set_link("accb", False)
    wait_status(s, PREFIX_B, "discouraged")
    assert s.prefix_status(PREFIX_A) == "preferred"


def test_v3_wrong_key_or_user_dropped_and_counted(
    netns_lab: Lab, require_binaries: Callable[..., None]
) -> None:
    require_binaries(snmpd="snmpd", snmpget="snmp")
    lab = build_stub_lab(netns_lab)
    body = providers_block(
        'router = "fd00:ff::1", if_name = "acca"', 'router = "fd00:ff::1", if_name = "accb"'
    ) + snmp_block(community=None, v3=V3_USER)
    s = lab.start_srms(lab.srms_config(body))
    bad_key = V3Sink(V3_USER.user, "wrong-auth-key-9", V3_USER.priv_key, engine_id=ROUTER_ENGINE)
    bad_user = (
        f"trapsess -v3 -e 0x{ROUTER_ENGINE} -u intruder -l authPriv -a SHA -A {V3_USER.auth_key}"
        f" -x AES -X {V3_USER.priv_key} udp6:[fd00:ff::2]:1162\n"
    )
    # Plus a v2c community SRMS does not accept.
    lab.start_snmpd(community="public", v3=bad_key, extra=bad_user)
    time.sleep(1.5)
    lab.r1.set_link("acca", False)

    def dropped() -> dict[str, float]:
        prefix = 'srms_snmp_dropped_total{reason="'
        return {k[len(prefix) : -2]: v for k, v in s.metrics().items() if k.startswith(prefix)}

    # And garbage at the daemon's trap port: counted as malformed, the daemon goes on.
    garbage = (
        "import os, socket\n"
        "s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
        "for i in range(300):\n"
        "    s.sendto(b'\\x30\\x84' + os.urandom(i % 200), ('fd00:ff::2', 1162))\n"
    )
    lab.r1.exec([sys.executable, "-c", garbage])
    reasons = ("wrong-digest", "unknown-user", "bad-community", "malformed")
    wait_for(
        lambda: all(dropped().get(r, 0) >= 1 for r in reasons),
        timeout=15,
        what="dropped notifications counted",
    )
    time.sleep(1)
    assert s.prefix_status(PREFIX_A) == "preferred"
    assert s.process.alive()
    print("dropped:", dropped())


def test_if_name_resolved_by_get_when_trap_lacks_it(
    netns_lab: Lab, require_binaries: Callable[..., None]
) -> None:
    require_binaries(snmpd="snmpd", snmpget="snmp")
    lab = build_stub_lab(netns_lab)
    body = (
        providers_block(
            'router = "fd00:ff::1", if_name = "acca"', 'router = "fd00:ff::1", if_name = "accb"'
        )
        + snmp_block(community="public")
        + 'get_community = "public"\n'
    )
    s = lab.start_srms(lab.srms_config(body))
    lab.start_snmpd(community="public", with_ifname=False)  # stock linkDown contents
    time.sleep(1.5)
    lab.r1.set_link("accb", False)
    wait_status(s, PREFIX_B, "discouraged")
    assert s.prefix_status(PREFIX_A) == "preferred"
    [resolved] = [e for e in s.events("snmp.ifname_resolved") if e["if_name"] == "accb"]
    assert resolved["if_index"] == lab.if_index("accb")
