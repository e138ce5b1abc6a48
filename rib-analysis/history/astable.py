"""The per-snapshot AS table: one row per ASN seen in a RIB snapshot.

This is the unit the history stores, caches and compares month over month. It is produced by the
snapshot classifier (see `classifier`) and holds only what the longitudinal series need, so a
decade of monthly snapshots stays small (tens of thousands of rows each).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple


class Role(StrEnum):
    STUB = "stub"
    PROVIDER = "provider"


class Addressing(StrEnum):
    """How a stub's prefixes relate to its upstreams' (PA = covered by an upstream's prefix)."""

    PI = "pi"
    PA = "pa"
    BOTH = "both"
    NONE = "none"  # originates nothing (a provider seen only in transit, say)

    @classmethod
    def of(cls, pi: int, pa: int) -> Addressing:
        if pi and pa:
            return cls.BOTH
        if pa:
            return cls.PA
        if pi:
            return cls.PI
        return cls.NONE


class AsRecord(NamedTuple):
    """One ASN in one snapshot.

    `upstreams` are the ASNs seen just before this one on paths it originates (sorted);
    `block_v4`/`block_v6` are the lengths of the largest block it originates in each family
    (the shortest prefix length), None when it originates nothing in that family.
    A tuple, not a dataclass: a decade of snapshots is millions of rows, built and shipped
    between processes; `check` validates rows from outside (`AsTable.of` calls it).
    """

    asn: int
    role: Role
    upstreams: tuple[int, ...] = ()
    pi: int = 0
    pa: int = 0
    block_v4: int | None = None
    block_v6: int | None = None

    def check(self) -> AsRecord:
        if not 0 <= self.asn <= 0xFFFFFFFF:
            raise ValueError(f"ASN {self.asn} is outside 0..4294967295")
        if not isinstance(self.role, Role):
            raise ValueError(f"AS{self.asn}: role {self.role!r} is not a Role")
        ups = self.upstreams
        if any(a >= b for a, b in itertools.pairwise(ups)):
            raise ValueError(f"AS{self.asn}: upstreams must be sorted and distinct")
        for name, value, limit in (
            ("block_v4", self.block_v4, 32),
            ("block_v6", self.block_v6, 128),
        ):
            if value is not None and not 0 <= value <= limit:
                raise ValueError(f"AS{self.asn}: {name}={value} is not a prefix length")
        return self

    @property
    def prefixes(self) -> int:
        return self.pi + self.pa

    @property
    def homing_degree(self) -> int:
        return len(self.upstreams)

    @property
    def addressing(self) -> Addressing:
        return Addressing.of(self.pi, self.pa)

    @property
    def is_stub(self) -> bool:
        return self.role is Role.STUB


# Column order of the stored table (DuckDB, Parquet); `addressing` and `homing_degree` are kept
# as columns too so SQL users need not recompute them.
COLUMNS: tuple[str, ...] = (
    "asn",
    "role",
    "upstreams",
    "prefixes",
    "pi",
    "pa",
    "addressing",
    "homing_degree",
    "block_v4",
    "block_v6",
)


@dataclass(frozen=True)
class AsTable:
    """Every ASN of one snapshot, keyed by ASN."""

    rows: Mapping[int, AsRecord] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Iterable[AsRecord], *, check: bool = True) -> AsTable:
        """A table from records; `check=False` only for rows this module wrote (cache, wire)."""
        rows: dict[int, AsRecord] = {}
        for record in records:
            if check:
                record.check()
            if record.asn in rows:
                raise ValueError(f"AS{record.asn} appears twice in one snapshot")
            rows[record.asn] = record
        return cls(dict(sorted(rows.items())))

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[AsRecord]:
        return iter(self.rows.values())

    def __getitem__(self, asn: int) -> AsRecord:
        return self.rows[asn]

    def get(self, asn: int) -> AsRecord | None:
        return self.rows.get(asn)

    def stubs(self) -> Iterator[AsRecord]:
        return (r for r in self.rows.values() if r.role is Role.STUB)

    def providers(self) -> Iterator[AsRecord]:
        return (r for r in self.rows.values() if r.role is Role.PROVIDER)

    def to_columns(self) -> dict[str, list[Any]]:
        """Column lists in `COLUMNS` order (what the store writes)."""
        cols: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        for r in self.rows.values():
            cols["asn"].append(r.asn)
            cols["role"].append(r.role.value)
            cols["upstreams"].append(list(r.upstreams))
            cols["prefixes"].append(r.prefixes)
            cols["pi"].append(r.pi)
            cols["pa"].append(r.pa)
            cols["addressing"].append(r.addressing.value)
            cols["homing_degree"].append(r.homing_degree)
            cols["block_v4"].append(r.block_v4)
            cols["block_v6"].append(r.block_v6)
        return cols

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]]) -> AsTable:
        """Rebuild from stored rows in `COLUMNS` order (derived columns are ignored)."""
        roles = {r.value: r for r in Role}
        return cls.of(
            (
                AsRecord(asn, roles[role], tuple(upstreams or ()), pi, pa, b4, b6)
                for asn, role, upstreams, _prefixes, pi, pa, _addr, _deg, b4, b6 in rows
            ),
            check=False,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (Dask results) as plain tuples: far smaller and faster than enum members.
        flat = [(r[0], r[1].value, r[2], r[3], r[4], r[5], r[6]) for r in self.rows.values()]
        return (_unpickle, (flat,))


def _unpickle(flat: list[tuple[Any, ...]]) -> AsTable:
    roles = {r.value: r for r in Role}
    return AsTable.of(
        (AsRecord(a, roles[role], u, pi, pa, b4, b6) for a, role, u, pi, pa, b4, b6 in flat),
        check=False,
    )
