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
    ROOT / "docs" / "performance.md": {"rows": "rows", "growth": "growth", "real-update": "real_update",
                                       "cold-fetch": "cold_fetch", "fleet-update": "fleet_update"},
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
    return ", ".join(parts) or t.get("note") or "growth"


def provenance(results: dict[str, Any]) -> str:
    """Where and when the figures were measured."""
    m = results["machine"]
    return (
        f"`bench/run.py` ({results['mode']} run, {results['runs']} timed runs per command after a checked run, "
        f"medians), {results['date']}: {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}, kubectl {m['kubectl']}, "
        f"kpt {m['kpt']}; load average {m['load_average_start']:g} at the start, {m['load_average_end']:g} at the end "
        f"(the machine is shared). Targets are judged on {results['judged_on']}."
        + "".join(_remeasured(p) for p in results.get("remeasured", []))
    )


def _remeasured(partial: dict[str, Any]) -> str:
    """A case re-measured on its own (``bench/run.py --only CASES --merge``): its rows' own date and load."""
    m = partial["machine"]
    return (f" Rows of `{','.join(partial['cases'])}` re-measured by `bench/run.py --only {','.join(partial['cases'])} "
            f"--merge` ({partial['runs']} timed runs per command), {partial['date']}; load average "
            f"{m['load_average_start']:g} at the start, {m['load_average_end']:g} at the end.")


def render_summary(results: dict[str, Any]) -> str:
    """The README table: every row that carries a target, and each case's growth."""
    lines = [
        f"Measured by {provenance(results)}",
        "",
        "| case | size | reference | target | CPU time ours / ref | memory ours / ref | wall ours / ref | |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    real = results.get("real_update")
    if real:
        lines.append(_real_summary_row(real))
    fleet = results.get("fleet_update")
    if fleet:
        lines.append(_fleet_summary_row(fleet))
    for row in results["rows"]:
        if row.get("met") is None:
            continue
        lines.append(
            f"| {row['case']} | {row['size']} | `{row['reference_command']}` | {_target(row)} | "
            f"**{_ratio(row, 'cpu')}** | {_ratio(row, 'memory')} | {_ratio(row, 'wall')} | {_verdict(row)} |"
        )
    lines.append("")
    if real:
        lines.extend([f"First row: {_real_provenance(real)}", ""])
        lines.extend(_review_summary(real))
    if fleet:
        lines.extend([f"Fleet row: {_fleet_provenance(fleet)}", ""])
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


def _real_sums(rows: list[dict[str, Any]]) -> dict[str, float]:
    keys = ("kpt", "ours", "kpt_cpu", "ours_cpu", "resources", "written", "identical")
    out: dict[str, float] = {k: sum(r[k] for r in rows) for k in keys}
    out["noop"], out["noop_cpu"] = max(r["noop"] for r in rows), max(r["noop_cpu"] for r in rows)
    for key in REVIEW_KEYS:  # recorded since issue 33 (the review diff, cold caches)
        out[key] = sum(r[key] for r in rows) if all(key in r for r in rows) else None  # type: ignore[assignment]
    return out


REVIEW_KEYS = ("upstream_lines", "kpt_lines", "ours_lines", "kpt_cold", "ours_cold")


def _reviewed(real: dict[str, Any]) -> bool:
    """Whether the run recorded the review diff and the cold-cache times (bench runs since issue 33)."""
    return all(key in r for r in real["rows"] for key in REVIEW_KEYS)


def _real_met(real: dict[str, Any]) -> bool:
    """Issue 24's targets (wall ratio on every package and on the sum, the slowest no-op) and, when the run
    recorded them, issue 33's as the issue states them: the warm wall ratio "stays" at most ``warm_ratio`` (the
    sum, the figure the issue quoted), cold caches at most ``cold_ratio`` on every package, our review diff no
    longer than kpt's on every package and, summed, at most ``diff_ratio`` x upstream's own change.  The
    stricter reading, warm on every package, is :func:`_warm_missed` (shown beside this verdict)."""
    target, rows = real["targets"], real["rows"]
    total = _real_sums(rows)
    met = (all(r["ours"] / r["kpt"] <= target["wall_ratio"] for r in rows)
           and total["ours"] / total["kpt"] <= target["wall_ratio"] and total["noop"] <= target["noop_seconds"]
           and not any(r["wrong"] for r in rows))
    if not _reviewed(real) or "diff_ratio" not in target:
        return met
    return (met and total["ours"] / total["kpt"] <= target["warm_ratio"]
            and all(r["ours_cold"] / r["kpt_cold"] <= target["cold_ratio"] for r in rows)
            and all(r["ours_lines"] <= r["kpt_lines"] for r in rows)
            and total["ours_lines"] <= target["diff_ratio"] * total["upstream_lines"])


def _warm_missed(real: dict[str, Any]) -> list[str]:
    """The packages whose warm wall ratio is over ``warm_ratio`` (the stricter reading: every package)."""
    target = real["targets"]
    if "warm_ratio" not in target:
        return []
    return [r["package"] for r in real["rows"] if r["ours"] / r["kpt"] > target["warm_ratio"]]


def _real_verdict(real: dict[str, Any]) -> str:
    """Issue 33's verdict, then the stricter per-package warm reading."""
    text = f"Targets {'met' if _real_met(real) else '**missed**'}."
    if _reviewed(real) and "diff_ratio" in real["targets"]:
        missed = _warm_missed(real)
        text += (f" Warm ≤ {real['targets']['warm_ratio']:g} on every package (stricter than the issue): "
                 + ("met." if not missed else f"**missed** on {len(missed)} of {len(real['rows'])} "
                    "(why: below the table)."))
    return text


def _when_and_where(run: dict[str, Any]) -> str:
    """A recorded run's date, machine and load."""
    m = run["machine"]
    return (f"{run['date']}: {m['cpus']} CPUs, Python {m['python']}, kpt {m['kpt']}; load average "
            f"{m['load_average_start']:g} at the start, {m['load_average_end']:g} at the end (the machine is shared).")


def _real_provenance(real: dict[str, Any]) -> str:
    target = real["targets"]
    judged = (f"Judged on wall time (ratio ≤ {target['wall_ratio']:g} on every package and on the sum, "
              f"no-op ≤ {target['noop_seconds']:g} s")
    if _reviewed(real) and "diff_ratio" in target:
        judged += (f"; warm ≤ {target['warm_ratio']:g} in sum, as issue 33 measured it, and cold caches "
                   f"≤ {target['cold_ratio']:g} on every package) "
                   f"and on the review diff (ours ≤ kpt's on every package, in all ≤ {target['diff_ratio']:g} × "
                   "upstream's own change)")
    else:
        judged += ")"
    return (f"`bench/cases_real_update.py --record` ({real['runs']} alternating runs per package, medians), "
            f"{_when_and_where(real)} {judged}; CPU time is the steadier figure on a busy machine.")


def _real_summary_row(real: dict[str, Any]) -> str:
    total = _real_sums(real["rows"])
    worst = max(r["ours"] / r["kpt"] for r in real["rows"])
    target = real["targets"]
    return (f"| update, real packages | {len(real['rows'])} kpt-fetched packages, {int(total['resources'])} resources "
            f"| `kpt pkg update` | wall ≤ {target['wall_ratio']:g} (each and sum), no-op ≤ {target['noop_seconds']:g} s "
            f"| {_num(total['ours_cpu'] / total['kpt_cpu'])} | | **{_num(total['ours'] / total['kpt'])}** "
            f"(slowest package {_num(worst)}; no-op {_num(total['noop'])} s) | {'met' if _real_met(real) else '**missed**'} |")


def _review_summary(real: dict[str, Any]) -> list[str]:
    """The README's sentence on the review diff of the real packages (a run that recorded it)."""
    if not _reviewed(real):
        return []
    t = _real_sums(real["rows"])
    return [f"Review diff of those updates (lines `diff -rN` shows against the package before the update): "
            f"upstream's own change {int(t['upstream_lines']):,} lines, kpt's update {int(t['kpt_lines']):,}, "
            f"krm-merge's **{int(t['ours_lines']):,}** ({_num(t['ours_lines'] / t['upstream_lines'])} × upstream's); "
            f"first update with empty git caches: krm-merge {_num(t['ours_cold'])} s, kpt {_num(t['kpt_cold'])} s "
            f"(**{_num(t['ours_cold'] / t['kpt_cold'])}**).", ""]


def render_real_update(results: dict[str, Any]) -> str:
    """The docs table of the real-package update bench: the sum first, then each package."""
    real = results.get("real_update")
    if not real:
        return "No recorded run: `python bench/cases_real_update.py ... --record bench/results.json`."
    reviewed = _reviewed(real)
    lines = [
        f"Measured by {_real_provenance(real)} {_real_verdict(real)}",
        "",
        "| package | resources | kpt wall | krm-merge wall | ratio | kpt CPU | krm-merge CPU | ratio "
        "| no-op wall (CPU) | files written (byte-identical to kpt) |"
        + (" cold: kpt | cold: krm-merge | ratio | diff lines: upstream | kpt | krm-merge |" if reviewed else ""),
        "|---" * (16 if reviewed else 10) + "|",
    ]

    def line(name: str, rows: list[dict[str, Any]]) -> str:
        t = _real_sums(rows)
        text = (f"| {name} | {int(t['resources'])} | {t['kpt']:.2f} s | {t['ours']:.2f} s | **{t['ours'] / t['kpt']:.2f}** "
                f"| {t['kpt_cpu']:.2f} s | {t['ours_cpu']:.2f} s | **{t['ours_cpu'] / t['kpt_cpu']:.2f}** "
                f"| {t['noop']:.2f} s ({t['noop_cpu']:.2f} s) | {int(t['written'])} ({int(t['identical'])}) |")
        if reviewed:
            text += (f" {t['kpt_cold']:.2f} s | {t['ours_cold']:.2f} s | **{t['ours_cold'] / t['kpt_cold']:.2f}** "
                     f"| {int(t['upstream_lines']):,} | {int(t['kpt_lines']):,} | **{int(t['ours_lines']):,}** |")
        return text

    lines.append(line(f"all {len(real['rows'])} (sum; no-op: the slowest)", real["rows"]))
    lines.extend(line(r["package"], [r]) for r in real["rows"])
    return "\n".join(lines)


def _cold_met(cold: dict[str, Any]) -> bool:
    """Issue 33's targets as it states them: the cold wall ratio on every package of every transport, the warm one
    ("stays") over each transport's packages in sum; :func:`_warm_rows_missed` is the stricter every-row reading."""
    target = cold["targets"]
    warm: dict[str, list[float]] = {}
    for r in cold["rows"]:
        sums = warm.setdefault(r["transport"], [0.0, 0.0])
        sums[0] += r["ours_warm"]
        sums[1] += r["kpt_warm"]
    return (all(r["ours_cold"] / r["kpt_cold"] <= target["cold_ratio"] and not r["wrong"] for r in cold["rows"])
            and all(ours / kpt <= target["warm_ratio"] for ours, kpt in warm.values()))


def _warm_rows_missed(cold: dict[str, Any]) -> int:
    """How many rows have a warm wall ratio over ``warm_ratio`` (the stricter reading: every row)."""
    return sum(r["ours_warm"] / r["kpt_warm"] > cold["targets"]["warm_ratio"] for r in cold["rows"])


def render_cold_fetch(results: dict[str, Any]) -> str:
    """The docs table of the cold-cache bench: per transport and package, cold and warm, wall and CPU."""
    cold = results.get("cold_fetch")
    if not cold:
        return "No recorded run: `python bench/cases_cold_fetch.py ... --record bench/results.json`."
    m, target = cold["machine"], cold["targets"]
    lines = [
        f"Measured by `bench/cases_cold_fetch.py --record` ({cold['runs']} alternating runs per package and "
        f"transport, medians), {cold['date']}: {m['cpus']} CPUs, Python {m['python']}, kpt {m['kpt']}, {m['git']}; "
        f"load average {m['load_average_start']:g} at the start, {m['load_average_end']:g} at the end (the machine is "
        f"shared). Latency model of the last transport: {cold['latency']:g} s before each HTTP answer, "
        f"{cold['connect_latency']:g} s per new connection. Judged on wall time (cold ≤ {target['cold_ratio']:g} of "
        f"kpt's on every row, warm ≤ {target['warm_ratio']:g} over each transport's packages in sum, as issue 33 "
        f"states it); CPU time (every process each tool started, the HTTP server's git processes included) is the "
        f"steadier figure on a busy machine. Targets {'met' if _cold_met(cold) else '**missed**'}. Warm "
        f"≤ {target['warm_ratio']:g} on every row (stricter than the issue): "
        + ("met." if not _warm_rows_missed(cold) else
           f"**missed** on {_warm_rows_missed(cold)} of {len(cold['rows'])}."),
        "",
        "| transport | package | cold: kpt | krm-merge | ratio | CPU ratio | warm: kpt | krm-merge | ratio "
        "| HTTP requests / connections, cold: kpt | krm-merge |",
        "|---" * 11 + "|",
    ]
    for r in cold["rows"]:
        counts = (f"{r['kpt_cold_requests']} / {r['kpt_cold_connections']} | {r['ours_cold_requests']} / "
                  f"{r['ours_cold_connections']}") if "ours_cold_requests" in r else "- | -"
        lines.append(
            f"| {r['transport']} | {r['package']} | {r['kpt_cold']:.2f} s | {r['ours_cold']:.2f} s "
            f"| **{r['ours_cold'] / r['kpt_cold']:.2f}** | {r['ours_cold_cpu'] / r['kpt_cold_cpu']:.2f} "
            f"| {r['kpt_warm']:.2f} s | {r['ours_warm']:.2f} s | **{r['ours_warm'] / r['kpt_warm']:.2f}** | {counts} |")
    return "\n".join(lines)


def _fleet_met(fleet: dict[str, Any]) -> bool:
    """Issue 36's targets: the fleet's wall time against each loop's."""
    t, ratio = fleet["targets"], fleet["ratio"]
    return ratio["kpt"] <= t["kpt_ratio"] and ratio["single"] <= t["single_ratio"]


def _fleet_kpt_timed(fleet: dict[str, Any]) -> str:
    timed = fleet["kpt"]["timed_packages"]
    return "" if timed == fleet["packages"] else f" (kpt timed on {timed} packages, extrapolated)"


def _fleet_provenance(fleet: dict[str, Any]) -> str:
    return (f"`bench/cases_fleet.py --record` ({fleet['runs']} runs of the fleet and of the krm-merge loop, medians; "
            f"the kpt loop once{_fleet_kpt_timed(fleet)}; every run from fresh copies and an empty git cache), "
            f"{_when_and_where(fleet)} Judged on wall time: fleet ≤ {fleet['targets']['kpt_ratio']:g} × the loop of `kpt pkg update`, "
            f"≤ {fleet['targets']['single_ratio']:g} × the loop of `krm-merge update`.")


def _fleet_summary_row(fleet: dict[str, Any]) -> str:
    t = fleet["targets"]
    return (f"| update, fleet | {fleet['packages']} kpt-fetched consumers of one package | loops of `kpt pkg update`, "
            f"of `krm-merge update` | wall ≤ {t['kpt_ratio']:g}, ≤ {t['single_ratio']:g} "
            f"| {_num(fleet['fleet']['cpu'] / fleet['kpt']['cpu'])}, {_num(fleet['fleet']['cpu'] / fleet['single']['cpu'])} "
            f"| | **{_num(fleet['ratio']['kpt'])}**, **{_num(fleet['ratio']['single'])}** "
            f"| {'met' if _fleet_met(fleet) else '**missed**'} |")


def render_fleet_update(results: dict[str, Any]) -> str:
    """The docs table of the fleet bench: the three ways, then peak memory by jobs and packages."""
    fleet = results.get("fleet_update")
    if not fleet:
        return "No recorded run: `python bench/cases_fleet.py --samples DIR --record bench/results.json`."
    f, single, kpt = fleet["fleet"], fleet["single"], fleet["kpt"]
    checked = fleet["checked"]
    lines = [
        f"Measured by {_fleet_provenance(fleet)} Targets {'met' if _fleet_met(fleet) else '**missed**'}. "
        f"Checked before timing: {checked['identical_to_single']} packages byte-identical to single runs, "
        f"{checked['equal_to_kpt_as_data']} equal to kpt's as data.",
        "",
        f"| {fleet['packages']} consumers of {fleet['package']} | wall | CPU | fleet's wall / this |",
        "| --- | --- | --- | --- |",
        f"| loop of `kpt pkg update PKG@v2`{_fleet_kpt_timed(fleet)} | {kpt['wall']:.1f} s | {kpt['cpu']:.1f} s "
        f"| **{_num(fleet['ratio']['kpt'])}** |",
        f"| loop of `krm-merge update PKG@v2` | {single['wall']:.1f} s | {single['cpu']:.1f} s "
        f"| **{_num(fleet['ratio']['single'])}** |",
        f"| `krm-merge update ROOT --upstream REPO --ref v2` ({fleet['jobs']} jobs) | {f['wall']:.1f} s "
        f"| {f['cpu']:.1f} s | 1 |",
        "",
        "| `--jobs` | packages | peak memory, all processes | largest process | wall |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {m['jobs']} | {m['packages']} | {m['peak_mb']:.0f} MB | {m['peak_process_mb']:.0f} MB | {m['wall']:.1f} s |"
              for m in fleet["memory"]]
    return "\n".join(lines)


def render_growth(results: dict[str, Any]) -> str:
    return "\n".join(_growth_lines(results))


RENDERERS = {"summary": render_summary, "rows": render_rows, "growth": render_growth, "real_update": render_real_update,
             "cold_fetch": render_cold_fetch, "fleet_update": render_fleet_update}


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
