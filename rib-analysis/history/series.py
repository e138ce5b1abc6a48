"""Month-over-month series over per-snapshot AS tables (pure functions; HISTORY.md is the method).

- totals per snapshot: ASes, stubs, providers, single/multihomed stubs, the largest number of
  stubs one provider serves (the seed's "maximum per-provider stub count");
- provider changes between consecutive snapshots: a stub (a stub in both) whose upstream set
  gains an ASN counts one addition per gained ASN, one deletion per lost ASN (Table 5.2);
- mean provider changes per stub per month by the stub's prefix block size (Fig 5.4).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rib_analysis.history.astable import AsRecord, AsTable

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def month_index(month: str) -> int:
    """Months since year 0 of a 'YYYY-MM' label, so gaps between snapshots are subtractions."""
    m = _MONTH.match(month)
    if not m or not 1 <= int(m.group(2)) <= 12:
        raise ValueError(f"month {month!r} is not YYYY-MM")
    return int(m.group(1)) * 12 + int(m.group(2)) - 1


@dataclass(frozen=True)
class Snapshot:
    """One AS table placed in time: the month it stands for and where it came from."""

    month: str
    table: AsTable
    source: str = ""


@dataclass(frozen=True)
class MonthTotals:
    month: str
    ases: int
    stubs: int
    providers: int
    single_homed: int
    multihomed: int
    max_stubs_per_provider: int
    max_stubs_provider: int | None  # the provider with that many stubs (lowest ASN on a tie)


@dataclass(frozen=True)
class ProviderChanges:
    """Upstream changes of stubs between two consecutive snapshots."""

    month: str
    previous_month: str
    months: int  # calendar months between the two snapshots (1 for consecutive months)
    stubs_compared: int  # stubs in both snapshots
    additions: int
    deletions: int
    stubs_changed: int

    @property
    def changes_per_stub_month(self) -> float:
        if not self.stubs_compared:
            return 0.0
        return (self.additions + self.deletions) / self.stubs_compared / self.months


@dataclass(frozen=True)
class BlockChanges:
    """Provider changes of the stubs whose largest block has this size, over the whole series."""

    family: str  # "ipv4" or "ipv6"
    length: int
    stubs: int  # stub-intervals observed (one stub over one snapshot pair counts once)
    stub_months: int
    changes: int

    @property
    def label(self) -> str:
        return f"/{self.length}" if self.family == "ipv4" else f"v6 /{self.length}"

    @property
    def mean_changes_per_month(self) -> float:
        return self.changes / self.stub_months if self.stub_months else 0.0


@dataclass(frozen=True)
class StubChange:
    """One stub whose upstream set changed between `previous_month` and `month`."""

    month: str
    previous_month: str
    asn: int
    added: tuple[int, ...]
    removed: tuple[int, ...]


@dataclass(frozen=True)
class Series:
    totals: tuple[MonthTotals, ...]
    changes: tuple[ProviderChanges, ...]
    by_block: tuple[BlockChanges, ...]
    # Every changed stub (the rows behind `changes`): exported as Parquet, not put in the JSON.
    stub_changes: tuple[StubChange, ...] = ()

    def summary(self) -> dict[str, float]:
        """Per-month means over the series (the seed's ~1,000-1,450 and ~0.018 comparators)."""
        months = sum(c.months for c in self.changes)
        stub_months = sum(c.stubs_compared * c.months for c in self.changes)
        changes = sum(c.additions + c.deletions for c in self.changes)
        return {
            "months": months,
            "additions_per_month": round(sum(c.additions for c in self.changes) / months, 3)
            if months
            else 0.0,
            "deletions_per_month": round(sum(c.deletions for c in self.changes) / months, 3)
            if months
            else 0.0,
            "changes_per_stub_month": round(changes / stub_months, 6) if stub_months else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "totals": [asdict(t) for t in self.totals],
            "provider_changes": [
                {**asdict(c), "changes_per_stub_month": round(c.changes_per_stub_month, 6)}
                for c in self.changes
            ],
            "changes_by_block": [
                {
                    **asdict(b),
                    "label": b.label,
                    "mean_changes_per_month": round(b.mean_changes_per_month, 6),
                }
                for b in self.by_block
            ],
        }


def stubs_per_provider(table: AsTable) -> Counter[int]:
    """How many stubs name each ASN as an upstream."""
    counts: Counter[int] = Counter()
    for stub in table.stubs():
        counts.update(stub.upstreams)
    return counts


def totals(month: str, table: AsTable) -> MonthTotals:
    stubs = [r for r in table.stubs()]
    per_provider = stubs_per_provider(table)
    top_count = max(per_provider.values(), default=0)
    top = min((asn for asn, n in per_provider.items() if n == top_count), default=None)
    return MonthTotals(
        month=month,
        ases=len(table),
        stubs=len(stubs),
        providers=len(table) - len(stubs),
        single_homed=sum(1 for s in stubs if s.homing_degree == 1),
        multihomed=sum(1 for s in stubs if s.homing_degree > 1),
        max_stubs_per_provider=top_count,
        max_stubs_provider=top,
    )


def block_size(stub: AsRecord) -> tuple[str, int] | None:
    """The stub's prefix block size: its largest IPv4 block, else its largest IPv6 block."""
    if stub.block_v4 is not None:
        return ("ipv4", stub.block_v4)
    if stub.block_v6 is not None:
        return ("ipv6", stub.block_v6)
    return None


def provider_changes(
    before: Snapshot, after: Snapshot, details: list[StubChange] | None = None
) -> tuple[ProviderChanges, Counter[Any]]:
    """Changes between two snapshots, plus per-block (changes, stubs) tallies for `by_block`;
    each changed stub is appended to `details` when given."""
    gap = month_index(after.month) - month_index(before.month)
    if gap <= 0:
        raise ValueError(f"snapshots out of order: {before.month} then {after.month}")
    additions = deletions = changed = compared = 0
    tally: Counter[Any] = Counter()
    for old in before.table.stubs():
        new = after.table.get(old.asn)
        if new is None or not new.is_stub:
            continue
        compared += 1
        if old.upstreams == new.upstreams:  # the common case: sorted tuples, no sets needed
            added = removed = 0
        else:
            old_up, new_up = set(old.upstreams), set(new.upstreams)
            added, removed = len(new_up - old_up), len(old_up - new_up)
            if details is not None and (added or removed):
                details.append(
                    StubChange(
                        after.month,
                        before.month,
                        old.asn,
                        tuple(sorted(new_up - old_up)),
                        tuple(sorted(old_up - new_up)),
                    )
                )
        additions += added
        deletions += removed
        changed += bool(added or removed)
        block = block_size(old)
        if block is not None:
            tally[(block, "changes")] += added + removed
            tally[(block, "stubs")] += 1
            tally[(block, "stub_months")] += gap
    return (
        ProviderChanges(
            month=after.month,
            previous_month=before.month,
            months=gap,
            stubs_compared=compared,
            additions=additions,
            deletions=deletions,
            stubs_changed=changed,
        ),
        tally,
    )


def compute(snapshots: Sequence[Snapshot]) -> Series:
    """The whole series; `snapshots` must be one per month, in any order."""
    ordered = sorted(snapshots, key=lambda s: month_index(s.month))
    for a, b in itertools.pairwise(ordered):
        if a.month == b.month:
            raise ValueError(f"two snapshots for {a.month}: {a.source} and {b.source}")
    changes: list[ProviderChanges] = []
    tally: Counter[Any] = Counter()
    details: list[StubChange] = []
    for a, b in itertools.pairwise(ordered):
        change, pair_tally = provider_changes(a, b, details)
        changes.append(change)
        tally.update(pair_tally)
    blocks = sorted({key[0] for key in tally})
    by_block = tuple(
        BlockChanges(
            family=family,
            length=length,
            stubs=tally[((family, length), "stubs")],
            stub_months=tally[((family, length), "stub_months")],
            changes=tally[((family, length), "changes")],
        )
        for family, length in blocks
    )
    return Series(
        totals=tuple(totals(s.month, s.table) for s in ordered),
        changes=tuple(changes),
        by_block=by_block,
        stub_changes=tuple(details),
    )
