"""TMS tunnel table and what one row turns into on the gateway router."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from itmp.authorization import Customer
from itmp.channel import TlsFiles
from itmp.router.model import Encapsulation
from itmp.tms import RouterSettings, TmsConfig, TunnelRow, TunnelStore, tunnel_objects

N = ipaddress.IPv6Network
A = ipaddress.IPv6Address


def config(tmp_path: Path) -> TmsConfig:
    return TmsConfig(
        name="A",
        asn=65001,
        state_dir=tmp_path,
        tls=TlsFiles(tmp_path / "c", tmp_path / "k", tmp_path / "ca"),
        router=RouterSettings("::1", 830, "u", "p"),
        endpoint=A("2001:db8:a::1"),
        tunnel_pool=N("fd00:a::/48"),
        customers=[
            Customer("stub1", 64512, [N("2001:db8:a:1::/64")], [N("2001:db8:b:1::/64")], med=7)
        ],
    )


def row(idx: int, state: str = "offered") -> TunnelRow:
    return TunnelRow(f"A-{idx}", idx, "stub1", N("2001:db8:a:1::/64"), A(f"2001:db8:b:1::{idx + 1:x}"), 64512,
                     Encapsulation.VXLAN, state)  # fmt: skip


def test_router_objects(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    t, n = tunnel_objects(cfg, row(5), cfg.customers[0])
    assert t.name == "itmp5" and t.vni == 100005 and str(t.addresses[0]) == "fd00:a:0:5::1/64"
    assert t.local == A("2001:db8:a::1") and t.remote == A("2001:db8:b:1::6")
    assert (
        n.name == "itmp_5" and n.address == A("fd00:a:0:5::2") and n.local_pref == 50 and n.med == 7
    )
    assert n.import_prefixes == (N("2001:db8:a:1::/64"),) and n.bfd and n.tunnel == "itmp5"


def test_store_allocates_lowest_free_index_and_survives_reopen(tmp_path: Path) -> None:
    store = TunnelStore(tmp_path / "tms.sqlite")
    for i in (0, 1, 3):
        store.insert(row(i))
    assert store.free_index(10) == 2
    store.set_state("A-1", "active")
    store.delete("A-0")
    again = TunnelStore(tmp_path / "tms.sqlite")
    assert [(r.idx, r.state) for r in again.all()] == [(1, "active"), (3, "offered")]
    assert again.free_index(10) == 0
    found = again.find("stub1", N("2001:db8:a:1::/64"), A("2001:db8:b:1::4"))
    assert found is not None and found.tunnel_id == "A-3"
    assert again.free_index(2) is None or again.free_index(2) == 0
