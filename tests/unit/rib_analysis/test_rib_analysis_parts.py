"""Pure pieces of rib-analysis: provider-table bounds, ownership files, progress, file kinds."""

from __future__ import annotations

import bz2
import gzip
import io
from pathlib import Path

import pytest
from rib_analysis.ownership import OwnershipError, load_ownership, provider_owned
from rib_analysis.progress import ProgressBar
from rib_analysis.projection import Grt, ProviderLoad, provider_loads
from rib_analysis.source import UnsupportedCompression, detect_compression


def test_provider_bounds_follow_the_seed() -> None:
    # s_i = 3 single-homed, m_i = 2 multihomed stubs of degrees 2 and 4
    load = ProviderLoad(asn=64, single=3, multi=2, degree_sum=6)
    assert load.stubs == 5
    assert load.lower(100) == 100 + 3 + 2 * 2
    assert load.upper(100) == 100 + 3 + 6
    assert load.lower(100) <= load.upper(100)


def test_provider_loads_order() -> None:
    loads = provider_loads([(300, 1, 0, 0), (100, 2, 2, 5), (200, 3, 1, 2)])
    assert [x.asn for x in loads] == [100, 200, 300]  # 4, 4 (tie: lower ASN first), 1


def test_grt_reduction() -> None:
    g = Grt(
        today_v4=90,
        today_v6=10,
        mast_rib=20,
        mast_rib_prefixes=30,
        mast_ownership=None,
        mast_ownership_prefixes=None,
        no_origin=0,
    )
    assert (g.today, g.mast, g.reduction) == (100, 20, 0.8)
    g2 = Grt(0, 0, 0, 0, 5, 6, 0)
    assert g2.mast == 5 and g2.reduction == 0.0


def test_ownership_parsing_and_aggregates(tmp_path: Path) -> None:
    f = tmp_path / "ipasn.dat"
    f.write_text(
        "; x\n10.0.0.0/8\t1\n10.1.0.0/16\t1\n10.2.0.0/16\t2\n2001:db8::/32\t1\n2001:db8:1::/48\t3\n"
    )
    owners = load_ownership(f)
    assert len(owners) == 5
    owned = provider_owned(owners, {1, 2})
    assert (owned.prefixes, owned.aggregates) == (4, 3)  # 10.1/16 is inside 1's own 10/8
    bad = tmp_path / "bad.dat"
    bad.write_text("10.0.0.0/8\t1\n10.0.0.300/8\t2\n")
    with pytest.raises(OwnershipError, match=r"bad.dat:2: expected"):
        load_ownership(bad)
    with pytest.raises(OwnershipError, match="cannot read"):
        load_ownership(tmp_path / "missing.dat")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal() -> None:
    assert not ProgressBar.wanted(io.StringIO())
    tty = _Tty()
    assert ProgressBar.wanted(tty)
    bar = ProgressBar(tty)
    bar("rib.bz2", 50, 100)
    bar.close()
    out = tty.getvalue()
    assert "rib.bz2" in out and "50.0%" in out and out.startswith("\r")


def test_compression_by_magic(tmp_path: Path) -> None:
    cases = {"a.mrt": b"\x00\x01", "b.gz": gzip.compress(b"x"), "c.bz2": bz2.compress(b"x")}
    kinds = {}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        kinds[name] = detect_compression(tmp_path / name)
    assert kinds == {"a.mrt": "none", "b.gz": "gz", "c.bz2": "bz2"}
    misnamed = tmp_path / "really-gzip.bz2"
    misnamed.write_bytes(gzip.compress(b"x"))
    assert detect_compression(misnamed) == "gz"
    z = tmp_path / "d.zst"
    z.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 8)
    with pytest.raises(UnsupportedCompression, match="zstd"):
        detect_compression(z)
