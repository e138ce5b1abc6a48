"""Fuzz the history's parsers of outside input: BGPStream AS paths, dump names, MRT heads.

Each either returns a value or raises its one documented error; nothing else escapes.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rib_analysis.history.bgpstream import path_hops
from rib_analysis.history.sources import SourceError, mrt_timestamp, time_from_name

pytestmark = pytest.mark.fuzz

path_text = st.text(alphabet=string.digits + " {},-x", max_size=60) | st.text(max_size=40)


@settings(max_examples=2000, deadline=None)
@given(path_text)
def test_path_hops(text: str) -> None:
    try:
        hops = path_hops(text)
    except ValueError:
        return
    for hop in hops:
        for asn in hop if isinstance(hop, tuple) else (hop,):
            assert 0 <= asn <= 0xFFFFFFFF


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + "._-", max_size=60))
def test_time_from_name(name: str) -> None:
    when = time_from_name(Path(name))
    assert when is None or when.tzinfo is not None


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.binary(max_size=64),
        st.binary(max_size=64).map(lambda b: b"\x1f\x8b" + b),
        st.binary(max_size=64).map(lambda b: b"BZh" + b),
    )
)
def test_mrt_timestamp(tmp_path: Path, data: bytes) -> None:
    f = tmp_path / "dump"
    f.write_bytes(data)
    try:
        when = mrt_timestamp(f)
    except SourceError as exc:
        assert "dump" in str(exc)
    else:
        assert when.tzinfo is not None
