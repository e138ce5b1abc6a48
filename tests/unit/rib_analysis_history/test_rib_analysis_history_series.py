"""The month-over-month series over hand-built AS tables: every number known in advance."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rib_analysis.history.astable import Addressing, AsRecord, AsTable, Role
from rib_analysis.history.series import (
    BlockChanges,
    MonthTotals,
    ProviderChanges,
    Snapshot,
    StubChange,
    compute,
    month_index,
)

P, S = Role.PROVIDER, Role.STUB


def table(
    *stubs: tuple[int, tuple[int, ...], int | None], providers: tuple[int, ...] = (1, 2, 3, 4)
) -> AsTable:
    rows = [AsRecord(p, P) for p in providers]
    rows += [AsRecord(asn, S, ups, pi=1, block_v4=block) for asn, ups, block in stubs]
    return AsTable.of(rows)


JAN = table((10, (1,), 24), (11, (1, 2), 22), (12, (2,), 24), (13, (3, 4), None))
# Feb: 10 gains 2; 11 loses 1; 13 swaps 4 for 1; a new stub 14 appears.
FEB = table((10, (1, 2), 24), (11, (2,), 22), (12, (2,), 24), (13, (1, 3), None), (14, (3,), 16))
# Apr (two months later): 12 disappears, 11 becomes a provider, 14 gains 1 and 4.
APR = AsTable.of(
    [*table((10, (1, 2), 24), (13, (1, 3), None), (14, (1, 3, 4), 16)), AsRecord(11, P)]
)


def test_series_exact() -> None:
    series = compute([Snapshot("2011-04", APR), Snapshot("2011-01", JAN), Snapshot("2011-02", FEB)])
    assert series.totals == (
        MonthTotals("2011-01", 8, 4, 4, 2, 2, 2, 1),
        MonthTotals("2011-02", 9, 5, 4, 3, 2, 3, 2),
        MonthTotals("2011-04", 8, 3, 5, 0, 3, 3, 1),
    )
    assert series.changes == (
        ProviderChanges("2011-02", "2011-01", 1, 4, additions=2, deletions=2, stubs_changed=3),
        ProviderChanges("2011-04", "2011-02", 2, 3, additions=2, deletions=0, stubs_changed=1),
    )
    assert series.changes[0].changes_per_stub_month == pytest.approx(4 / 4)
    assert series.changes[1].changes_per_stub_month == pytest.approx(2 / 3 / 2)
    # Blocks are the stub's size at the earlier snapshot; stub 13 has no IPv4 block: left out.
    assert series.by_block == (
        BlockChanges("ipv4", 16, stubs=1, stub_months=2, changes=2),
        BlockChanges("ipv4", 22, stubs=1, stub_months=1, changes=1),
        BlockChanges("ipv4", 24, stubs=3, stub_months=4, changes=1),
    )
    assert series.by_block[2].mean_changes_per_month == pytest.approx(0.25)
    assert series.stub_changes == (
        StubChange("2011-02", "2011-01", 10, added=(2,), removed=()),
        StubChange("2011-02", "2011-01", 11, added=(), removed=(1,)),
        StubChange("2011-02", "2011-01", 13, added=(1,), removed=(4,)),
        StubChange("2011-04", "2011-02", 14, added=(1, 4), removed=()),
    )
    # 6 changes over 4 stub-months (Jan->Feb) + 3 stubs x 2 months (Feb->Apr).
    assert series.summary() == {
        "months": 3,
        "additions_per_month": 1.333,
        "deletions_per_month": 0.667,
        "changes_per_stub_month": 0.6,
    }
    data = series.to_dict()
    assert data["changes_by_block"][0]["label"] == "/16"
    assert data["provider_changes"][1]["changes_per_stub_month"] == pytest.approx(1 / 3, abs=1e-6)


def test_ipv6_block_used_when_no_ipv4() -> None:
    a = AsTable.of([AsRecord(1, P), AsRecord(2, P), AsRecord(9, S, (1,), pa=1, block_v6=48)])
    b = AsTable.of([AsRecord(1, P), AsRecord(2, P), AsRecord(9, S, (2,), pa=1, block_v6=48)])
    series = compute([Snapshot("2020-12", a), Snapshot("2021-01", b)])
    assert series.changes[0].months == 1
    assert series.by_block == (BlockChanges("ipv6", 48, 1, 1, 2),)
    assert series.by_block[0].label == "v6 /48"


def test_one_snapshot_has_no_changes() -> None:
    series = compute([Snapshot("2012-12", JAN)])
    assert len(series.totals) == 1 and series.changes == () and series.by_block == ()


def test_two_snapshots_in_one_month_rejected() -> None:
    with pytest.raises(ValueError, match="two snapshots for 2011-01"):
        compute([Snapshot("2011-01", JAN, "a"), Snapshot("2011-01", FEB, "b")])


@pytest.mark.parametrize("bad", ["2011-13", "2011-1", "11-01", "2011-00", ""])
def test_month_labels_checked(bad: str) -> None:
    with pytest.raises(ValueError, match="not YYYY-MM"):
        month_index(bad)


def test_record_checks() -> None:
    with pytest.raises(ValueError, match="sorted and distinct"):
        AsTable.of([AsRecord(5, S, (2, 1))])
    with pytest.raises(ValueError, match="sorted and distinct"):
        AsRecord(5, S, (1, 1)).check()
    with pytest.raises(ValueError, match="prefix length"):
        AsRecord(5, S, (1,), block_v4=33).check()
    with pytest.raises(ValueError, match="prefix length"):
        AsRecord(5, S, (1,), block_v6=129).check()
    with pytest.raises(ValueError, match="outside"):
        AsRecord(1 << 32, S).check()
    with pytest.raises(ValueError, match="not a Role"):
        AsRecord(5, "stub").check()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="twice"):
        AsTable.of([AsRecord(5, S), AsRecord(5, P)])
    assert AsRecord(5, S, (1, 2), pi=2, pa=1).addressing is Addressing.BOTH
    assert AsRecord(5, S, (1,), pa=1).addressing is Addressing.PA
    assert AsRecord(5, S, (1,), pi=1).addressing is Addressing.PI
    assert AsRecord(5, P).addressing is Addressing.NONE


def test_table_round_trips_through_columns_and_pickle() -> None:
    cols = FEB.to_columns()
    rows = list(zip(*(cols[c] for c in cols), strict=True))
    assert AsTable.from_rows(rows) == FEB
    assert cols["homing_degree"][cols["asn"].index(10)] == 2
    again = pickle.loads(pickle.dumps(APR))
    assert again == APR and all(r.role in (P, S) and type(r.role) is Role for r in again)


stub_sets = st.dictionaries(
    st.integers(100, 120), st.frozensets(st.integers(1, 6), min_size=1, max_size=4), max_size=15
)


@settings(max_examples=60, deadline=None)
@given(before=stub_sets, after=stub_sets)
def test_additions_minus_deletions_is_the_net_upstream_change(
    before: dict[int, frozenset[int]], after: dict[int, frozenset[int]]
) -> None:
    """Property: over stubs in both snapshots, additions - deletions = Σ|new| - Σ|old|."""

    def as_table(stubs: dict[int, frozenset[int]]) -> AsTable:
        return AsTable.of(
            [AsRecord(p, P) for p in range(1, 7)]
            + [AsRecord(a, S, tuple(sorted(u)), pi=1, block_v4=24) for a, u in stubs.items()]
        )

    series = compute([Snapshot("2000-01", as_table(before)), Snapshot("2000-02", as_table(after))])
    both = before.keys() & after.keys()
    change = series.changes[0]
    assert change.stubs_compared == len(both)
    assert change.additions - change.deletions == sum(len(after[a]) - len(before[a]) for a in both)
    assert change.stubs_changed == sum(1 for a in both if after[a] != before[a])
    assert sum(b.changes for b in series.by_block) == change.additions + change.deletions
