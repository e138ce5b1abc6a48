"""The failover report: a printed timeline and summary, JSON, and an HTML page with a plot."""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
from pathlib import Path
from typing import Any

from mast_lab.scenario import Result

MARK = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIPPED"}


def summary_text(result: Result) -> str:
    lines = [f"MAST failover lab {result.lab}: target {result.target_address}"]
    lines.append(f"backup tunnel encapsulation: {result.encapsulation}")
    lines.append("parts:")
    for name, info in result.parts.items():
        state = "present" if info["present"] else "ABSENT"
        lines.append(f"  {name:12} {state}" + (f" ({info['reason']})" if info["reason"] else ""))
    lines.append("timeline:")
    lines.extend(f"  {e.t:8.3f} s  {e.what}" for e in result.events)
    lines.append("summary:")
    for check in result.checks:
        lines.append(f"  {MARK[check.status]:8} {check.name}: {check.detail}")
    skipped = [c.name for c in result.checks if c.status == "skipped"]
    if skipped:
        lines.append(
            "  *** NOT MEASURED (parts absent, not counted as failures): " + "; ".join(skipped)
        )
    for note in result.notes:
        lines.append(f"  note: {note}")
    lines.append("result: " + ("FAILED" if result.failed else "ok"))
    return "\n".join(lines)


def timeline_png(result: Result) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = result.series
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    received = s.get("received", [])
    if received:
        ax1.plot([r[0] for r in received], [r[1] for r in received], ".", ms=2, label="received")
    lost = s.get("lost_sent_at", [])
    if lost:
        ax1.plot(lost, [0] * len(lost), "|", color="red", ms=12, label="lost (send time)")
    ax1.set_ylabel("stream sequence number")
    ax1.set_title(f"{result.lab}: stream to {result.target_address}")
    path = s.get("path", [])
    if len(path) > 1:
        # Rates over 100 ms bins: the 10 ms samples alone are mostly scheduling jitter.
        bins: list[list[float]] = []
        for sample in path:
            if not bins or sample[0] - bins[-1][0] >= 0.1:
                bins.append(list(sample))
        t = [b[0] for b in bins[1:]]
        for col, label in ((1, "direct link"), (2, "backup tunnel")):
            rate = [
                max(0.0, (b[col] - a[col]) / (b[0] - a[0])) for a, b in itertools.pairwise(bins)
            ]
            ax2.plot(t, rate, label=label)
    ax2.set_ylabel("provider tx (packets/s)")
    ax2.set_xlabel("seconds since start")
    for ax in (ax1, ax2):
        for key, color in (("cut", "red"), ("restore", "green")):
            if key in s:
                ax.axvline(s[key], color=color, ls="--", lw=1)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def html_page(result: Result, png: bytes) -> str:
    rows = "".join(
        f"<tr class='{c.status}'><td>{MARK[c.status]}</td><td>{html.escape(c.name)}</td>"
        f"<td>{html.escape(c.detail)}</td></tr>"
        for c in result.checks
    )
    events = "".join(
        f"<tr><td>{e.t:.3f} s</td><td>{html.escape(e.what)}</td></tr>" for e in result.events
    )
    parts = "".join(
        f"<li>{html.escape(n)}: {'present' if i['present'] else 'absent'} "
        f"{html.escape(i['reason'])}</li>"
        for n, i in result.parts.items()
    )
    img = base64.b64encode(png).decode()
    verdict = "FAILED" if result.failed else "ok"
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>MAST failover: {html.escape(result.lab)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; }} td {{ padding: 2px 10px; border-bottom: 1px solid #ddd; }}
.pass td:first-child {{ color: #080; }} .fail td:first-child {{ color: #c00; font-weight: bold; }}
.skipped td:first-child {{ color: #a60; font-weight: bold; }}
</style></head><body>
<h1>MAST failover lab {html.escape(result.lab)}: {verdict}</h1>
<p>Stream and TCP connection from the remote host to {html.escape(result.target_address)};
backup tunnel: {html.escape(result.encapsulation)}.</p>
<img id="timeline" alt="failover timeline plot" src="data:image/png;base64,{img}">
<h2>Summary</h2><table>{rows}</table>
<h2>Timeline</h2><table>{events}</table>
<h2>Parts</h2><ul>{parts}</ul>
</body></html>
"""


def write_report(result: Result, outdir: Path) -> dict[str, Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = result.to_json()
    json_path = outdir / "failover.json"
    json_path.write_text(json.dumps(data, indent=2))
    png = timeline_png(result)
    png_path = outdir / "failover-timeline.png"
    png_path.write_bytes(png)
    html_path = outdir / "failover.html"
    html_path.write_text(html_page(result, png))
    return {"json": json_path, "html": html_path, "png": png_path}
