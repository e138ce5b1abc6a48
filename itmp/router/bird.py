"""The BIRD side of the router: one include snippet per BGP neighbour, then `birdc configure`.

The operator's bird.conf carries `include "<include_dir>/*.conf";`; the agent owns that directory.
Confirmed commits use BIRD's own `configure timeout N` / `configure confirm` / `configure undo`,
so BIRD falls back to the old configuration by itself even if the agent dies mid-commit.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from itmp.router.model import Neighbor

SNIPPET_PREFIX = "itmp_"
BASE_SNIPPET = "00-itmp.conf"


class BirdError(RuntimeError):
    """birdc failed or BIRD rejected the configuration; the message carries BIRD's words."""


def _prefix_set(prefixes: tuple[object, ...]) -> str:
    # `+` also admits more-specifics of a delegated prefix (a stub may split its /48).
    return "[ " + ", ".join(f"{p}+" for p in prefixes) + " ]"


def neighbor_snippet(n: Neighbor) -> str:
    lines = [
        "# managed by itmp router-agent: edit through NETCONF (urn:mast:router:1), not by hand",
        f"protocol bgp {n.name} {{",
        f'  description "itmp{" tunnel " + n.tunnel if n.tunnel else ""}";',
        f"  local as {n.local_as};",
        f"  neighbor {n.address} as {n.remote_as};",
        "  direct;",
        # A tunnel session that flapped should come back in seconds, not BIRD's default minute.
        "  connect retry time 5;",
        "  error wait time 1, 30;",
    ]
    if n.tunnel is not None:
        lines.append(f'  interface "{n.tunnel}";')
    if n.hold_time is not None:
        lines.append(f"  hold time {n.hold_time};")
    if n.bfd:
        lines.append("  bfd on;")
    sets = []
    if n.local_pref is not None:
        sets.append(f"bgp_local_pref = {n.local_pref};")
    if n.med is not None:
        sets.append(f"bgp_med = {n.med};")
    if n.import_prefixes:
        imp = (
            f"if net ~ {_prefix_set(n.import_prefixes)} then {{ {' '.join(sets)} accept; }} reject;"
        )
        lines.append(f"  ipv6 {{ import filter {{ {imp} }};")
    else:
        lines.append("  ipv6 { import none;")
    if n.export_prefixes:
        lines.append(
            f"    export filter {{ if net ~ {_prefix_set(n.export_prefixes)} then accept; reject; }}; }};"
        )
    else:
        lines.append("    export none; };")
    lines.append("}")
    return "\n".join(lines) + "\n"


def base_snippet(bfd: bool) -> str:
    text = "# managed by itmp router-agent\n"
    if bfd:
        # GRE and VXLAN have no carrier: BFD is what notices a dead tunnel within a second.
        text += (
            "protocol bfd itmp_bfd {\n"
            '  interface "*" { min rx interval 100 ms; min tx interval 100 ms; multiplier 3; };\n'
            "}\n"
        )
    return text


@dataclass
class BirdControl:
    socket: Path
    include_dir: Path
    timeout: float = 30

    def birdc(self, *command: str) -> str:
        try:
            proc = subprocess.run(
                ["birdc", "-s", str(self.socket), *command],
                capture_output=True,
                text=True,
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            raise BirdError(f"birdc {' '.join(command)}: no answer in {self.timeout} s") from None
        except FileNotFoundError:
            raise BirdError("birdc not found: install the Debian package bird2") from None
        out = proc.stdout + proc.stderr
        if proc.returncode != 0 or "Unable to connect" in out:
            raise BirdError(f"birdc {' '.join(command)}: {out.strip()}")
        return out

    def current_files(self) -> dict[str, str]:
        if not self.include_dir.is_dir():
            return {}
        # Only the agent's own files: anything else in the directory belongs to the operator.
        return {
            p.name: p.read_text()
            for p in self.include_dir.glob("*.conf")
            if p.name == BASE_SNIPPET or p.name.startswith(SNIPPET_PREFIX)
        }

    def write_files(self, wanted: Mapping[str, str], previous: Mapping[str, str]) -> None:
        """Write changed snippets, remove dropped ones; atomic per file (rename)."""
        self.include_dir.mkdir(parents=True, exist_ok=True)
        for name, text in wanted.items():
            if previous.get(name) != text:
                tmp = self.include_dir / f".{name}.tmp"
                tmp.write_text(text)
                tmp.replace(self.include_dir / name)
        for name in previous:
            if name not in wanted:
                with contextlib.suppress(FileNotFoundError):
                    (self.include_dir / name).unlink()

    def configure(self, confirm_timeout: int | None = None) -> str:
        args = (
            ["configure"]
            if confirm_timeout is None
            else ["configure", "timeout", str(confirm_timeout)]
        )
        out = self.birdc(*args)
        if (
            "Reconfigured" not in out
            and "Reconfiguration in progress" not in out
            and "Reconfiguration already in progress" not in out
        ):
            raise BirdError(f"BIRD rejected the configuration: {_bird_words(out)}")
        return out

    def confirm(self) -> None:
        self.birdc("configure", "confirm")

    def undo(self) -> None:
        self.birdc("configure", "undo")

    def protocol_states(self) -> dict[str, str]:
        out = self.birdc("show", "protocols")
        states: dict[str, str] = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[1] == "BGP":
                states[parts[0]] = parts[5] if len(parts) > 5 else parts[3]
        return states


def _bird_words(out: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("BIRD ")]
    return " ".join(lines).strip() or "no answer"


def wanted_files(neighbors: Mapping[str, Neighbor], bfd_protocol: bool) -> dict[str, str]:
    files = {BASE_SNIPPET: base_snippet(bfd_protocol and any(n.bfd for n in neighbors.values()))}
    for n in neighbors.values():
        files[f"{SNIPPET_PREFIX}{n.name}.conf"] = neighbor_snippet(n)
    return files
