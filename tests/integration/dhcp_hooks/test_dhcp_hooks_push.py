"""Broadcast Prefix Push end to end: real kea-dhcp6 + libdhcp_mast.so, real dhcpcd, mast-client.

Every host address comes from a real DHCPv6 exchange; the hook's sibling addresses give the host
one address per provider prefix with the same interface ID.
"""

from __future__ import annotations

import csv
import ipaddress
import time
from pathlib import Path
from typing import Any

import pytest
from mast_common.prefix import interface_id
from mast_common.waiting import wait_for

from .conftest import (
    PREFIX_A,
    PREFIX_B,
    PYTHON,
    REMOTE,
    StubLan,
    in_prefix,
    read_stats,
    start_dhclient,
    wait_address,
)

pytestmark = [pytest.mark.integration]

ECHO_SERVER = """
import socket, threading
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", 7000)); s.listen()
def echo(c):
    for d in iter(lambda: c.recv(4096), b""):
        c.sendall(d)
while True:
    c, _ = s.accept()
    threading.Thread(target=echo, args=(c,), daemon=True).start()
"""

LONG_CONNECTION = """
import os, socket, sys, time
src, dst, trigger, result = sys.argv[1:]
s = socket.socket(socket.AF_INET6); s.bind((src, 0)); s.settimeout(20); s.connect((dst, 7000))
s.sendall(b"before"); assert s.recv(100) == b"before"
open(result, "w").write("connected")
while not os.path.exists(trigger):
    time.sleep(0.02)
s.sendall(b"after")
open(result, "w").write("after:" + s.recv(100).decode())
"""

NEW_CONNECTION_SOURCE = """
import socket, sys
s = socket.create_connection((sys.argv[1], 7000), timeout=10)
print(s.getsockname()[0])
"""


def both_addresses(lan: StubLan, timeout: float = 30) -> tuple[str, str]:
    wait_address(
        lan.addresses,
        lambda a: bool(in_prefix(a, PREFIX_A)) and bool(in_prefix(a, PREFIX_B)),
        timeout=timeout,
        what="one address from each provider prefix on h1",
    )
    addrs = lan.addresses()
    (a,) = in_prefix(addrs, PREFIX_A)
    (b,) = in_prefix(addrs, PREFIX_B)
    return a, b


def is_deprecated(addr: str) -> Any:
    return lambda addrs: addr in addrs and addrs[addr]["deprecated"]


def set_status(lan: StubLan, prefix: str, status: str) -> dict[str, Any]:
    answer = lan.kea.command("mast-prefix-status", {"prefix": prefix, "status": status})
    assert answer["result"] == 0, answer
    return answer


def test_mast_client_discourage_restore_withdraw(stub_lan_factory: Any) -> None:
    # Reconfigure off: only the push (and mast-client) can change the host within a second.
    lan = stub_lan_factory(reconfigure=False)
    client, stats = lan.start_mast_client()
    lan.start_dhcpcd(reconfigure_accept=False)
    a, b = both_addresses(lan)
    assert interface_id(a) == interface_id(b), "siblings must share the interface ID"
    assert not lan.addresses()[a]["deprecated"]
    wait_for(lambda: read_stats(stats).get("key_learned"), timeout=10, what="push key learned")

    lan.srv.spawn([PYTHON, "-c", ECHO_SERVER], label="echo")
    wait_for(
        lambda: ":7000" in lan.srv.exec(["ss", "-ltn"]).stdout, timeout=10, what="echo server"
    )
    result = lan.lab.workdir / "long-connection.result"
    trigger = lan.lab.workdir / "long-connection.go"
    lan.host.spawn(
        [PYTHON, "-c", LONG_CONNECTION, a, REMOTE, str(trigger), str(result)], label="tcp"
    )
    wait_for(
        lambda: result.exists() and result.read_text() == "connected",
        timeout=15,
        what="TCP connection from the A address",
    )

    answer = set_status(lan, PREFIX_A, "discouraged")
    assert answer["arguments"]["links-pushed"] == 1
    took = wait_address(lan.addresses, is_deprecated(a), timeout=5, what=f"{a} deprecated")
    assert took <= 1.0, f"A address deprecated after {took:.3f} s"
    assert not lan.addresses()[b]["deprecated"]
    assert lan.addresses()[a]["valid"] not in ("0sec",), "valid lifetime must be kept"

    # The connection opened on the A address before the push still carries data.
    trigger.write_text("go")
    wait_for(lambda: result.read_text().startswith("after:"), timeout=15, what="echo after push")
    assert result.read_text() == "after:after"

    # A new outgoing connection picks the B address as its source.
    src = lan.host.exec([PYTHON, "-c", NEW_CONNECTION_SOURCE, REMOTE]).stdout.strip()
    assert ipaddress.IPv6Address(src) == ipaddress.IPv6Address(b)

    set_status(lan, PREFIX_A, "preferred")
    took = wait_address(
        lan.addresses, lambda x: a in x and not x[a]["deprecated"], timeout=5, what="A restored"
    )
    assert took <= 1.0
    src = lan.host.exec([PYTHON, "-c", NEW_CONNECTION_SOURCE, "2001:db8:a::1"]).stdout.strip()
    assert ipaddress.IPv6Address(src) == ipaddress.IPv6Address(a)

    set_status(lan, PREFIX_A, "withdrawn")
    took = wait_address(lan.addresses, lambda x: a not in x, timeout=5, what="A removed")
    assert took <= 1.0
    assert b in lan.addresses()
    assert read_stats(stats)["accepted"] == 3
    assert client.alive()


def send_raw(lan: StubLan, *payloads: bytes) -> None:
    """Send `payloads` with Scapy from the server namespace to ff02::1 port 546, 0.3 s apart."""
    code = (
        "import sys, time\n"
        "from scapy.all import IPv6, UDP, Raw, send\n"
        "for h in sys.argv[1:]:\n"
        "    send(IPv6(dst='ff02::1')/UDP(sport=547, dport=546)/Raw(bytes.fromhex(h)),"
        " iface='srv-eth', verbose=False)\n"
        "    time.sleep(0.3)\n"
    )
    lan.srv.exec([PYTHON, "-c", code, *(p.hex() for p in payloads)])


def test_forged_replayed_truncated_pushes_change_nothing(stub_lan_factory: Any) -> None:
    from mast_client import scapy_push

    from .conftest import PUSH_KEY

    lan = stub_lan_factory(reconfigure=False)
    _, stats = lan.start_mast_client()
    lan.start_dhcpcd(reconfigure_accept=False)
    a, _ = both_addresses(lan)
    wait_for(lambda: read_stats(stats).get("key_learned"), timeout=10, what="push key learned")
    floor = int(read_stats(stats)["last_counter"])
    key = bytes.fromhex(PUSH_KEY)

    forged = scapy_push.sign(
        scapy_push.build([(PREFIX_A, "discouraged")], counter=floor + 1000), b"x" * 32
    )
    replayed = scapy_push.sign(scapy_push.build([(PREFIX_A, "discouraged")], counter=floor), key)
    good = scapy_push.sign(
        scapy_push.build([(PREFIX_A, "discouraged")], counter=floor + 2000), key
    )
    truncated = good[:-10]
    send_raw(lan, forged, replayed, truncated)

    def counted() -> bool:
        rejected = read_stats(stats).get("rejected", {})
        return all(rejected.get(r) == 1 for r in ("forged", "replayed", "truncated"))

    wait_for(counted, timeout=10, what="three rejected pushes counted")
    assert not lan.addresses()[a]["deprecated"]
    assert read_stats(stats)["accepted"] == 0

    # The same push untruncated is accepted (the test's pushes are real ones); sent again, it is
    # a replay.
    send_raw(lan, good, good)
    wait_address(lan.addresses, is_deprecated(a), timeout=5, what="A deprecated by scapy push")
    wait_for(
        lambda: read_stats(stats).get("rejected", {}).get("replayed") == 2,
        timeout=10,
        what="replay of an accepted push counted",
    )


def test_dhcpcd_reconfigure_without_host_agent(stub_lan_factory: Any) -> None:
    lan = stub_lan_factory(reconfigure=True)
    lan.start_dhcpcd(reconfigure_accept=True)
    a, b = both_addresses(lan)
    # Give dhcpcd's Reply handling a moment to record the Reconfigure Key.
    time.sleep(0.5)
    answer = set_status(lan, PREFIX_A, "discouraged")
    assert answer["arguments"]["reconfigures-sent"] == 1
    took = wait_address(lan.addresses, is_deprecated(a), timeout=5, what=f"{a} deprecated")
    assert took <= 1.0, f"dhcpcd deprecated A after {took:.3f} s"
    assert not lan.addresses()[b]["deprecated"]
    # Kea's lease database says what the client was told (lease6_renew lowered it).
    rows = [r for r in csv.DictReader(lan.kea.leases.open()) if r["address"] == a]
    assert rows and rows[-1]["pref_lifetime"] == "0", rows

    set_status(lan, PREFIX_A, "preferred")
    wait_address(
        lan.addresses, lambda x: a in x and not x[a]["deprecated"], timeout=5, what="A restored"
    )


def test_plain_client_gets_zero_preferred_at_renew(stub_lan_factory: Any) -> None:
    # dhcpcd without Reconfigure Accept is a client without Reconfigure: it learns at renew.
    timers = {"renew-timer": 3, "rebind-timer": 5, "preferred-lifetime": 8, "valid-lifetime": 10}
    lan = stub_lan_factory(timers=timers, reconfigure=True)
    lan.start_dhcpcd(reconfigure_accept=False)
    a, b = both_addresses(lan)
    answer = set_status(lan, PREFIX_A, "discouraged")
    assert answer["arguments"]["reconfigures-sent"] == 0
    wait_address(lan.addresses, is_deprecated(a), timeout=15, what=f"{a} deprecated at renew")
    assert not lan.addresses()[b]["deprecated"]
    # Withdrawn: the next Reply carries A with zero lifetimes and the client drops it.
    set_status(lan, PREFIX_A, "withdrawn")
    wait_address(lan.addresses, lambda x: a not in x, timeout=15, what=f"{a} removed at renew")
    assert b in lan.addresses()


def test_isc_dhclient_gets_siblings_and_zero_preferred_at_renew(
    stub_lan_factory: Any, require_binaries: Any
) -> None:
    require_binaries(dhclient="isc-dhcp-client")
    timers = {"renew-timer": 3, "rebind-timer": 5, "preferred-lifetime": 8, "valid-lifetime": 10}
    lan = stub_lan_factory(timers=timers)
    start_dhclient(lan.host, "h1-eth")
    a, b = both_addresses(lan)
    assert interface_id(a) == interface_id(b)
    set_status(lan, PREFIX_A, "discouraged")
    wait_address(lan.addresses, is_deprecated(a), timeout=15, what=f"{a} deprecated at renew")
    assert not lan.addresses()[b]["deprecated"]


def test_kea_restart_keeps_discouraged(stub_lan_factory: Any) -> None:
    lan = stub_lan_factory()
    set_status(lan, PREFIX_A, "discouraged")
    lan.kea.process.stop()
    lan.start_kea()
    listing = lan.kea.command("mast-prefix-list")
    assert listing["result"] == 0
    statuses = {p["prefix"]: p["status"] for p in listing["arguments"]["prefixes"]}
    assert statuses == {PREFIX_A: "discouraged", PREFIX_B: "preferred"}
    # A new host after the restart gets A with preferred lifetime 0 in its very first Reply.
    lan.start_dhcpcd(reconfigure_accept=False)
    a, b = both_addresses(lan)
    assert lan.addresses()[a]["deprecated"]
    assert not lan.addresses()[b]["deprecated"]
    # Setting the status it already has is a success and pushes again.
    again = set_status(lan, PREFIX_A, "discouraged")
    assert again["arguments"]["links-pushed"] == 1


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"prefix": "2001:db8:a::/64", "status": "bogus"}, "unknown status"),
        ({"prefix": "2001:db8:zz::/64", "status": "discouraged"}, "malformed prefix"),
        ({"prefix": "2001:db8:a::1/64", "status": "discouraged"}, "host bits"),
        ({"prefix": "2001:db8:c::/64", "status": "discouraged"}, "not served"),
        ({"status": "discouraged"}, "'prefix'"),
        ({"prefix": "2001:db8:a::/64"}, "'status'"),
        (
            {"prefix": "2001:db8:a::/64", "status": "discouraged", "valid-lifetime": -1},
            "valid-lifetime",
        ),
    ],
)
def test_bad_command_arguments(stub_lan_factory: Any, arguments: Any, fragment: str) -> None:
    lan = stub_lan_factory()
    answer = lan.kea.command("mast-prefix-status", arguments)
    assert answer["result"] == 1
    assert fragment in answer["text"]
    # The server is still serving and the status unchanged.
    listing = lan.kea.command("mast-prefix-list")
    assert {p["status"] for p in listing["arguments"]["prefixes"]} == {"preferred"}


def test_kea_config_check_loads_hook(hook_library: Path, tmp_path: Path) -> None:
    import json
    import subprocess

    from .conftest import kea_args

    args = kea_args(hook_library, tmp_path / "state.json")
    args["extra"]["shared-networks"][0]["interface"] = "lo"  # -t checks the interface exists
    config = {
        "Dhcp6": {
            "interfaces-config": {"interfaces": []},
            "hooks-libraries": args["hooks"],
            **args["extra"],
        }
    }
    path = tmp_path / "kea.json"
    path.write_text(json.dumps(config))
    ok = subprocess.run(["kea-dhcp6", "-t", str(path)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "libdhcp_mast.so" in ok.stdout


def test_bad_hook_parameters_stop_kea_with_a_clear_error(stub_lan_factory: Any) -> None:
    # kea-dhcp6 -t only opens the library; load() (and its parameter check) runs at start-up.
    from mast_common.daemons._base import DaemonExited

    lan = stub_lan_factory()
    lan.kea.process.stop()
    with pytest.raises(DaemonExited, match="push-key"):
        lan.start_kea(**{"push-key": "short"})


def test_corrupt_state_file_keeps_kea_serving(stub_lan_factory: Any) -> None:
    lan = stub_lan_factory()
    lan.kea.process.stop()
    lan.state_file.write_text("{not json")
    lan.start_kea()
    listing = lan.kea.command("mast-prefix-list")
    assert {p["status"] for p in listing["arguments"]["prefixes"]} == {"preferred"}
    assert lan.state_file.with_name(lan.state_file.name + ".corrupt").exists()
    assert "MAST_STATE_CORRUPT" in lan.kea.process.log()


def test_mast_client_learns_key_by_information_request(stub_lan_factory: Any) -> None:
    # No DHCPv6 client on the host yet: mast-client asks for a Reply itself.
    lan = stub_lan_factory()
    _, stats = lan.start_mast_client()
    wait_for(lambda: read_stats(stats).get("key_learned"), timeout=15, what="push key learned")
