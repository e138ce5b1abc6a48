"""Routing-table projections under MAST/LIMA (the seed's chapter 6).

- GRT under MAST: providers announce only their aggregates, so a prefix stays in the default-free
  zone when a provider originates it and no shorter prefix of that provider covers it (with an
  ownership file: the same rule over the file's prefixes and owners).
- Provider i's table: |GRT| + s_i + 2 m_i <= R_i <= |GRT| + s_i + sum_j n_ij, with s_i its
  single-homed stubs, m_i its multihomed stubs and n_ij the homing degree of multihomed stub j.
- LIMA: one entry per provider ASN.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderLoad:
    asn: int
    single: int  # s_i
    multi: int  # m_i
    degree_sum: int  # sum of n_ij over its multihomed stubs

    @property
    def stubs(self) -> int:
        return self.single + self.multi

    def lower(self, grt: int) -> int:
        return grt + self.single + 2 * self.multi

    def upper(self, grt: int) -> int:
        return grt + self.single + self.degree_sum


@dataclass(frozen=True)
class Grt:
    today_v4: int
    today_v6: int
    mast_rib: int  # provider-originated prefixes no shorter prefix of the same provider covers
    mast_rib_prefixes: int  # every prefix originated (in the RIB) by at least one provider
    mast_ownership: int | None  # mast_rib's rule over a prefix-to-AS ownership file, when given
    mast_ownership_prefixes: int | None
    no_origin: int

    @property
    def today(self) -> int:
        return self.today_v4 + self.today_v6

    @property
    def mast(self) -> int:
        return self.mast_ownership if self.mast_ownership is not None else self.mast_rib

    @property
    def reduction(self) -> float:
        return 1.0 - self.mast / self.today if self.today else 0.0


def provider_loads(native: list[tuple[int, int, int, int]]) -> list[ProviderLoad]:
    """Every provider with at least one stub, most stubs first (ties by ASN)."""
    loads = [ProviderLoad(asn, s, m, d) for asn, s, m, d in native]
    loads.sort(key=lambda x: (-x.stubs, x.asn))
    return loads
