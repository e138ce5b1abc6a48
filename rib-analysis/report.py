"""report.html (tables + SVG plots inline), report.json and report.md for one analysis.

matplotlib is imported here only, so `classify` never pays for it.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

from rib_analysis.analysis import Analysis


def write_report(result: Analysis, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = result.as_json(top=20)
    full = dict(doc)
    full["providers_all"] = result.providers_json()
    paths = [out_dir / "report.json", out_dir / "report.md", out_dir / "report.html"]
    paths[0].write_text(json.dumps(full, indent=2) + "\n")
    paths[1].write_text(markdown(doc))
    paths[2].write_text(html_page(doc, plots(result)))
    return paths


def _files(doc: dict[str, Any]) -> str:
    return ", ".join(Path(f["path"]).name for f in doc["input"]["files"])


def markdown(doc: dict[str, Any]) -> str:
    a, g, p, t = doc["ases"], doc["grt"], doc["providers"], doc["stubs_table"]
    lines = [
        "# RIB analysis",
        "",
        f"Input: {_files(doc)} — {doc['entries']:,} RIB entries, {doc['prefixes']['total']:,} prefixes.",
        "",
        f"ASes: {a['total']:,} = {a['stubs']:,} stubs + {a['providers']:,} providers.",
        "",
        "## Stubs by homing and addressing (Table 6.1)",
        "",
        "| | PI | PA | both | total |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in ("single", "multi"):
        r = t[kind]
        lines.append(
            f"| {kind}-homed | {r['pi']:,} | {r['pa']:,} | {r['both']:,} | {r['total']:,} |"
        )
    lines += [
        "",
        "## Routing-table projections",
        "",
        f"- GRT today: {g['today']:,} prefixes",
        f"- GRT under MAST: {g['mast']:,} ({g['mast_source']}), a {g['reduction']:.1%} reduction",
        f"- LIMA table: {p['lima_table']:,} entries (provider ASNs)",
        f"- Largest per-provider stub count: {p['max_stubs']:,} (AS{p['max_stubs_asn']})",
        f"- Provider tables: |GRT| + s_i + 2 m_i ≤ R_i ≤ |GRT| + s_i + Σ n_ij; largest bounds "
        f"{p['table_bounds']['max_lower']:,} .. {p['table_bounds']['max_upper']:,}",
        "",
        "| provider | stubs | single | multi | lower | upper |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| AS{x['asn']} | {x['stubs']:,} | {x['single']:,} | {x['multi']:,} | {x['lower']:,} | {x['upper']:,} |"
        for x in p["top"]
    ]
    if doc["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in doc["warnings"]]
    return "\n".join(lines) + "\n"


def plots(result: Analysis) -> dict[str, str]:
    """Inline SVG documents, by name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: dict[str, str] = {}

    def svg(fig: Any) -> str:
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        plt.close(fig)
        text = buf.getvalue()
        return text[text.index("<svg") :]

    table = result.classification.table
    fig, ax = plt.subplots(figsize=(6, 3.5))
    kinds = ["pi", "pa", "both"]
    single = [table.single[k] for k in table.single]
    multi = [table.multi[k] for k in table.multi]
    xs = range(len(kinds))
    ax.bar([x - 0.2 for x in xs], single, width=0.4, label="single-homed")
    ax.bar([x + 0.2 for x in xs], multi, width=0.4, label="multihomed")
    ax.set_xticks(list(xs), [k.upper() if k != "both" else "both" for k in kinds])
    ax.set_ylabel("stub ASes")
    ax.set_title("Stubs by homing and addressing (Table 6.1)")
    ax.legend()
    out["stubs"] = svg(fig)

    grt = result.grt.mast
    loads = result.loads
    fig, ax = plt.subplots(figsize=(7, 4))
    ranks = list(range(1, len(loads) + 1))
    # R_i - |GRT|: the GRT term is the same for every provider and would flatten the curves.
    ax.plot(ranks, [x.upper(grt) - grt for x in loads], label="upper bound: s_i + Σ_j n_ij")
    ax.plot(ranks, [x.lower(grt) - grt for x in loads], label="lower bound: s_i + 2 m_i")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("provider rank (by number of stubs)")
    ax.set_ylabel(f"entries on top of |GRT| = {grt:,}")
    ax.set_title("Per-provider routing tables under MAST (Fig 6.4)")
    ax.legend()
    out["providers"] = svg(fig)

    degrees = result.classification.homing
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(list(range(len(degrees))), list(degrees.values()))
    ax.set_xticks(list(range(len(degrees))), [str(k) for k in degrees])
    ax.set_yscale("log")
    ax.set_xlabel("upstream providers")
    ax.set_ylabel("stub ASes")
    ax.set_title("Homing degree of stubs")
    out["homing"] = svg(fig)
    return out


def html_page(doc: dict[str, Any], figures: dict[str, str]) -> str:
    md = markdown(doc)
    e = html.escape
    a, g, p, t = doc["ases"], doc["grt"], doc["providers"], doc["stubs_table"]
    rows = "".join(
        f"<tr><th>{k}-homed</th>"
        + "".join(f"<td>{t[k][c]:,}</td>" for c in ("pi", "pa", "both", "total"))
        + "</tr>"
        for k in ("single", "multi")
    )
    top = "".join(
        f"<tr><td>AS{x['asn']}</td><td>{x['stubs']:,}</td><td>{x['single']:,}</td><td>{x['multi']:,}</td>"
        f"<td>{x['lower']:,}</td><td>{x['upper']:,}</td></tr>"
        for x in p["top"]
    )
    warnings = "".join(f"<li>{e(w)}</li>" for w in doc["warnings"])
    figs = "".join(
        f'<figure class="plot" id="plot-{e(k)}">{v}</figure>' for k, v in figures.items()
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>RIB analysis — {e(_files(doc))}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1100px; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #bbb; padding: 0.3em 0.7em; text-align: right; }}
figure.plot svg {{ max-width: 100%; height: auto; }}
</style></head><body>
<h1>RIB analysis</h1>
<p>Input: {e(_files(doc))} — {doc["entries"]:,} RIB entries, {doc["prefixes"]["total"]:,} prefixes.
ASes: {a["total"]:,} = {a["stubs"]:,} stubs + {a["providers"]:,} providers.</p>
<h2>Stubs by homing and addressing (Table 6.1)</h2>
<table id="stubs-table"><tr><th></th><th>PI</th><th>PA</th><th>both</th><th>total</th></tr>{rows}</table>
<h2>Routing-table projections</h2>
<table id="projections">
<tr><th>GRT today</th><td>{g["today"]:,}</td></tr>
<tr><th>GRT under MAST ({e(g["mast_source"])})</th><td>{g["mast"]:,}</td></tr>
<tr><th>reduction</th><td>{g["reduction"]:.1%}</td></tr>
<tr><th>LIMA table (provider ASNs)</th><td>{p["lima_table"]:,}</td></tr>
<tr><th>largest per-provider stub count</th><td>{p["max_stubs"]:,} (AS{p["max_stubs_asn"]})</td></tr>
</table>
<h2>Plots</h2>
{figs}
<h2>Providers with the most stubs</h2>
<table id="providers"><tr><th>provider</th><th>stubs</th><th>single</th><th>multi</th>
<th>lower bound</th><th>upper bound</th></tr>{top}</table>
{"<h2>Warnings</h2><ul>" + warnings + "</ul>" if warnings else ""}
<!-- markdown twin: report.md ({len(md)} bytes) -->
</body></html>
"""
