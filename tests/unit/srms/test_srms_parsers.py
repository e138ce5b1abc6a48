"""The parsers of untrusted input: SNMP notification varbinds and BIRD's `show protocols`."""

from __future__ import annotations

from mast_common.prefix import IPv6Network

from srms.config import AccessLink, Provider
from srms.events.bird import parse_show_protocols
from srms.events.netlink import IFF_RUNNING, IFF_UP, link_is_up
from srms.events.snmp import (
    IF_NAME,
    IF_OPER_STATUS,
    LINK_DOWN,
    LINK_UP,
    SNMP_TRAP_OID,
    LinkNotification,
    match_provider,
    parse_notification,
)

UPTIME = (1, 3, 6, 1, 2, 1, 1, 3, 0)


def trap(
    kind: tuple[int, ...], if_index: int, name: str | None = "eth1"
) -> list[tuple[tuple[int, ...], object]]:
    vbs: list[tuple[tuple[int, ...], object]] = [
        (UPTIME, 601),
        (SNMP_TRAP_OID, kind),
        ((1, 3, 6, 1, 2, 1, 2, 2, 1, 1, if_index), if_index),
        ((1, 3, 6, 1, 2, 1, 2, 2, 1, 7, if_index), 1),
        ((*IF_OPER_STATUS, if_index), 2 if kind == LINK_DOWN else 1),
    ]
    if name is not None:
        vbs.append(((*IF_NAME, if_index), name.encode()))
    return vbs


def test_link_down_and_up_parsed() -> None:
    assert parse_notification(trap(LINK_DOWN, 3)) == LinkNotification(False, 3, "eth1")
    assert parse_notification(trap(LINK_UP, 7, None)) == LinkNotification(True, 7, None)


def test_other_notifications_ignored() -> None:
    cold_start = [(UPTIME, 1), (SNMP_TRAP_OID, (1, 3, 6, 1, 6, 3, 1, 1, 5, 1))]
    assert parse_notification(cold_start) is None
    assert parse_notification([]) is None
    assert parse_notification([(SNMP_TRAP_OID, "garbage")]) is None


def test_if_index_from_oper_status_instance_when_if_index_missing() -> None:
    vbs = [(SNMP_TRAP_OID, LINK_DOWN), ((*IF_OPER_STATUS, 12), 2)]
    assert parse_notification(vbs) == LinkNotification(False, 12, None)


PROVIDERS = [
    Provider("A", [IPv6Network("2001:db8:a::/48")], AccessLink(router="10.0.0.1", if_index=3)),
    Provider("B", [IPv6Network("2001:db8:b::/48")], AccessLink(router="10.0.0.1", if_name="eth2")),
    Provider("C", [IPv6Network("2001:db8:c::/48")], AccessLink(router="fd00::1", if_index=3)),
]


def test_match_by_agent_and_if_index_or_name() -> None:
    assert match_provider(PROVIDERS, "10.0.0.1", LinkNotification(False, 3, "x")).name == "A"  # type: ignore[union-attr]
    assert match_provider(PROVIDERS, "10.0.0.1", LinkNotification(False, 4, "eth2")).name == "B"  # type: ignore[union-attr]
    assert match_provider(PROVIDERS, "fd00:0::1", LinkNotification(True, 3, None)).name == "C"  # type: ignore[union-attr]
    assert match_provider(PROVIDERS, "10.0.0.2", LinkNotification(False, 3, None)) is None
    assert match_provider(PROVIDERS, "not-an-ip", LinkNotification(False, 3, None)) is None
    assert match_provider(PROVIDERS, "10.0.0.1", LinkNotification(False, 9, "eth9")) is None


SHOW_PROTOCOLS = """0001 BIRD 2.0.12 ready.
2002-Name       Proto      Table      State  Since         Info
1002-device1    Device     ---        up     00:40:01.123
 kernel1    Kernel     master6    up     00:40:01.123
 provider_a BGP        ---        up     00:40:02.456  Established
 provider_b BGP        ---        start  00:40:03.789  Active        Socket: Connection refused
 static1    Static     master6    down   2026-11-22 00:40:01
0000
"""


def test_show_protocols() -> None:
    protos = parse_show_protocols(SHOW_PROTOCOLS)
    assert protos["provider_a"].up
    assert not protos["provider_b"].up
    assert protos["provider_b"].info.startswith("Active")
    assert protos["kernel1"].up
    assert not protos["static1"].up
    assert "Name" not in protos


def test_netlink_link_state() -> None:
    assert link_is_up(IFF_UP | IFF_RUNNING)
    assert not link_is_up(IFF_UP)
    assert not link_is_up(IFF_UP | IFF_RUNNING, deleted=True)
