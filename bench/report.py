"""Generate the performance tables of README.md and docs/performance.md from bench/results.json.

    python bench/report.py            # rewrite the tables between the marker comments
    python bench/report.py --check    # exit 1 if a table differs from what the JSON gives

No figure in those tables is typed by hand: each comes from the JSON that
``bench/run.py`` wrote on a real run (machine and date included).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.json"
SECTIONS = {  # file -> marker name -> renderer
    ROOT / "README.md": {"summary": "summary"},
    ROOT / "docs" / "performance.md": {"rows": "rows", "growth": "growth"},
}


def _num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return ""
    if value != 0 and abs(value) < 0.1:
        return f"{value:.3f}"
    return f"{value:,.{digits}f}"


def _ratio(row: dict[str, Any], key: str) -> str:
    return _num(row["ratio"].get(key))


def _verdict(row: dict[str, Any]) -> str:
    met = row.get("met")
    return "" if met is None else ("met" if met else "**missed**")


def _target(row: dict[str, Any]) -> str:
    t = row.get("target") or {}
    parts = ([f"time ≤ {t['time']:g}"] if t.get("time") is not None else []) + (
        [f"memory ≤ {t['memory']:g}"] if t.get("memory") is not None else [])
    return ", ".join(parts) or "growth"


def provenance(results: dict[str, Any]) -> str:
    """Where and when the figures were measured."""
    m = results["machine"]
    return (
        f"`bench/run.py` ({results['mode']} run, {results['runs']} timed runs per command after a checked run, "
        f"medians), {results['date']}: {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}, kubectl {m['kubectl']}, "
        f"kpt {m['kpt']}; load average {m['load_average_start']:g} at the start, {m['load_average_end']:g} at the end "
        f"(the machine is shared). Targets are judged on {results['judged_on']}."
    )


def render_summary(results: dict[str, Any]) -> str:
    """The README table: every row that carries a target, and each case's growth."""
    lines = [
        f"Measured by {provenance(results)}",
        "",
        "| case | size | reference | target | CPU time ours / ref | memory ours / ref | wall ours / ref | |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in results["rows"]:
        if row.get("met") is None:
            continue
        lines.append(
            f"| {row['case']} | {row['size']} | `{row['reference_command']}` | {_target(row)} | "
            f"**{_ratio(row, 'cpu')}** | {_ratio(row, 'memory')} | {_ratio(row, 'wall')} | {_verdict(row)} |"
        )
    lines.append("")
    lines.extend(_growth_lines(results))
    return "\n".join(lines)


def _growth_lines(results: dict[str, Any]) -> list[str]:
    out = []
    for g in results.get("growth", []):
        steps = ", ".join(f"×{s['size_ratio']:g} input → ×{s['cpu_ratio']:g} CPU" for s in g["steps"])
        verdict = "linear" if g["linear"] else "**not linear**"
        out.append(f"* {g['case']} from {g['from']}: {steps} ({verdict}; limit {g['limit']:g} × the size ratio)")
    return out


def render_rows(results: dict[str, Any]) -> str:
    """The docs table: every row, both sides, with what was checked."""
    lines = [
        f"Measured by {provenance(results)}",
        "",
        "| case | size | MB | ref wall s | our wall s | ref CPU s | our CPU s | CPU ratio | ref MB | our MB | "
        "memory ratio | target | | checked before timing |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in results["rows"]:
        ref, ours = row.get("reference") or {}, row.get("ours") or {}
        lines.append(
            f"| {row['case']} | {row['size']} | {_num(row['megabytes'])} | {_num(ref.get('wall'), 3)} | "
            f"{_num(ours.get('wall'), 3)} | {_num(ref.get('cpu'), 3)} | {_num(ours.get('cpu'), 3)} | "
            f"{_ratio(row, 'cpu')} | {_num(ref.get('rss_mb'), 0) if ref.get('rss_mb') else ''} | "
            f"{_num(ours.get('rss_mb'), 0) if ours.get('rss_mb') else ''} | {_ratio(row, 'memory')} | "
            f"{_target(row)} | {_verdict(row)} | {row['check']} |"
        )
    return "\n".join(lines)


def render_growth(results: dict[str, Any]) -> str:
    return "\n".join(_growth_lines(results))


RENDERERS = {"summary": render_summary, "rows": render_rows, "growth": render_growth}


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the lines between ``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME end -->`` replaced."""
    begin, end = f"<!-- bench:{name} begin -->", f"<!-- bench:{name} end -->"
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"report: markers {begin} / {end} not found")
    return f"{head}{begin}\n{body}\n{end}{tail}"


def rendered(results: dict[str, Any]) -> dict[Path, str]:
    """Every target file's new text."""
    out = {}
    for path, sections in SECTIONS.items():
        text = path.read_text()
        for marker, renderer in sections.items():
            text = replace_section(text, marker, RENDERERS[renderer](results))
        out[path] = text
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when a table is stale")
    parser.add_argument("--results", default=str(RESULTS))
    args = parser.parse_args()
    results = json.loads(Path(args.results).read_text())
    stale = []
    for path, text in rendered(results).items():
        if path.read_text() != text:
            stale.append(path)
            if not args.check:
                path.write_text(text)
    if args.check and stale:
        print("stale tables: " + ", ".join(str(p.relative_to(ROOT)) for p in stale) + "; run python bench/report.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
