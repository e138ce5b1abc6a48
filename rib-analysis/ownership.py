"""Prefix-to-AS ownership files (pyasn's ipasn format: `prefix/len<TAB>asn`, `;` comments)."""

from __future__ import annotations

import gzip
import ipaddress
from dataclasses import dataclass
from pathlib import Path

# (family width, network address as an int, prefix length) -> owner ASN
Key = tuple[int, int, int]


class OwnershipError(Exception):
    pass


def _parse_prefix(text: str) -> Key:
    addr, _, length = text.partition("/")
    plen = int(length)
    if ":" in addr:
        width, value = 128, int(ipaddress.IPv6Address(addr))
    else:
        parts = [int(x) for x in addr.split(".")]
        if len(parts) != 4 or not all(0 <= x <= 255 for x in parts):
            raise ValueError(f"bad IPv4 address {addr!r}")
        width, value = 32, parts[0] << 24 | parts[1] << 16 | parts[2] << 8 | parts[3]
    if not 0 <= plen <= width:
        raise ValueError(f"bad prefix length {plen}")
    return width, value >> (width - plen) << (width - plen), plen


def load_ownership(path: Path) -> dict[Key, int]:
    """Prefix -> owner ASN. Gzip or plain."""
    owners: dict[Key, int] = {}
    try:
        with path.open("rb") as head:
            gz = head.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rt", encoding="ascii") if gz else path.open(encoding="ascii") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith(";"):
                    continue
                try:
                    prefix, asn = line.split()[:2]
                    owners[_parse_prefix(prefix)] = int(asn)
                except ValueError as e:
                    raise OwnershipError(
                        f"{path}:{lineno}: expected 'prefix/len<TAB>asn': {e}"
                    ) from None
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise OwnershipError(f"{path}: cannot read: {e}") from None
    return owners


@dataclass(frozen=True)
class Owned:
    prefixes: int  # prefixes owned by a provider
    aggregates: int  # ... not covered by a shorter prefix of the same owner


def provider_owned(owners: dict[Key, int], providers: set[int]) -> Owned:
    prefixes = aggregates = 0
    stack: list[Key] = []
    for key in sorted(owners):
        width, addr, plen = key
        while stack:
            w, a, ln = stack[-1]
            if w == width and ln <= plen and addr >> (width - ln) << (width - ln) == a:
                break
            stack.pop()
        asn = owners[key]
        if asn in providers:
            prefixes += 1
            aggregates += all(owners[k] != asn for k in stack)
        stack.append(key)
    return Owned(prefixes, aggregates)
