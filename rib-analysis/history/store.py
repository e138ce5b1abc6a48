"""The history database: per-snapshot AS tables in one embedded DuckDB file, Parquet on demand.

Snapshots are keyed by the sha256 of the dump's bytes and the analyser version, so the same dump
under another name or path is not decoded twice, and a new classifier version re-decodes. The
`snapshots` row is written in the same transaction as the AS rows, after them: an interrupted run
leaves no half-cached snapshot.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb
import pyarrow as pa
from rib_analysis.history.astable import COLUMNS, AsTable
from rib_analysis.history.series import StubChange
from rib_analysis.history.sources import SnapshotRef

SCHEMA_VERSION = 1
_CHUNK = 1 << 20

_ARROW_SCHEMA = pa.schema(
    [
        ("asn", pa.uint32()),
        ("role", pa.string()),
        ("upstreams", pa.list_(pa.uint32())),
        ("prefixes", pa.int32()),
        ("pi", pa.int32()),
        ("pa", pa.int32()),
        ("addressing", pa.string()),
        ("homing_degree", pa.int32()),
        ("block_v4", pa.int8()),
        ("block_v6", pa.int16()),
    ]
)

_DDL = [
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    """CREATE TABLE IF NOT EXISTS snapshots (
        sha256 VARCHAR, analyser VARCHAR, path VARCHAR, size UBIGINT,
        analysed_at TIMESTAMPTZ, seconds DOUBLE, ases INTEGER,
        PRIMARY KEY (sha256, analyser))""",
    """CREATE TABLE IF NOT EXISTS as_table (
        sha256 VARCHAR, analyser VARCHAR, asn UINTEGER, role VARCHAR, upstreams UINTEGER[],
        prefixes INTEGER, pi INTEGER, pa INTEGER, addressing VARCHAR, homing_degree INTEGER,
        block_v4 TINYINT, block_v6 SMALLINT)""",
]


class StoreError(Exception):
    """The database cannot be opened or is not a history database of this version."""


def content_hash(path: Path) -> str:
    """sha256 of the file's bytes, read in 1 MiB chunks (constant memory)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Cached:
    sha256: str
    path: str
    seconds: float
    ases: int


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(path))
        except duckdb.Error as exc:
            raise StoreError(f"{path}: cannot open the history database: {exc}") from exc
        for ddl in _DDL:
            self.con.execute(ddl)
        row = self.con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self.con.execute("INSERT INTO meta VALUES ('schema', ?)", [str(SCHEMA_VERSION)])
        elif row[0] != str(SCHEMA_VERSION):
            raise StoreError(
                f"{path}: history database schema {row[0]}, this version reads {SCHEMA_VERSION}"
            )

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def lookup(self, sha256: str, analyser: str) -> Cached | None:
        row = self.con.execute(
            "SELECT path, seconds, ases FROM snapshots WHERE sha256 = ? AND analyser = ?",
            [sha256, analyser],
        ).fetchone()
        return None if row is None else Cached(sha256, row[0], float(row[1]), int(row[2]))

    def put(self, sha256: str, analyser: str, path: Path, seconds: float, table: AsTable) -> None:
        incoming = pa.Table.from_pydict(table.to_columns(), schema=_ARROW_SCHEMA)
        self.con.begin()
        try:
            self.con.execute(
                "DELETE FROM as_table WHERE sha256 = ? AND analyser = ?", [sha256, analyser]
            )
            self.con.register("incoming", incoming)
            self.con.execute(
                f"INSERT INTO as_table SELECT ?, ?, {', '.join(COLUMNS)} FROM incoming",
                [sha256, analyser],
            )
            self.con.unregister("incoming")
            self.con.execute(
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    sha256,
                    analyser,
                    str(path),
                    path.stat().st_size,
                    datetime.now(UTC),
                    seconds,
                    len(table),
                ],
            )
            self.con.commit()
        except BaseException:
            self.con.rollback()
            raise

    def get(self, sha256: str, analyser: str) -> AsTable:
        rows = self.con.execute(
            f"SELECT {', '.join(COLUMNS)} FROM as_table WHERE sha256 = ? AND analyser = ? "
            "ORDER BY asn",
            [sha256, analyser],
        ).fetchall()
        return AsTable.from_rows(rows)

    def export_parquet(
        self, out_dir: Path, analyser: str, snapshots: Sequence[tuple[SnapshotRef, str]]
    ) -> list[Path]:
        """as_table.parquet and snapshots.parquet for the snapshots of one series."""
        out_dir.mkdir(parents=True, exist_ok=True)
        run = pa.Table.from_pydict(
            {
                "sha256": [sha for _ref, sha in snapshots],
                "month": [ref.month for ref, _sha in snapshots],
                "collector": [ref.collector for ref, _sha in snapshots],
                "dump_time": [ref.dump_time for ref, _sha in snapshots],
                "source": [ref.path for ref, _sha in snapshots],
            }
        )
        self.con.register("run", run)
        try:
            as_file, snap_file = out_dir / "as_table.parquet", out_dir / "snapshots.parquet"
            cols = ", ".join(f"a.{c}" for c in COLUMNS)
            self._copy(
                f"SELECT r.month, r.collector, a.sha256, {cols} FROM as_table a "
                "JOIN run r USING (sha256) WHERE a.analyser = $analyser ORDER BY r.month, a.asn",
                as_file,
                analyser,
            )
            self._copy(
                "SELECT r.month, r.collector, r.dump_time, r.source, s.sha256, s.size, s.seconds, "
                "s.ases FROM run r JOIN snapshots s USING (sha256) WHERE s.analyser = $analyser "
                "ORDER BY r.month",
                snap_file,
                analyser,
            )
        finally:
            self.con.unregister("run")
        return [as_file, snap_file]

    def _copy(self, query: str, target: Path, analyser: str) -> None:
        # COPY takes no parameters in its target, and the path is ours: quote it as a literal.
        literal = "'" + str(target).replace("'", "''") + "'"
        params: dict[str, Any] = {"analyser": analyser}
        self.con.execute(f"COPY ({query}) TO {literal} (FORMAT PARQUET)", params)


def write_stub_changes(path: Path, changes: Sequence[StubChange]) -> Path:
    """stub_changes.parquet: one row per stub whose upstream set changed, per month."""
    import pyarrow.parquet as pq

    table = pa.Table.from_pydict(
        {
            "month": [c.month for c in changes],
            "previous_month": [c.previous_month for c in changes],
            "asn": [c.asn for c in changes],
            "added": [list(c.added) for c in changes],
            "removed": [list(c.removed) for c in changes],
        },
        schema=pa.schema(
            [
                ("month", pa.string()),
                ("previous_month", pa.string()),
                ("asn", pa.uint32()),
                ("added", pa.list_(pa.uint32())),
                ("removed", pa.list_(pa.uint32())),
            ]
        ),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path
