"""Start the real daemons MAST drives (BIRD, Kea, Knot, snmpd) inside a netns `Node`.

Each launcher writes a minimal configuration into the lab's work directory, starts the daemon in
the foreground (so the lab owns its process), and returns once the daemon answers on its control
channel. Callers pass extra configuration text for what their test needs.
"""

from mast_common.daemons.bird import Bird, start_bird
from mast_common.daemons.kea import KeaDhcp6, start_kea_dhcp6
from mast_common.daemons.knot import Knot, start_knot
from mast_common.daemons.snmpd import Snmpd, start_snmpd

__all__ = [
    "Bird",
    "KeaDhcp6",
    "Knot",
    "Snmpd",
    "start_bird",
    "start_kea_dhcp6",
    "start_knot",
    "start_snmpd",
]
