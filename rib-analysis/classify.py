"""Stub/provider classification, homing and PI/PA (METHOD.md), as summarised by the native side.

The native `finish` cleans nothing further: it applies the rules to its aggregated tables and
returns counts; this module gives them names and types.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# Flags of a native AS row (rib_table.h), as returned by Rib.as_rows().
AS_ORIGIN = 1
AS_FIRST_HOP = 2
AS_MIDDLE = 4


class FirstHop(StrEnum):
    """How an ASN seen in non-origin position only as the first ASN (a collector peer) counts."""

    TRANSIT = "transit"  # like any non-origin position: the seed's rule (default)
    ORIGIN_ONLY = "origin-only"  # an AS that also originates prefixes stays a stub


class Addressing(StrEnum):
    PI = "pi"
    PA = "pa"
    BOTH = "both"


@dataclass(frozen=True)
class StubsTable:
    """Table 6.1 of the seed: stubs by homing and addressing."""

    single: dict[Addressing, int]
    multi: dict[Addressing, int]
    no_upstream: int  # stubs only ever seen as the whole path (a collector peer originating)

    def as_json(self) -> dict[str, object]:
        def row(r: dict[Addressing, int]) -> dict[str, int]:
            return {a.value: r[a] for a in Addressing} | {"total": sum(r.values())}

        return {
            "single": row(self.single),
            "multi": row(self.multi),
            "no_upstream": self.no_upstream,
        }


@dataclass(frozen=True)
class Classification:
    ases: int
    stubs: int
    providers: int
    providers_first_hop_only: int  # seen in non-origin position only as a collector's peer
    table: StubsTable
    homing: dict[int, int]  # stubs by number of upstream providers (0 = none seen)

    @classmethod
    def from_native(cls, summary: dict[str, Any]) -> Classification:
        a = summary["ases"]
        order = (Addressing.PI, Addressing.PA, Addressing.BOTH)
        table = StubsTable(
            dict(zip(order, summary["single"], strict=True)),
            dict(zip(order, summary["multi"], strict=True)),
            summary["no_upstream"],
        )
        return cls(
            ases=a["total"],
            stubs=a["stubs"],
            providers=a["providers"],
            providers_first_hop_only=a["first_hop_only"],
            table=table,
            homing=dict(sorted(summary["homing"].items())),
        )
