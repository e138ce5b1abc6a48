"""The DuckDB history store, the content-hash cache and the serial runner (no decoder needed:
the analyser here is a stand-in that counts its calls)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from rib_analysis.history.astable import AsRecord, AsTable, Role
from rib_analysis.history.runner import SERIAL, analyse_all
from rib_analysis.history.sources import SnapshotRef
from rib_analysis.history.store import Store, StoreError, content_hash

TABLE = AsTable.of(
    [
        AsRecord(1, Role.PROVIDER),
        AsRecord(4200000000, Role.PROVIDER),
        AsRecord(10, Role.STUB, (1, 4200000000), pi=2, pa=1, block_v4=20, block_v6=32),
        AsRecord(11, Role.STUB, (1,), pa=1, block_v6=48),
    ]
)


def test_content_hash_streams(tmp_path: Path) -> None:
    f = tmp_path / "big"
    data = bytes(range(256)) * 20000  # > one read chunk
    f.write_bytes(data)
    assert content_hash(f) == hashlib.sha256(data).hexdigest()


def test_put_get_round_trip_and_parquet(tmp_path: Path) -> None:
    src = tmp_path / "rib.bz2"
    src.write_bytes(b"x")
    with Store(tmp_path / "h.duckdb") as store:
        assert store.lookup("abc", "v1") is None
        store.put("abc", "v1", src, 0.5, TABLE)
        store.put("abc", "v1", src, 0.7, TABLE)  # replacing does not duplicate rows
        assert store.lookup("abc", "v2") is None  # another analyser version is another key
        cached = store.lookup("abc", "v1")
        assert cached is not None and cached.ases == 4 and cached.seconds == 0.7
        assert store.get("abc", "v1") == TABLE
        ref = SnapshotRef(datetime(2012, 12, 5, tzinfo=UTC), "route-views2", str(src))
        as_file, snap_file = store.export_parquet(tmp_path / "pq", "v1", [(ref, "abc")])
    rows = pq.read_table(as_file).to_pylist()
    assert [r["asn"] for r in rows] == [1, 10, 11, 4200000000]
    stub = rows[1]
    assert stub["month"] == "2012-12" and stub["collector"] == "route-views2"
    assert stub["upstreams"] == [1, 4200000000] and stub["homing_degree"] == 2
    assert (stub["addressing"], stub["prefixes"], stub["block_v4"], stub["block_v6"]) == (
        "both",
        3,
        20,
        32,
    )
    (snap,) = pq.read_table(snap_file).to_pylist()
    assert snap["sha256"] == "abc" and snap["ases"] == 4 and snap["source"] == str(src)
    # The database is plain DuckDB: SQL users get the same table.
    con = duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM as_table WHERE role = 'stub'").fetchone() == (2,)
    con.close()


def test_schema_version_checked(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    Store(db).close()
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    con.close()
    with pytest.raises(StoreError, match="schema 99"):
        Store(db)


def test_not_a_database(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    db.write_text("not duckdb")
    with pytest.raises(StoreError, match=r"h.duckdb: cannot open"):
        Store(db)


CALLS: list[str] = []


def counting_analyser(path: str) -> AsTable:
    CALLS.append(Path(path).name)
    return TABLE


def test_second_run_decodes_nothing(tmp_path: Path) -> None:
    refs = []
    for i, month in enumerate(("2012-01", "2012-02", "2012-03")):
        f = tmp_path / f"rib.{i}"
        f.write_bytes(b"month %d" % i)
        refs.append(SnapshotRef(datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC), "c", str(f)))
    twin = tmp_path / "copy-of-rib.0"  # same bytes under another name: decoded once
    twin.write_bytes(b"month 0")
    refs.append(SnapshotRef(datetime(2012, 4, 1, tzinfo=UTC), "c", str(twin)))
    CALLS.clear()
    with Store(tmp_path / "h.duckdb") as store:
        outcomes, stats = analyse_all(refs, store, counting_analyser, "t1", mode=SERIAL)
    assert sorted(CALLS) == ["rib.0", "rib.1", "rib.2"]
    assert (stats.decoded, stats.snapshots) == (3, 4)
    assert [o.table for o in outcomes] == [TABLE] * 4
    CALLS.clear()
    with Store(tmp_path / "h.duckdb") as store:
        outcomes, stats = analyse_all(refs, store, counting_analyser, "t1", mode=SERIAL)
    assert CALLS == [] and stats.decoded == 0 and stats.cached == 4
    assert all(o.cached for o in outcomes)
    # Another analyser version decodes again.
    with Store(tmp_path / "h.duckdb") as store:
        _outcomes, stats = analyse_all(refs[:1], store, counting_analyser, "t2", mode=SERIAL)
    assert CALLS == ["rib.0"] and stats.decoded == 1


def test_second_writer_gets_a_clear_error(tmp_path: Path) -> None:
    """DuckDB has one writer: a second process is told so, not left waiting or crashing."""
    import subprocess
    import sys

    db = tmp_path / "h.duckdb"
    probe = (
        "import sys\nfrom pathlib import Path\nfrom rib_analysis.history.store import Store, StoreError\n"
        f"try:\n    Store(Path({str(db)!r}))\nexcept StoreError as e:\n    print(e)\n    sys.exit(3)\n"
    )
    with Store(db):
        proc = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
        )
    assert proc.returncode == 3, proc.stderr
    assert "cannot open the history database" in proc.stdout and "lock" in proc.stdout
