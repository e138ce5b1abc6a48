"""The zone data mod-mast reads, in one place (README.md "Zone data").

- The prefix-status RRset: one APL record (RFC 3123) at the zone apex. Its IPv6 items, in order,
  are the stub's prefixes in preference order; a negated item (`!2:...`) is discouraged; a
  withdrawn prefix is simply absent.
- The host IFID map: apex TXT records of three strings, `"mast-host" "<name>" "<ifid>"`, name
  relative to the zone (or `@`), IFID as `::a:b:c:d`. Knot's module API reads only apex RRsets,
  which is why the map lives at the apex rather than at each host's own name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
from dns.rdtypes.IN.APL import APL
from dns.rdtypes.txtbase import TXTBase
from mast_common.prefix import (
    IPv6Address,
    IPv6Network,
    PrefixError,
    PrefixStatus,
    lima_prefix,
    parse_prefix,
)

HOST_TAG = "mast-host"
MAX_PREFIXES = 32  # the module's limit (status.h MAST_MAX_PREFIXES)

_LIMA = re.compile(r"^AS(\d+):(\d+)$", re.IGNORECASE)
_HOST_NAME = re.compile(r"^(@|[A-Za-z0-9_-]{1,63}(\.[A-Za-z0-9_-]{1,63})*)$")


class ZoneDataError(ValueError):
    """Zone data that mod-mast would reject (names the record and the reason)."""


def prefix_from_text(text: str | IPv6Network) -> IPv6Network:
    """A stub prefix: an IPv6 prefix (at most /64) or a LIMA pair `AS<provider ASN>:<stub number>`.

    LIMA pairs map to a /64 by `mast_common.prefix.lima_prefix` (ASN in the top 32 bits, stub
    number in the next 32); the zone holds the /64, so synthesis is the same for both forms.
    """
    if isinstance(text, IPv6Network):
        return parse_prefix(str(text))
    lima = _LIMA.match(text.strip())
    if lima:
        return lima_prefix(int(lima.group(1)), int(lima.group(2)))
    return parse_prefix(text.strip())


@dataclass(frozen=True)
class StatusEntry:
    prefix: IPv6Network
    status: PrefixStatus  # PREFERRED or DISCOURAGED; WITHDRAWN entries are not stored


def encode_status(entries: list[StatusEntry]) -> dns.rdata.Rdata:
    """The one APL record that carries `entries` in preference order."""
    if len(entries) > MAX_PREFIXES:
        raise ZoneDataError(
            f"{len(entries)} prefixes: the status RRset holds at most {MAX_PREFIXES}"
        )
    seen: set[IPv6Network] = set()
    items = []
    for entry in entries:
        if entry.status is PrefixStatus.WITHDRAWN:
            raise ZoneDataError(f"{entry.prefix}: a withdrawn prefix is left out, not written")
        if entry.prefix in seen:
            raise ZoneDataError(f"{entry.prefix} appears twice in the status RRset")
        if entry.prefix.prefixlen > 64:
            raise ZoneDataError(f"{entry.prefix} is longer than /64: no room for an IFID")
        seen.add(entry.prefix)
        negation = "!" if entry.status is PrefixStatus.DISCOURAGED else ""
        items.append(f"{negation}2:{entry.prefix.network_address}/{entry.prefix.prefixlen}")
    if not items:
        raise ZoneDataError("an empty status RRset is written by deleting it, not as a record")
    return dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.APL, " ".join(items))


def decode_status(
    records: list[dns.rdata.Rdata], *, dropped: list[str] | None = None
) -> list[StatusEntry]:
    """The status entries of an APL RRset, as the module reads them (IPv4 items skipped).

    Strict by default (ZoneDataError, as the module ignores a malformed RRset as a whole); with a
    `dropped` list, bad items are left out and described there instead, so an update can repair
    the record.
    """
    entries: list[StatusEntry] = []
    for record in records:
        if not isinstance(record, APL):
            raise ZoneDataError(f"not an APL record: {record}")
        for item in record.items:
            if item.family == 1:
                continue
            try:
                if item.family != 2:
                    raise ZoneDataError(
                        f"APL item {item}: address family {item.family} is not IPv6"
                    )
                try:
                    prefix = parse_prefix(f"{item.address}/{item.prefix}")
                except PrefixError as exc:
                    raise ZoneDataError(f"APL item {item}: {exc}") from None
            except ZoneDataError as exc:
                if dropped is None:
                    raise
                dropped.append(str(exc))
                continue
            if any(e.prefix == prefix for e in entries):
                if dropped is None:
                    raise ZoneDataError(f"APL item {item}: {prefix} appears twice")
                dropped.append(f"APL item {item}: duplicate")
                continue
            status = PrefixStatus.DISCOURAGED if item.negation else PrefixStatus.PREFERRED
            entries.append(StatusEntry(prefix, status))
    return entries


def status_text(entries: list[StatusEntry]) -> str:
    """The APL rdata in zone-file text, e.g. `2:2001:db8:a::/64 !2:2001:db8:b::/64`."""
    return str(encode_status(entries).to_text())


def ifid_text(ifid: int) -> str:
    if not 0 <= ifid < 1 << 64:
        raise ZoneDataError(f"interface ID {ifid:#x} is wider than 64 bits")
    return str(IPv6Address(ifid))


def host_record_text(name: str, ifid: int) -> str:
    """TXT rdata text of one host map entry: `"mast-host" "h1" "::10"`."""
    check_host_name(name)
    return f'"{HOST_TAG}" "{name}" "{ifid_text(ifid)}"'


def check_host_name(name: str) -> None:
    if not _HOST_NAME.match(name):
        raise ZoneDataError(
            f"host name {name!r}: use a name relative to the zone (labels of letters, digits, "
            "'-' and '_') or '@'"
        )


def decode_host(record: dns.rdata.Rdata) -> tuple[str, int] | None:
    """(name, ifid) of a mast-host TXT record; None for other TXT records."""
    if (
        not isinstance(record, TXTBase)
        or not record.strings
        or record.strings[0] != HOST_TAG.encode()
    ):
        return None
    if len(record.strings) != 3:
        raise ZoneDataError(f"mast-host record {record}: needs exactly name and IFID")
    name = record.strings[1].decode("ascii", "replace")
    check_host_name(name)
    text = record.strings[2].decode("ascii", "replace")
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(IPv6Address(text))
    except ValueError:
        raise ZoneDataError(f"mast-host record {record}: bad IFID {text!r}") from None
    if not text.lower().startswith("0x") and not text.startswith("::"):
        raise ZoneDataError(f"mast-host record {record}: IFID {text!r} must start with '::'")
    if value >= 1 << 64:
        raise ZoneDataError(f"mast-host record {record}: IFID {text!r} wider than 64 bits")
    return name, value


def relative_name(name: str, zone: dns.name.Name) -> str:
    """`name` (relative, or absolute inside `zone`) as the host map writes it."""
    absolute = dns.name.from_text(name, origin=zone)
    if not absolute.is_subdomain(zone):
        raise ZoneDataError(f"{name} is not inside zone {zone}")
    rel = absolute.relativize(zone)
    return "@" if rel == dns.name.empty else str(rel.to_text())
