"""How measurements become checks: absent parts are skipped (not failures), a control-plane
state that was already wrong before the cut fails, limits are applied as documented."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mast_lab.realiser import render, with_mast_module
from mast_lab.scenario import Result, ScenarioConfig, _judge
from mast_lab.topology import Bind, NodeSpec


def judged(**measurements: Any) -> dict[str, tuple[str, str]]:
    r = Result("lab", 0.0, {}, "vxlan", "2001:db8::1")
    r.measurements = {
        "stream": {"received": 100, "sent": 100, "lost": 0, "loss_window_s": 0.0},
        "tcp": {"connected": True, "sent": 5, "echoed": 5, "error": None, "longest_stall_s": 0.1},
        "return_to_direct_s": 1.0,
        "hosts_deprecated_s": 0.5,
        "dns_stopped_s": 0.5,
    }
    r.measurements.update(measurements)
    _judge(r, ScenarioConfig())
    return {c.name: (c.status, c.detail) for c in r.checks}


def test_all_pass() -> None:
    assert {s for s, _ in judged().values()} == {"pass"}


def test_absent_parts_are_skipped_not_failed() -> None:
    checks = judged(
        hosts_deprecated_s={"status": "not measured", "absent": ["srms", "kea-hook"]},
        dns_stopped_s={"status": "not measured", "absent": ["knot-module"]},
    )
    assert checks["hosts deprecate A-address"] == ("skipped", "not measured: srms, kea-hook absent")
    assert checks["DNS stops answering A-address"][0] == "skipped"


def test_limits() -> None:
    checks = judged(
        stream={"received": 90, "sent": 200, "lost": 110, "loss_window_s": 1.1},
        hosts_deprecated_s=2.5,
        dns_stopped_s=None,
        return_to_direct_s=None,
    )
    assert checks["loss window"][0] == "fail"
    assert checks["hosts deprecate A-address"][0] == "fail"
    assert checks["DNS stops answering A-address"][0] == "fail"
    assert checks["return to direct path"] == ("fail", "never")


def test_tcp_must_deliver_everything() -> None:
    lost_line = {"connected": True, "sent": 5, "echoed": 4, "error": None, "longest_stall_s": 0}
    assert judged(tcp=lost_line)["TCP survives"][0] == "fail"
    reset = {"connected": True, "sent": 5, "echoed": 5, "error": "reset", "longest_stall_s": 0}
    assert judged(tcp=reset)["TCP survives"][0] == "fail"


def test_state_wrong_before_the_cut_fails() -> None:
    checks = judged(
        dns_stopped_s={"status": "invalid", "why": "no A-address in DNS before the cut"}
    )
    assert checks["DNS stops answering A-address"][0] == "fail"


def test_render_maps_container_paths(tmp_path: Path) -> None:
    spec = NodeSpec("kea", "linux", binds=[Bind(Path("/cfg/kea"), "/etc/mast")])
    text = render(
        spec, '{"s": "/run/mast/kea/x.sock", "f": "/etc/mast/a", "k": "/run/mast-lab"}', tmp_path
    )
    assert text == f'{{"s": "{tmp_path}/kea/x.sock", "f": "/cfg/kea/a", "k": "/run/mast-lab"}}'
    assert (tmp_path / "kea").is_dir()


def test_knot_config_with_module() -> None:
    conf = "key:\n  - id: k\nzone:\n  - domain: z.\n    file: /x/z.zone\n    acl: u\n"
    out = with_mast_module(conf, "/b/mod_mast.so")
    assert "module:\n  - id: mod-mast\n    file: /b/mod_mast.so\n" in out
    assert "    file: /x/z.mast.zone\n    module: mod-mast/default\n" in out
    assert out.index("mod-mast:") < out.index("zone:")
