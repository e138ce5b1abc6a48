"""Feed MRT files through the native decoder into one aggregated RIB.

Policy for damaged input (METHOD.md):
- a file that simply ends early (compressed stream cut, or the MRT stream ends inside a record)
  is *truncated*: what precedes the cut is kept, the file is marked truncated, a warning names
  file and offset; with `strict` it is an error instead;
- a malformed record or damaged compressed data inside the file is *bad*: an error naming file
  and offset, unless `skip_bad`, which counts and skips bad records (and resynchronises on the
  next sane MRT header when a header itself is damaged).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mast_common.log import get_logger
from rib_analysis import _mrt
from rib_analysis.source import (
    COMPRESSION_KIND,
    UnsupportedCompression,
    detect_compression,
    read_offset,
)

log = get_logger(__name__)

ProgressHook = Callable[[str, int, int], None]  # (file name, bytes read, file size)


class MrtDataError(Exception):
    """Bad input: names the file and the byte offset."""


@dataclass(frozen=True)
class Truncation:
    mrt_offset: int  # offset in the decompressed MRT stream where decoding stopped
    detail: str


@dataclass(frozen=True)
class FileStats:
    path: str
    compression: str
    size: int
    mrt_bytes: int
    records: int
    rib_records: int
    entries: int
    entries_no_path: int
    peers: int
    skipped_records: int
    bad_records: int
    resyncs: int
    first_bad: tuple[int, str] | None
    truncated: Truncation | None

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "compression": self.compression,
            "size": self.size,
            "mrt_bytes": self.mrt_bytes,
            "records": self.records,
            "rib_records": self.rib_records,
            "entries": self.entries,
            "peers": self.peers,
            "skipped_records": self.skipped_records,
            "bad_records": self.bad_records,
            "resyncs": self.resyncs,
            "first_bad": None
            if self.first_bad is None
            else {"mrt_offset": self.first_bad[0], "reason": self.first_bad[1]},
            "truncated": None
            if self.truncated is None
            else {"mrt_offset": self.truncated.mrt_offset, "detail": self.truncated.detail},
        }


@dataclass
class Ingest:
    rib: Any = field(default_factory=_mrt.Rib)  # rib_analysis._mrt.Rib
    files: list[FileStats] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def ingest(
    paths: Sequence[Path],
    *,
    skip_bad: bool = False,
    strict: bool = False,
    progress: ProgressHook | None = None,
) -> Ingest:
    result = Ingest()
    for path in paths:
        stats = _ingest_one(result.rib, path, skip_bad, strict, progress)
        result.files.append(stats)
        if stats.truncated:
            msg = (
                f"{path}: truncated at byte offset {stats.truncated.mrt_offset} of the MRT stream "
                f"({stats.truncated.detail}); {stats.entries} entries before it are used"
            )
            result.warnings.append(msg)
            log.info("rib.file_truncated", file=str(path), offset=stats.truncated.mrt_offset)
        if stats.bad_records or stats.resyncs:
            assert stats.first_bad is not None
            msg = (
                f"{path}: skipped {stats.bad_records} bad records and {stats.resyncs} damaged "
                f"headers; first at byte offset {stats.first_bad[0]}: {stats.first_bad[1]}"
            )
            result.warnings.append(msg)
            log.info("rib.bad_records_skipped", file=str(path), count=stats.bad_records)
    return result


def _ingest_one(
    rib: Any, path: Path, skip_bad: bool, strict: bool, progress: ProgressHook | None
) -> FileStats:
    try:
        compression = detect_compression(path)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except UnsupportedCompression as e:
        raise MrtDataError(str(e)) from None
    except OSError as e:
        raise MrtDataError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        size = os.fstat(fd).st_size
        done = threading.Event()
        watcher = None
        if progress is not None:
            watcher = threading.Thread(
                target=_watch, args=(fd, size, path.name, progress, done), daemon=True
            )
            watcher.start()
        try:
            st: dict[str, Any] = rib.feed_file(fd, COMPRESSION_KIND[compression], skip_bad)
        finally:
            done.set()
            if watcher is not None:
                watcher.join()
    finally:
        os.close(fd)
    if st["io_errno"]:
        raise MrtDataError(f"{path}: read error: {os.strerror(st['io_errno'])}")
    z = st.get("decompression") or {"truncated": False, "failed": False}
    first_bad = st["first_bad"]
    if st["stopped"]:
        offset, reason = first_bad
        raise MrtDataError(
            f"{path}: bad MRT record at byte offset {offset} of the MRT stream: {reason} "
            "(--skip-bad skips bad records)"
        )
    truncated: Truncation | None = None
    if z["failed"]:
        where = f"compressed byte offset {z['fail_offset']}"
        if not skip_bad:
            raise MrtDataError(
                f"{path}: {z['error']} in the chunk at {where} (MRT byte offset {st['bytes']}); "
                "--skip-bad keeps what precedes it"
            )
        truncated = Truncation(st["bytes"], f"{z['error']} in the chunk at {where}")
    else:
        details = []
        if z["truncated"]:
            details.append(f"{compression} stream ends without its end marker")
        if st["partial_tail"] is not None:
            details.append(f"last record incomplete, {st['partial_tail'][1]} bytes")
        if details:
            at = st["partial_tail"][0] if st["partial_tail"] is not None else st["bytes"]
            truncated = Truncation(at, "; ".join(details))
            if strict:
                raise MrtDataError(
                    f"{path}: truncated at byte offset {at} of the MRT stream ({truncated.detail})"
                )
    return FileStats(
        path=str(path),
        compression=compression,
        size=size,
        mrt_bytes=st["bytes"],
        records=st["records"],
        rib_records=st["rib_records"],
        entries=st["entries"],
        entries_no_path=st["entries_no_path"],
        peers=st["peers"],
        skipped_records=st["skipped_other"] + st["skipped_afi"],
        bad_records=st["bad_records"],
        resyncs=st["resyncs"],
        first_bad=(first_bad[0], first_bad[1]) if first_bad is not None else None,
        truncated=truncated,
    )


def _watch(fd: int, size: int, name: str, progress: ProgressHook, done: threading.Event) -> None:
    while not done.wait(0.2):
        at = read_offset(fd)
        if at is not None:
            progress(name, at, size)
    progress(name, size, size)
