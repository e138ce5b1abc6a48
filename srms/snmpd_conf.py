"""The snmpd.conf snippet operators deploy on border routers (also used by the tests).

net-snmp's `linkUpDownNotifications yes` polls ifOperStatus only every 60 s; explicit `monitor
-r 1` lines poll every second. Debian's snmpd ships without MIB files, so every object is
numeric. The notifications carry ifIndex, ifAdminStatus, ifOperStatus and ifName, so SRMS maps
them by ifIndex or by interface name without querying the router back. snmpd's monitors query
the agent itself as an internal SNMPv3 user (`iquerySecName`), which must exist read-only.
"""

from __future__ import annotations

from dataclasses import dataclass

LINK_UP = ".1.3.6.1.6.3.1.1.5.4"
LINK_DOWN = ".1.3.6.1.6.3.1.1.5.3"
IF_INDEX = ".1.3.6.1.2.1.2.2.1.1"
IF_ADMIN_STATUS = ".1.3.6.1.2.1.2.2.1.7"
IF_OPER_STATUS = ".1.3.6.1.2.1.2.2.1.8"
IF_NAME = ".1.3.6.1.2.1.31.1.1.1.1"


@dataclass(frozen=True)
class V3Sink:
    user: str
    auth_key: str
    priv_key: str
    auth_protocol: str = "SHA"
    priv_protocol: str = "AES"
    engine_id: str | None = None  # hex, for traps: must equal the router's in srms.toml
    inform: bool = False


def snippet(
    sink: str,
    *,
    community: str | None = None,
    v3: V3Sink | None = None,
    interval: int = 1,
    internal_user: str = "srmsInternal",
    with_ifname: bool = True,
) -> str:
    """snmpd.conf lines sending linkDown/linkUp for every interface to `sink` (udp6:[addr]:port)."""
    lines = [
        "# --- SRMS: linkDown/linkUp within ~1 s (numeric OIDs: no MIB files needed)",
        f"createUser {internal_user}",
        f"rouser {internal_user} noauth",
        f"iquerySecName {internal_user}",
        f"agentSecName {internal_user}",
    ]
    if community is not None:
        lines.append(f"trap2sink {sink} {community}")
    if v3 is not None:
        kind = "-Ci " if v3.inform else ""
        engine = f"-e 0x{v3.engine_id} " if v3.engine_id and not v3.inform else ""
        lines.append(
            f"trapsess -v3 {kind}{engine}-u {v3.user} -l authPriv -a {v3.auth_protocol}"
            f" -A {v3.auth_key} -x {v3.priv_protocol} -X {v3.priv_key} {sink}"
        )
    # Without ifName (stock linkUp/linkDown contents) SRMS needs if_index, or [snmp] get_community.
    objects = f"{IF_INDEX} {IF_ADMIN_STATUS} {IF_OPER_STATUS}" + (
        f" {IF_NAME}" if with_ifname else ""
    )
    lines += [
        f"notificationEvent srmsLinkUp {LINK_UP} {objects}",
        f"notificationEvent srmsLinkDown {LINK_DOWN} {objects}",
        # ifOperStatus 2 = down; the boolean test fires on each change, per interface.
        f'monitor -r {interval} -e srmsLinkUp "srmsLinkUp" {IF_OPER_STATUS} != 2',
        f'monitor -r {interval} -e srmsLinkDown "srmsLinkDown" {IF_OPER_STATUS} == 2',
    ]
    return "\n".join(lines) + "\n"
