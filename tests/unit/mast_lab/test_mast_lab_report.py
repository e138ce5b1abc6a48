from __future__ import annotations

import json
from pathlib import Path

from mast_lab.report import summary_text, write_report
from mast_lab.scenario import Check, Event, Result


def sample_result(failed: bool = False) -> Result:
    r = Result(
        lab="mini",
        started_unix=0.0,
        parts={"srms": {"present": False, "reason": "not built", "path": None}},
        encapsulation="vxlan (static; ITMP absent)",
        target_address="2001:db8:a01:1::101",
    )
    r.events = [Event(0.0, "start"), Event(3.0, "cut r1:eth1"), Event(8.0, "restored r1:eth1")]
    r.series = {
        "received": [[i * 0.01, i] for i in range(1000) if not 300 <= i < 320],
        "lost_sent_at": [i * 0.01 for i in range(300, 320)],
        "path": [[i * 0.02, i * 2, i // 5] for i in range(500)],
        "cut": 3.0,
        "restore": 8.0,
    }
    r.checks = [
        Check("loss window", "fail" if failed else "pass", "0.200 s"),
        Check("DNS stops answering A-address", "skipped", "not measured: srms absent"),
    ]
    return r


def test_summary_says_what_ran_and_what_did_not() -> None:
    text = summary_text(sample_result())
    assert "srms         ABSENT" in text
    assert "SKIPPED  DNS stops answering" in text
    assert "NOT MEASURED" in text
    assert text.endswith("result: ok")
    assert summary_text(sample_result(failed=True)).endswith("result: FAILED")


def test_report_files(tmp_path: Path) -> None:
    paths = write_report(sample_result(), tmp_path)
    data = json.loads(paths["json"].read_text())
    assert data["checks"][0]["status"] == "pass"
    assert data["encapsulation"].startswith("vxlan")
    html = paths["html"].read_text()
    assert 'id="timeline"' in html and "data:image/png;base64," in html
    assert paths["png"].read_bytes().startswith(b"\x89PNG")
