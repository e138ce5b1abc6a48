"""Fuzz mod-mast's zone-data parsing: the status RRset (APL rdata) and the host IFID map (TXT).

The harness (dns-plugins/fuzz/fuzz_status.c, ASan + UBSan) runs the module's own parser and view
code; hypothesis feeds it random and structured rdata. Random input must never crash it;
well-formed input must give exactly the addresses a Python model of the zone data predicts.
"""

from __future__ import annotations

import ipaddress
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HARNESS_TIMEOUT = 20


@pytest.fixture(scope="module")
def harness(build_dir: Path) -> Path:
    path = build_dir / "dns-plugins" / "mast_fuzz_status"
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/build")
    return path


Case = tuple[list[bytes], list[bytes]]


def encode(cases: list[Case]) -> bytes:
    out = bytearray()
    for apl, txt in cases:
        for rdataset in (apl, txt):
            out += struct.pack("!H", len(rdataset))
            for rdata in rdataset:
                out += struct.pack("!H", len(rdata)) + rdata
    return bytes(out)


def run(harness: Path, cases: list[Case], *, lima: bool = False) -> list[str]:
    result = subprocess.run(
        [str(harness), *(["--lima"] if lima else [])],
        input=encode(cases),
        capture_output=True,
        timeout=HARNESS_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
    lines = result.stdout.decode().splitlines()
    assert len(lines) == len(cases)
    return lines


def apl_item(prefix: ipaddress.IPv6Network, negated: bool) -> bytes:
    afd = prefix.network_address.packed.rstrip(b"\0")
    return struct.pack("!HBB", 2, prefix.prefixlen, (0x80 if negated else 0) | len(afd)) + afd


def txt(*strings: bytes) -> bytes:
    return b"".join(bytes([len(s)]) + s for s in strings)


prefixes = st.builds(
    lambda bits, length: ipaddress.IPv6Network((bits >> (128 - length) << (128 - length), length)),
    st.integers(0, (1 << 128) - 1),
    st.integers(0, 64),
)
labels = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=20)
host_names = st.lists(labels, min_size=1, max_size=3).map(".".join)
ifids = st.integers(0, (1 << 64) - 1)
raw = st.binary(max_size=80)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.lists(raw, max_size=4), st.lists(raw, max_size=6)), min_size=1, max_size=40
    )
)
def test_random_rdata_never_crashes(harness: Path, cases: list[Case]) -> None:
    run(harness, cases)
    run(harness, cases, lima=True)


# Near-valid rdata finds more edges than pure noise: valid items with one field bent.
bent_apl = st.builds(
    lambda family, length, flags, afd: struct.pack("!HBB", family, length, flags) + afd,
    st.sampled_from([1, 2, 3, 0, 0xFFFF]),
    st.integers(0, 255),
    st.integers(0, 255),
    st.binary(max_size=20),
)
bent_txt = st.builds(
    lambda name, ifid, extra: txt(b"mast-host", name, ifid, *extra),
    st.binary(max_size=70) | host_names.map(str.encode),
    st.binary(max_size=50)
    | st.sampled_from([b"::1", b"0x", b"0xfffffffffffffffff", b"::1:2:3:4:5", b"1::"]),
    st.lists(st.binary(max_size=5), max_size=1),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.lists(st.lists(bent_apl, max_size=5).map(b"".join), max_size=3),
            st.lists(bent_txt, max_size=8),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_bent_rdata_never_crashes(harness: Path, cases: list[Case]) -> None:
    run(harness, cases)


def parse_line(line: str) -> dict[str, str]:
    return dict(field.split("=", 1) for field in line.split(" "))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(prefixes, st.booleans()), max_size=8, unique_by=lambda p: p[0]),
    st.dictionaries(host_names, ifids, max_size=10),
)
def test_wellformed_zone_data_gives_the_model_answer(
    harness: Path, status: list[tuple[ipaddress.IPv6Network, bool]], hosts: dict[str, int]
) -> None:
    hosts = {name: ifid for name, ifid in hosts.items() if name == name.lower()}
    apl = [b"".join(apl_item(p, neg) for p, neg in status)] if status else []
    records = sorted(
        {
            txt(b"mast-host", name.encode(), str(ipaddress.IPv6Address(ifid)).encode())
            for name, ifid in hosts.items()
        }
    )
    records.append(txt(b"v=spf1 -all"))  # other TXT records at the apex are not hosts
    (line,) = run(harness, [(apl, records)])
    got = parse_line(line)
    assert got["status"] == ("0" if status else "-1")
    shown = [p for p in got["prefixes"].split(",") if p]
    assert [(ipaddress.IPv6Network(p.lstrip("!")), p.startswith("!")) for p in shown] == status
    assert int(got["hosts"]) == len(hosts) and got["host_errors"] == "0"
    # The harness prints each host's answer in canonical (sorted rdata) order of the map.
    active = [p for p, neg in status if not neg] or [p for p, _ in status]
    by_record = {
        txt(b"mast-host", n.encode(), str(ipaddress.IPv6Address(i)).encode()): i
        for n, i in hosts.items()
    }
    expected = [
        ipaddress.IPv6Address(int(p.network_address) | by_record[rec])
        for rec in sorted(by_record)
        for p in (active if status else [])
    ]
    answer = [ipaddress.IPv6Address(a) for a in got["answer"].split(",") if a]
    assert answer == expected
