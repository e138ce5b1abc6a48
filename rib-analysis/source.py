"""What kind of file an MRT dump is, and how far the decoder has read it.

Decompression itself runs in the native module (a libbz2/zlib thread feeding the decoder through
a pipe); this side only opens the file and watches its offset for the progress bar.
"""

from __future__ import annotations

from pathlib import Path

from rib_analysis import _mrt

COMPRESSION_KIND = {
    "none": _mrt.COMPRESSION_NONE,
    "gz": _mrt.COMPRESSION_GZIP,
    "bz2": _mrt.COMPRESSION_BZIP2,
}


class UnsupportedCompression(Exception):
    pass


def detect_compression(path: Path) -> str:
    """'bz2', 'gz' or 'none', from the magic bytes (file names lie)."""
    with path.open("rb") as f:
        head = f.read(4)
    if head[:3] == b"BZh":
        return "bz2"
    if head[:2] == b"\x1f\x8b":
        return "gz"
    if head == b"\x28\xb5\x2f\xfd":
        raise UnsupportedCompression(f"{path}: zstd-compressed; decompress it with `zstd -d` first")
    return "none"


def read_offset(fd: int) -> int | None:
    """The file offset of fd as the native reader advances it (Linux /proc), or None."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as f:
            for line in f:
                if line.startswith("pos:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None
