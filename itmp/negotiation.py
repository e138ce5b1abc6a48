"""Choosing the tunnel encapsulation both routers support, and saying why."""

from __future__ import annotations

from collections.abc import Iterable

from itmp.protocol import ErrorCode, ProtocolError
from itmp.router.model import ENCAPSULATION_PREFERENCE, Encapsulation


def parse_encapsulations(names: Iterable[str]) -> list[Encapsulation]:
    """Known encapsulation names in the peer's list; unknown ones are ignored (newer peers)."""
    out = []
    for n in names:
        try:
            out.append(Encapsulation(n))
        except ValueError:
            continue
    return out


def negotiate(
    stub: Iterable[Encapsulation], provider: Iterable[Encapsulation]
) -> tuple[Encapsulation, str]:
    """The most preferred encapsulation (GRE, then VXLAN) that both routers support, with the reason."""
    s, p = set(stub), set(provider)
    skipped: list[str] = []
    for encap in ENCAPSULATION_PREFERENCE:
        if encap in s and encap in p:
            why = f"{encap.value}: best common encapsulation"
            if skipped:
                why += " (" + "; ".join(skipped) + ")"
            return encap, why
        missing = [
            side for side, have in (("stub router", s), ("provider router", p)) if encap not in have
        ]
        skipped.append(f"{encap.value} not supported by {' and '.join(missing)}")
    raise ProtocolError(
        ErrorCode.NO_COMMON_ENCAPSULATION,
        "no common encapsulation: "
        + "; ".join(skipped)
        + f" (stub: {','.join(sorted(e.value for e in s)) or 'none'},"
        + f" provider: {','.join(sorted(e.value for e in p)) or 'none'})",
    )
