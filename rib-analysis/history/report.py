"""The history report: report.json (stable schema), report.md and report.html with plots.

Plots are drawn with matplotlib (imported only here, lazily, on the Agg backend) and embedded in
the HTML as PNG data URIs, so the report is one self-contained file.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rib_analysis.history.runner import Outcome, RunStats
from rib_analysis.history.series import Series

SCHEMA = "mast.rib-analysis.history/1"


@dataclass(frozen=True)
class HistoryReport:
    collector: str
    analyser: str
    outcomes: Sequence[Outcome]
    stats: RunStats
    series: Series

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "collector": self.collector,
            "analyser": self.analyser,
            "months": [t.month for t in self.series.totals],
            "snapshots": [
                {
                    "month": o.ref.month,
                    "dump_time": o.ref.dump_time.isoformat(),
                    "path": o.ref.path,
                    "sha256": o.sha256,
                    "cached": o.cached,
                    "seconds": round(o.seconds, 4),
                    "ases": len(o.table),
                }
                for o in self.outcomes
            ],
            "run": {**asdict(self.stats), "wall_seconds": round(self.stats.wall_seconds, 3)},
            "series": self.series.to_dict(),
        }


def write(report: HistoryReport, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    data = report.to_dict()
    paths = [out_dir / "report.json", out_dir / "report.md", out_dir / "report.html"]
    paths[0].write_text(json.dumps(data, indent=2) + "\n")
    paths[1].write_text(markdown(report))
    paths[2].write_text(render_html(report, plots(report.series)))
    return paths


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _rows(series: Series) -> dict[str, tuple[list[str], list[list[Any]]]]:
    return {
        "AS totals per month": (
            [
                "month",
                "ASes",
                "stubs",
                "providers",
                "single-homed",
                "multihomed",
                "max stubs/provider",
                "that provider",
            ],
            [
                [
                    t.month,
                    t.ases,
                    t.stubs,
                    t.providers,
                    t.single_homed,
                    t.multihomed,
                    t.max_stubs_per_provider,
                    "" if t.max_stubs_provider is None else f"AS{t.max_stubs_provider}",
                ]
                for t in series.totals
            ],
        ),
        "Provider additions and deletions (stubs whose upstream set changed)": (
            [
                "month",
                "since",
                "stubs compared",
                "additions",
                "deletions",
                "stubs changed",
                "changes/stub/month",
            ],
            [
                [
                    c.month,
                    c.previous_month,
                    c.stubs_compared,
                    c.additions,
                    c.deletions,
                    c.stubs_changed,
                    f"{c.changes_per_stub_month:.4f}",
                ]
                for c in series.changes
            ],
        ),
        "Mean provider changes per stub per month, by the stub's prefix block size": (
            ["block", "stub-intervals", "stub-months", "changes", "mean/month"],
            [
                [b.label, b.stubs, b.stub_months, b.changes, f"{b.mean_changes_per_month:.4f}"]
                for b in series.by_block
            ],
        ),
    }


def markdown(report: HistoryReport) -> str:
    s = report.stats
    lines = [
        f"# RIB history: {report.collector}",
        "",
        f"{s.snapshots} monthly snapshots ({s.decoded} decoded, {s.cached} from the cache), "
        f"analyser `{report.analyser}`, mode `{s.mode}`, {s.wall_seconds:.1f} s.",
        "",
    ]
    summary = report.series.summary()
    lines += [
        f"Over {summary['months']:g} months: {summary['additions_per_month']:g} provider additions "
        f"and {summary['deletions_per_month']:g} deletions per month, "
        f"{summary['changes_per_stub_month']:.4f} provider changes per stub per month.",
        "",
    ]
    for title, (header, rows) in _rows(report.series).items():
        lines += [f"## {title}", "", *_table(header, rows), ""]
        if not rows:
            lines += ["(none: block sizes are unknown for these snapshots, see HISTORY.md §2)", ""]
    lines += ["## Snapshots", ""]
    lines += _table(
        ["month", "file", "sha256", "cached"],
        [
            [o.ref.month, o.ref.path, o.sha256[:12], "yes" if o.cached else "no"]
            for o in report.outcomes
        ],
    )
    return "\n".join(lines) + "\n"


def plots(series: Series) -> dict[str, bytes]:
    """PNG images by name: growth, changes, by_block, max_stubs."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    months = [t.month for t in series.totals]
    at = list(range(len(months)))  # positions, labelled by month (no categorical axis guessing)
    images: dict[str, bytes] = {}

    def save(name: str, fig: Any) -> None:
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=90)
        plt.close(fig)
        images[name] = buf.getvalue()

    fig, ax = plt.subplots(figsize=(8, 3.6))
    for label, values in (
        ("ASes", [t.ases for t in series.totals]),
        ("stubs", [t.stubs for t in series.totals]),
        ("providers", [t.providers for t in series.totals]),
    ):
        ax.plot(at, values, marker="o", label=label)
    ax.set_title("AS growth (cf. seed Fig 5.3)")
    ax.set_ylabel("ASNs")
    ax.legend()
    ax.set_xticks(at, months, rotation=45)
    save("growth", fig)

    fig, ax = plt.subplots(figsize=(8, 3.6))
    later = [c.month for c in series.changes]
    x = list(range(len(later)))
    ax.bar([i - 0.2 for i in x], [c.additions for c in series.changes], 0.4, label="additions")
    ax.bar([i + 0.2 for i in x], [c.deletions for c in series.changes], 0.4, label="deletions")
    ax.set_xticks(x, later, rotation=45)
    ax.set_title("Provider additions and deletions per month (cf. seed Table 5.2)")
    ax.legend()
    save("changes", fig)

    fig, ax = plt.subplots(figsize=(8, 3.6))
    blocks = list(range(len(series.by_block)))
    ax.bar(blocks, [b.mean_changes_per_month for b in series.by_block])
    ax.set_xticks(blocks, [b.label for b in series.by_block], rotation=45)
    ax.set_title("Mean provider changes per stub per month by prefix block size (cf. Fig 5.4)")
    ax.set_xlabel("largest block the stub originates")
    if not series.by_block:
        ax.text(
            0.5,
            0.5,
            "no block sizes in these snapshots (HISTORY.md)",
            ha="center",
            transform=ax.transAxes,
        )
    save("by_block", fig)

    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(at, [t.max_stubs_per_provider for t in series.totals], marker="o")
    ax.set_title("Largest number of stubs behind one provider")
    ax.set_xticks(at, months, rotation=45)
    save("max_stubs", fig)
    return images


def render_html(report: HistoryReport, images: dict[str, bytes]) -> str:
    e = html.escape
    s = report.stats
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>RIB history: {e(report.collector)}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1100px}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;"
        "text-align:right}th{background:#eee}img{display:block;margin:1em 0;max-width:100%}</style>",
        "</head><body>",
        f"<h1>RIB history: {e(report.collector)}</h1>",
        f"<p>{s.snapshots} monthly snapshots ({s.decoded} decoded, {s.cached} from the cache), "
        f"analyser <code>{e(report.analyser)}</code>, mode <code>{e(s.mode)}</code>, "
        f"{s.wall_seconds:.1f} s.</p>",
    ]
    summary = report.series.summary()
    parts.append(
        f"<p>Over {summary['months']:g} months: {summary['additions_per_month']:g} provider "
        f"additions and {summary['deletions_per_month']:g} deletions per month, "
        f"{summary['changes_per_stub_month']:.4f} provider changes per stub per month.</p>"
    )
    for name, png in images.items():
        data = base64.b64encode(png).decode()
        parts.append(
            f"<img class='plot' id='plot-{name}' alt='{name}' src='data:image/png;base64,{data}'>"
        )
    for title, (header, rows) in _rows(report.series).items():
        parts.append(f"<h2>{e(title)}</h2><table><tr>")
        parts += [f"<th>{e(h)}</th>" for h in header]
        parts.append("</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
        parts.append("</table>")
    parts.append(
        "<h2>Snapshots</h2><table><tr><th>month</th><th>file</th><th>sha256</th><th>cached</th></tr>"
    )
    for o in report.outcomes:
        parts.append(
            f"<tr><td>{e(o.ref.month)}</td><td>{e(o.ref.path)}</td><td>{o.sha256[:12]}</td>"
            f"<td>{'yes' if o.cached else 'no'}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"
