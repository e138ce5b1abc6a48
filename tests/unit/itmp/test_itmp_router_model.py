"""The urn:mast:router:1 model: edit-config semantics, XML round trip, BIRD snippets."""

from __future__ import annotations

import ipaddress

import pytest
from lxml import etree
from mast_common.prefix import PrefixStatus

from itmp.router.bird import neighbor_snippet, wanted_files
from itmp.router.model import (
    EditConflict,
    EditOperation,
    Encapsulation,
    ModelError,
    Neighbor,
    RouterConfig,
    Tunnel,
    apply_edit,
    parse_router,
    router_xml,
)

NC = "urn:ietf:params:xml:ns:netconf:base:1.0"


def cfg(body: str) -> object:
    return etree.fromstring(
        f'<config xmlns="{NC}" xmlns:nc="{NC}"><router xmlns="urn:mast:router:1">{body}</router></config>'
    )


TUN = (
    "<tunnel><name>t0</name><encapsulation>vxlan</encapsulation><local>2001:db8::1</local>"
    "<remote>2001:db8::2</remote><vni>5</vni><address>fd00::1/64</address></tunnel>"
)


def test_merge_create_delete() -> None:
    c = apply_edit(RouterConfig(), cfg(TUN))
    assert c.tunnels["t0"].vni == 5 and c.tunnels["t0"].effective_mtu() == 1430
    c2 = apply_edit(
        c, cfg("<tunnel><name>t0</name><mtu>1400</mtu><address>fd00::9/64</address></tunnel>")
    )
    assert c2.tunnels["t0"].mtu == 1400 and len(c2.tunnels["t0"].addresses) == 2
    with pytest.raises(EditConflict):
        apply_edit(c, cfg(TUN.replace("<tunnel>", '<tunnel nc:operation="create">')))
    c3 = apply_edit(c, cfg('<tunnel nc:operation="delete"><name>t0</name></tunnel>'))
    assert not c3.tunnels
    with pytest.raises(EditConflict):
        apply_edit(c3, cfg('<tunnel nc:operation="delete"><name>t0</name></tunnel>'))
    apply_edit(c3, cfg('<tunnel nc:operation="remove"><name>t0</name></tunnel>'))


def test_replace_root() -> None:
    c = apply_edit(RouterConfig(), cfg(TUN))
    c2 = apply_edit(
        c,
        cfg(
            "<prefix-status><prefix>2001:db8:a::/48</prefix><status>withdrawn</status></prefix-status>"
        ),
        EditOperation.REPLACE,
    )
    assert not c2.tunnels and c2.prefix_status == {
        ipaddress.IPv6Network("2001:db8:a::/48"): PrefixStatus.WITHDRAWN
    }


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            "<tunnel><name>t0</name><encapsulation>ipip</encapsulation><local>::1</local><remote>::2</remote></tunnel>",
            "gre or vxlan",
        ),
        ("<tunnel><name>much-too-long-name</name></tunnel>", "bad interface name"),
        (
            "<tunnel><name>t0</name><encapsulation>gre</encapsulation><local>::1</local></tunnel>",
            "remote: missing",
        ),
        ("<tunnel><name>t0</name><colour>red</colour></tunnel>", "unknown element"),
        ("<bgp-neighbor><name>1bad</name></bgp-neighbor>", "BIRD symbol"),
        (
            "<prefix-status><prefix>2001:db8:a::1/48</prefix><status>preferred</status></prefix-status>",
            "IPv6 prefix",
        ),
        ("<prefix-status><prefix>2001:db8:a::/48</prefix></prefix-status>", "status: missing"),
        ("<ospf/>", "unknown element"),
    ],
)
def test_model_errors_name_the_element(body: str, words: str) -> None:
    with pytest.raises(ModelError, match=words):
        apply_edit(RouterConfig(), cfg(body))


def test_validate_cross_references() -> None:
    n = (
        "<bgp-neighbor><name>n1</name><address>fd00::2</address><remote-as>1</remote-as>"
        "<local-as>2</local-as><tunnel>t9</tunnel></bgp-neighbor>"
    )
    with pytest.raises(ModelError, match="unknown tunnel"):
        apply_edit(RouterConfig(), cfg(n)).validate()
    dup = TUN + TUN.replace("<name>t0</name>", "<name>t1</name>")
    with pytest.raises(ModelError, match="vni 5 already used"):
        apply_edit(RouterConfig(), cfg(dup)).validate()


def test_xml_round_trip() -> None:
    t = Tunnel(
        "t0",
        Encapsulation.GRE,
        ipaddress.IPv6Address("2001:db8::1"),
        ipaddress.IPv6Address("2001:db8::2"),
        mtu=1400,
        underlay_next_hop=ipaddress.IPv6Address("fe80::1"),
    )
    n = Neighbor(
        "n1",
        ipaddress.IPv6Address("fd00::2"),
        64512,
        65001,
        50,
        7,
        True,
        "t0",
        (ipaddress.IPv6Network("2001:db8:a::/48"),),
        (),
        9,
    )
    c = RouterConfig(
        {"t0": t}, {"n1": n}, {ipaddress.IPv6Network("2001:db8:a::/48"): PrefixStatus.DISCOURAGED}
    )
    assert parse_router(router_xml(c)) == c


def test_bird_snippet() -> None:
    n = Neighbor(
        "n1",
        ipaddress.IPv6Address("fd00::2"),
        64512,
        65001,
        50,
        7,
        True,
        "t0",
        (ipaddress.IPv6Network("2001:db8:a::/48"),),
        (),
        9,
    )
    text = neighbor_snippet(n)
    assert "protocol bgp n1" in text and "bfd on;" in text and 'interface "t0";' in text
    assert "bgp_local_pref = 50;" in text and "bgp_med = 7;" in text and "2001:db8:a::/48+" in text
    assert "export none" in text and "hold time 9;" in text
    files = wanted_files({"n1": n}, True)
    assert "protocol bfd itmp_bfd" in files["00-itmp.conf"]
