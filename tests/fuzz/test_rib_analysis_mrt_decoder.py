"""Fuzz the native MRT decoder with mutated valid records: it must never crash or hang, and
its counters must stay consistent whatever it is fed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rib_analysis import _mrt

pytestmark = pytest.mark.fuzz

WRITER = Path(__file__).resolve().parents[1] / "unit" / "rib_analysis" / "mrt_writer.py"
_spec = importlib.util.spec_from_file_location("rib_mrt_writer", WRITER)
assert _spec and _spec.loader
W = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(W)
SEED = W.known_rib()
# A >64 KB record and a long AS_PATH with extended-length attributes, so mutations reach them.
BIG = W.rib_v2(7, "10.7.0.0/16", [(0, W.attrs([W.C, *range(70000, 70400), 1234]))] * 40)

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(0, 255)),
    st.tuples(st.just("cut"), st.integers(0, 1 << 20), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.integers(0, 255)),
    st.tuples(st.just("drop"), st.integers(0, 1 << 20), st.integers(1, 16)),
)


def mutate(data: bytes, ops: list[tuple[str, int, int]]) -> bytes:
    buf = bytearray(data)
    for op, at, val in ops:
        if not buf:
            break
        i = at % len(buf)
        if op == "flip":
            buf[i] = val
        elif op == "cut":
            del buf[i:]
        elif op == "insert":
            buf[i:i] = bytes([val])
        else:
            del buf[i : i + val]
    return bytes(buf)


def check(data: bytes, skip_bad: bool) -> None:
    rib = _mrt.Rib()
    stats = rib.feed_bytes(data, skip_bad)
    assert stats["bytes"] == len(data)
    assert stats["rib_records"] <= stats["records"]
    if stats["stopped"]:
        assert not skip_bad and stats["first_bad"] is not None
        assert 0 <= stats["first_bad"][0] < len(data)
    if stats["partial_tail"] is not None:
        at, n = stats["partial_tail"]
        assert at + n == len(data)
    summary = rib.finish(skip_bad)
    grt, ases = summary["grt"], summary["ases"]
    assert grt["mast_v4"] <= grt["v4"] and grt["mast_v6"] <= grt["v6"]
    assert ases["stubs"] + ases["providers"] == ases["total"]
    stubs = sum(summary["single"]) + sum(summary["multi"]) + summary["no_upstream"]
    assert stubs == ases["stubs"] == sum(summary["homing"].values())
    for _asn, _flags, provider, n_pi, n_pa, _ups, block_v4, block_v6 in rib.as_rows():
        assert not provider or (n_pi == 0 and n_pa == 0)
        assert block_v4 is None or 0 <= block_v4 <= 32
        assert block_v6 is None or 0 <= block_v6 <= 128


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([SEED, BIG + SEED]), st.lists(mutation, min_size=1, max_size=8), st.booleans()
)
def test_mutated_records_never_crash(
    base: bytes, ops: list[tuple[str, int, int]], skip_bad: bool
) -> None:
    check(mutate(base, ops), skip_bad)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096), st.booleans())
def test_random_bytes_never_crash(data: bytes, skip_bad: bool) -> None:
    check(data, skip_bad)
