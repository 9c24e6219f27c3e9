"""A fleet update of 200 consumers of one real package against the loops a user writes today (issue 36).

    python bench/cases_fleet.py --samples DIR [--packages 200] [--runs 3] [--record bench/results.json]

``DIR``: a git clone (bare is fine) of kptdev/kpt-samples.  Its ``ghost``
package (an app and a database as local subpackages, kpt functions in the
Kptfile) at two published versions goes into a throw-away local repository,
tagged ``ghost/v1`` and ``ghost/v2`` as upstream does; ``@v1`` is fetched once
with ``kpt pkg get`` and copied into ``clusters/c000`` … ``clusters/c199``, each
copy named as ``kpt pkg get`` names it and given its own local edits (an
annotation, a label and a local ConfigMap, all with its number).  Then the
same monorepo is moved to ``@v2``, from fresh copies and an empty git cache:

* ``kpt``: a shell loop of ``kpt pkg update clusters/cNNN@v2`` (once: it takes
  minutes; ``--kpt-sample K`` times K packages and extrapolates, said so);
* ``single``: a shell loop of ``krm-merge update clusters/cNNN@v2``;
* ``fleet``: ``krm-merge update clusters --upstream REPO.git/ghost --ref v2``.

Answers are checked before any time is kept: every package of the fleet run
byte-identical to the single run's, and equal as data to kpt's (the check of
``cases_real_update.py``); a wrong answer stops the bench.  Peak memory is the
largest sum of the resident sets of the run's processes (``/proc``, sampled
every 10 ms), measured for ``--jobs`` 1, 2 and 4 on all packages and for
``--jobs`` 2 on a quarter of them: bounded by the jobs, not by the packages.
``--record`` keeps the run in ``results.json`` as ``fleet_update``, from which
``bench/report.py`` writes the table of docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases_real_update import build_repo, kpt_version, local_edits, tree  # noqa: E402

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
PACKAGE = ("ghost", "v1", "v2")  # kpt-samples: directory, old and new tag (as ghost/v1, ghost/v2)
TARGETS = {"kpt_ratio": 0.05, "single_ratio": 0.3}  # fleet wall time / each loop's (issue 36)


def environment(root: Path) -> dict[str, str]:
    env = dict(os.environ, HOME=str(root / "home"), TMPDIR=str(root / "tmp"), XDG_CACHE_HOME=str(root / "cache"),
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules cached
    for key in ("JOB_COMPLETION_INDEX", "KRM_MERGE_SHARDS"):
        env.pop(key, None)
    return env


def build(root: Path, samples: Path, count: int, env: dict[str, str]) -> Path:
    """The upstream repository and the monorepo ``clusters/`` of ``count`` consumers at v1; returns the monorepo."""
    directory, old, new = PACKAGE
    for d in ("home", "tmp", "up", "ws", "cache"):
        (root / d).mkdir(parents=True, exist_ok=True)
    build_repo(samples, directory, (old, new), root / "up", root / "versions", env)
    subprocess.run(["kpt", "pkg", "get", f"file://{root / 'up'}.git/{directory}@v1", "fetched"], cwd=root / "ws", env=env,
                   check=True, capture_output=True, timeout=300)
    fetched = root / "ws" / "fetched"
    mono = root / "mono"
    for n in range(count):
        pkg = mono / "clusters" / f"c{n:03d}"
        shutil.copytree(fetched, pkg)
        kptfile = pkg / "Kptfile"  # as kpt pkg get names a package: after its folder
        kptfile.write_text(kptfile.read_text().replace("name: fetched", f"name: c{n:03d}", 1))
        own_edits(pkg, n)
    return mono


def own_edits(pkg: Path, n: int) -> None:
    """cases_real_update's edits (an annotation on two resources, a local ConfigMap) and this package's own."""
    local_edits(pkg)
    (pkg / "bench-local.yaml").write_text((pkg / "bench-local.yaml").read_text().replace('"yes"', f'"c{n:03d}"'))
    for path in sorted(pkg.rglob("*.yaml")):
        text = path.read_text()
        if "kind: Deployment" in text or "kind: StatefulSet" in text:
            path.write_text(text.replace("  labels:\n", f"  labels:\n    cluster: c{n:03d}\n", 1))


def fresh(mono: Path, where: Path) -> Path:
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(mono, where)
    return where


def cold(root: Path, env: dict[str, str]) -> dict[str, str]:
    """An empty krm-merge git cache (and kpt's): every run fetches as on a fresh machine."""
    for cache in (root / "cache", root / "home" / ".kpt"):
        shutil.rmtree(cache, ignore_errors=True)
    (root / "cache").mkdir()
    return env


class Measured:
    """Wall and CPU seconds (children included) and peak memory of one command and its processes."""

    def __init__(self, wall: float, cpu: float, peak_mb: float, peak_process_mb: float) -> None:
        self.wall, self.cpu, self.peak_mb, self.peak_process_mb = wall, cpu, peak_mb, peak_process_mb

    def as_json(self) -> dict[str, float]:
        return {"wall": round(self.wall, 3), "cpu": round(self.cpu, 3), "peak_mb": round(self.peak_mb, 1),
                "peak_process_mb": round(self.peak_process_mb, 1)}


def measured(cmd: list[str], cwd: Path, env: dict[str, str], codes: tuple[int, ...] = (0,)) -> Measured:
    """Run ``cmd`` in its own session; its processes' resident sets summed every 10 ms, the largest kept."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    peaks = [0.0, 0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            sizes = session_rss(proc.pid)
            peaks[0], peaks[1] = max(peaks[0], sum(sizes)), max([peaks[1], *sizes])
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate(timeout=3600)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in codes:
        raise RuntimeError(f"{cmd[:4]}...: exit {proc.returncode}: {err[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(wall, cpu, peaks[0] / 1024, peaks[1] / 1024)


def session_rss(session: int) -> list[float]:
    """The resident set (KB) of every process of ``session``."""
    sizes = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
            if int(fields[3]) != session:  # the session id, after state, ppid and pgrp
                continue
            with open(f"/proc/{entry}/status") as fh:
                sizes += [float(line.split()[1]) for line in fh if line.startswith("VmRSS:")]
        except (OSError, ValueError, IndexError):
            continue
    return sizes


def loop(tool: list[str], packages: list[str], ref: str) -> list[str]:
    """A shell loop a user writes: one update per package, every failure kept, none stopping the loop."""
    script = (f'failed=0; for p in "$@"; do {" ".join(tool)} "$p@{ref}" >/dev/null 2>&1 '
              '|| { echo "failed: $p" >&2; failed=$((failed + 1)); }; done; test "$failed" = 0')
    return ["bash", "-c", script, "loop", *packages]


def check(names: list[str], kpt_names: list[str], fleet_tree: Path, single_tree: Path, kpt_tree: Path) -> dict[str, Any]:
    """Every package of the fleet run byte-identical to the single run's, and equal as data to kpt's."""
    different = [n for n in names if read_bytes(fleet_tree / n) != read_bytes(single_tree / n)]
    if different:
        raise SystemExit(f"bench: error: fleet and single runs differ in {different[:5]} ({len(different)} packages)")
    unchanged = [n for n in names if "commit: " not in (fleet_tree / n / "Kptfile").read_text()]
    wrong = [n for n in kpt_names if tree(kpt_tree / n) != tree(fleet_tree / n)]
    if wrong or unchanged:
        raise SystemExit(f"bench: error: krm-merge and kpt differ as data in {wrong[:5]} ({len(wrong)} packages)"
                         f"; not updated: {unchanged[:5]}")
    return {"identical_to_single": len(names), "equal_to_kpt_as_data": len(kpt_names)}


def read_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def median(values: list[Measured]) -> Measured:
    ordered = sorted(values, key=lambda m: m.wall)
    return ordered[len(ordered) // 2]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", required=True, help="git dir of kptdev/kpt-samples")
    parser.add_argument("--packages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of the fleet and of the krm-merge loop")
    parser.add_argument("--kpt-sample", type=int, help="time kpt on this many packages only and extrapolate")
    parser.add_argument("--record", type=Path, help="keep the run as `fleet_update` in this results JSON")
    args = parser.parse_args(argv)
    load_start, started_at = os.getloadavg()[0], datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="krm-merge-bench-fleet-") as tmp:
        root = Path(tmp)
        env = environment(root)
        mono = build(root, Path(args.samples), args.packages, env)
        names = [f"c{n:03d}" for n in range(args.packages)]
        spec = f"file://{root / 'up'}.git/{PACKAGE[0]}"
        fleet_cmd = [KRM_MERGE, "update", "clusters", "--upstream", spec, "--ref", "v2"]
        # --- checked runs: the fleet, the loop of single updates, kpt's loop ---
        fleet_dir, single_dir, kpt_dir = (fresh(mono, root / w) for w in ("fleet", "single", "kpt"))
        fleet_runs = [measured(fleet_cmd, fleet_dir, cold(root, env))]
        single_runs = [measured(loop([KRM_MERGE, "update"], [f"clusters/{n}" for n in names], "v2"), single_dir,
                                cold(root, env))]
        kpt_names = names[:args.kpt_sample] if args.kpt_sample else names
        kpt_run = measured(loop(["kpt", "pkg", "update"], [f"clusters/{n}" for n in kpt_names], "v2"), kpt_dir,
                           cold(root, env))
        checked = check(names, kpt_names, fleet_dir / "clusters", single_dir / "clusters", kpt_dir / "clusters")
        print(f"checked: {checked}", flush=True)
        # --- timed runs: fresh copies, cold cache, alternating ---
        for _ in range(args.runs - 1):
            fleet_runs.append(measured(fleet_cmd, fresh(mono, fleet_dir), cold(root, env)))
            single_runs.append(measured(loop([KRM_MERGE, "update"], [f"clusters/{n}" for n in names], "v2"),
                                        fresh(mono, single_dir), cold(root, env)))
        fleet, single = median(fleet_runs), median(single_runs)
        kpt_wall = kpt_run.wall * len(names) / len(kpt_names)
        kpt_cpu = kpt_run.cpu * len(names) / len(kpt_names)
        # --- memory: by jobs, and by packages ---
        memory = []
        quarter = root / "quarter"
        fresh(mono, quarter)
        for n in names[args.packages // 4:]:
            shutil.rmtree(quarter / "clusters" / n)
        for jobs, source in ((1, mono), (2, mono), (4, mono), (2, quarter)):
            count = len(list((source / "clusters").iterdir()))
            m = measured([*fleet_cmd, "--jobs", str(jobs)], fresh(source, root / "memory"), cold(root, env))
            memory.append({"jobs": jobs, "packages": count, **m.as_json()})
            print(f"memory: --jobs {jobs}, {count} packages: peak {m.peak_mb:.0f} MB in all, "
                  f"{m.peak_process_mb:.0f} MB the largest process; wall {m.wall:.2f} s", flush=True)
        resources = sum(1 for p in (mono / "clusters" / names[0]).rglob("*.yaml"))
    row = {"packages": args.packages, "package": f"kpt-samples {PACKAGE[0]} {PACKAGE[1]} -> {PACKAGE[2]}",
           "files_per_package": resources, "runs": args.runs, "jobs": os.cpu_count(),
           "fleet": fleet.as_json(), "single": single.as_json(),
           "kpt": {"wall": round(kpt_wall, 3), "cpu": round(kpt_cpu, 3), "timed_packages": len(kpt_names)},
           "ratio": {"kpt": round(fleet.wall / kpt_wall, 4), "single": round(fleet.wall / single.wall, 4)},
           "checked": checked, "memory": memory}
    print(f"fleet {fleet.wall:.2f} s (cpu {fleet.cpu:.2f} s); loop of krm-merge update {single.wall:.2f} s "
          f"(cpu {single.cpu:.2f} s): ratio {row['ratio']['single']:.3f} (target {TARGETS['single_ratio']}); "
          f"loop of kpt pkg update {kpt_wall:.2f} s{' (extrapolated)' if args.kpt_sample else ''}: ratio "
          f"{row['ratio']['kpt']:.3f} (target {TARGETS['kpt_ratio']})")
    if args.record:
        record(args.record, row, started_at, load_start)
    return 0


def record(path: Path, row: dict[str, Any], started_at: datetime.datetime, load_start: float) -> None:
    """Write the run into ``path``'s ``fleet_update`` (the rest of the file is kept)."""
    results = json.loads(path.read_text()) if path.exists() else {}
    results["fleet_update"] = {
        "date": started_at.strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kpt": kpt_version(),
                    "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2)},
        "targets": TARGETS, **row,
    }
    path.write_text(json.dumps(results, indent=1) + "\n")
    print(f"recorded in {path}; now: python bench/report.py")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
