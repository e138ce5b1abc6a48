"""Adapter from the snapshot classifier (`rib_analysis.ingest` + the native Rib, METHOD.md) to the
per-AS table.

The history never re-implements decoding or classification: it runs the snapshot analysis on one
dump and keeps, per ASN, the columns the series need. `analyse_file` is a module-level function
(options bound with functools.partial) so Dask ships it to workers by reference.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mast_common.log import get_logger
from rib_analysis.history.astable import AsRecord, AsTable, Role

log = get_logger(__name__)

# Bumped whenever the rows this adapter produces could change for the same bytes: cached
# tables of another version are not reused. 2: rows carry the block columns (before, NULL).
ADAPTER_VERSION = "2"


class SnapshotError(Exception):
    """A dump that cannot be analysed (the message names the file and, when known, the offset)."""


def analyse_file(
    path: str, *, skip_bad: bool = False, strict: bool = False, first_hop: str = "transit"
) -> AsTable:
    from rib_analysis.classify import FirstHop
    from rib_analysis.ingest import MrtDataError, ingest

    try:
        run = ingest([Path(path)], skip_bad=skip_bad, strict=strict)
    except MrtDataError as exc:
        raise SnapshotError(str(exc)) from None
    for warning in run.warnings:
        log.warning("history.snapshot_warning", path=path, warning=warning)
    run.rib.finish(FirstHop(first_hop) is FirstHop.TRANSIT)
    # Per-AS rows: (asn, flags, provider, n_pi, n_pa, upstreams, block_v4, block_v6), the block
    # columns being the shortest prefix length originated per family or None (HISTORY.md §2).
    # A shorter row (an older extension) reads as unknown blocks rather than failing.
    return AsTable.of(
        AsRecord(
            asn=int(row[0]),
            role=Role.PROVIDER if row[2] else Role.STUB,
            upstreams=tuple(sorted(set(row[5]))),
            pi=int(row[3]),
            pa=int(row[4]),
            block_v4=_length(row, 6, 32),
            block_v6=_length(row, 7, 128),
        )
        for row in run.rib.as_rows()
    )


def _length(row: Sequence[Any], index: int, limit: int) -> int | None:
    if len(row) <= index or row[index] is None:
        return None
    value = int(row[index])
    return value if 0 <= value <= limit else None  # out of range = "none" sentinel


def analyser_for(
    *, skip_bad: bool = False, strict: bool = False, first_hop: str = "transit"
) -> tuple[functools.partial[AsTable], str]:
    """The analyser with these options, and the cache key part naming it and them."""
    from rib_analysis.analysis import SCHEMA

    version = (
        f"{SCHEMA};adapter={ADAPTER_VERSION};first_hop={first_hop};skip_bad={int(skip_bad)};"
        f"strict={int(strict)}"
    )
    return functools.partial(
        analyse_file, skip_bad=skip_bad, strict=strict, first_hop=first_hop
    ), version


ANALYSER, ANALYSER_VERSION = analyser_for()
