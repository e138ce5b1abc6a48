"""One analysis run: ingest → classify → project, and the stable JSON of `classify`.

The schema is documented in README.md; its `schema` field changes when a field's meaning does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rib_analysis.classify import Classification, FirstHop
from rib_analysis.ingest import FileStats, ProgressHook, ingest
from rib_analysis.ownership import load_ownership, provider_owned
from rib_analysis.projection import Grt, ProviderLoad, provider_loads

SCHEMA = "rib-analysis/classify/1"


@dataclass(frozen=True)
class Analysis:
    files: list[FileStats]
    warnings: list[str]
    first_hop: FirstHop
    classification: Classification
    grt: Grt
    loads: list[ProviderLoad]

    @property
    def entries(self) -> int:
        return sum(f.entries for f in self.files)

    def as_json(self, top: int = 20) -> dict[str, Any]:
        c = self.classification
        grt = self.grt.mast
        busiest = self.loads[0] if self.loads else None
        return {
            "schema": SCHEMA,
            "input": {
                "files": [f.as_json() for f in self.files],
                "first_hop": self.first_hop.value,
                "ownership": self.grt.mast_ownership is not None,
            },
            "entries": self.entries,
            "entries_without_path": sum(f.entries_no_path for f in self.files),
            "prefixes": {
                "total": self.grt.today,
                "ipv4": self.grt.today_v4,
                "ipv6": self.grt.today_v6,
                "without_origin": self.grt.no_origin,
            },
            "ases": {
                "total": c.ases,
                "stubs": c.stubs,
                "providers": c.providers,
                "providers_first_hop_only": c.providers_first_hop_only,
            },
            "stubs_table": c.table.as_json(),
            "homing_degree": {str(k): v for k, v in c.homing.items()},
            "grt": {
                "today": self.grt.today,
                "mast": grt,
                "mast_source": "ownership" if self.grt.mast_ownership is not None else "rib",
                "mast_rib": self.grt.mast_rib,
                "mast_rib_prefixes": self.grt.mast_rib_prefixes,
                "mast_ownership": self.grt.mast_ownership,
                "mast_ownership_prefixes": self.grt.mast_ownership_prefixes,
                "reduction": round(self.grt.reduction, 6),
            },
            "providers": {
                "count": c.providers,
                "with_stubs": len(self.loads),
                "max_stubs": busiest.stubs if busiest else 0,
                "max_stubs_asn": busiest.asn if busiest else None,
                "lima_table": c.providers,
                "table_bounds": {
                    "grt": grt,
                    "max_lower": max((x.lower(grt) for x in self.loads), default=grt),
                    "max_upper": max((x.upper(grt) for x in self.loads), default=grt),
                },
                "top": self.providers_json(top),
            },
            "warnings": self.warnings,
        }

    def providers_json(self, limit: int | None = None) -> list[dict[str, int]]:
        """Providers by stub count (the busiest first), with their table bounds."""
        grt = self.grt.mast
        return [
            {
                "asn": x.asn,
                "stubs": x.stubs,
                "single": x.single,
                "multi": x.multi,
                "degree_sum": x.degree_sum,
                "lower": x.lower(grt),
                "upper": x.upper(grt),
            }
            for x in self.loads[:limit]
        ]


def analyse(
    paths: Sequence[Path],
    *,
    skip_bad: bool = False,
    strict: bool = False,
    first_hop: FirstHop = FirstHop.TRANSIT,
    ownership: Path | None = None,
    progress: ProgressHook | None = None,
) -> Analysis:
    owners = load_ownership(ownership) if ownership is not None else None
    run = ingest(paths, skip_bad=skip_bad, strict=strict, progress=progress)
    summary = run.rib.finish(first_hop is FirstHop.TRANSIT)
    c = Classification.from_native(summary)
    counts = summary["grt"]
    owned = None
    if owners is not None:
        providers = {asn for asn, _flags, provider, *_ in run.rib.as_rows() if provider}
        owned = provider_owned(owners, providers)
    grt = Grt(
        today_v4=counts["v4"],
        today_v6=counts["v6"],
        mast_rib=counts["agg_v4"] + counts["agg_v6"],
        mast_rib_prefixes=counts["mast_v4"] + counts["mast_v6"],
        mast_ownership=owned.aggregates if owned else None,
        mast_ownership_prefixes=owned.prefixes if owned else None,
        no_origin=counts["no_origin"],
    )
    return Analysis(run.files, run.warnings, first_hop, c, grt, provider_loads(summary["loads"]))
