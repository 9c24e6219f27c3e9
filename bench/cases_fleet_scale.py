"""A fleet update at scale: 1,000 and 10,000 synthetic consumers of one upstream (issue 46).

    python bench/cases_fleet_scale.py --quick          # 250 and 1,000 consumers
    python bench/cases_fleet_scale.py                  # 1,000 and 10,000 consumers
    python bench/cases_fleet_scale.py --sizes 500,2000 --runs 3 --jobs 2 [--record FILE]

The upstream is a local git repository holding one package (a Deployment, a
Service and a ConfigMap in three files, a Kptfile) tagged ``v1`` and ``v2``
(v2: a new image, a new ConfigMap value, a new Service port).  ``@v1`` is
fetched once with ``kpt pkg get`` and copied into ``clusters/cNNNNN`` for
every consumer, each named as ``kpt pkg get`` names it; every tenth consumer
is edited locally (its replicas, a label, a ConfigMap key of its own, a local
file), on fields upstream's v2 does not touch, so a clean run exits 0.  Then
``krm-merge update clusters --upstream REPO.git/app --ref v2`` moves them all.

**The answer is checked before anything is timed**: two references are made by
single runs (``krm-merge update PKG@v2``) on a copy of an edited and of an
unedited consumer, and after the checked fleet run every consumer must be
byte-identical to its reference (its Kptfile once its name is put back), the
fleet must exit 0 and its report must count every package ``updated``; a
wrong answer stops the bench with ``bench: error:`` and exit code 1.  Each
timed run starts from a fresh copy of the monorepo and an empty git cache.

Per size: wall and CPU seconds (median of ``--runs``) and peak memory, the
largest sum of the resident sets of the run's processes (``/proc``, sampled
every 10 ms: ``cases_fleet.measured``).  Growth: wall time per consumer at the
largest size over the smallest's (linear: ≤ 1.25), the peak memory at the
largest size over the smallest's, and against its target (≤ 1 GiB at 10,000).  ``--record FILE`` keeps
the run as ``fleet_scale`` in that results JSON (the rest of the file is kept).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases_fleet import Measured, cold, environment, fresh, measured, median, read_bytes  # noqa: E402

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
SIZES, QUICK_SIZES = (1_000, 10_000), (250, 1_000)
TARGETS = {"growth": 1.25, "peak_mb_at_10000": 1024}
EDITED_EVERY = 10

KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  description: a web app\n"


def deployment(image: str) -> str:
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\nspec:\n"
            "  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n"
            "      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n"
            f"        image: {image}\n        ports:\n        - containerPort: 8080\n")


def service(port: int) -> str:
    return ("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n"
            f"  - name: http\n    port: {port}\n    targetPort: 8080\n")


def settings(level: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: \"{level}\"\n"


VERSIONS = {
    "v1": {"Kptfile": KPTFILE, "deploy.yaml": deployment("web:1.0"), "service.yaml": service(80),
           "settings.yaml": settings("info")},
    "v2": {"deploy.yaml": deployment("web:2.0"), "service.yaml": service(8080), "settings.yaml": settings("warn")},
}


def git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=300)


def build(root: Path, count: int, env: dict[str, str]) -> Path:
    """The upstream repository and the monorepo ``clusters/`` of ``count`` consumers at v1; returns the monorepo."""
    for d in ("home", "tmp", "cache", "up/app", "ws"):
        (root / d).mkdir(parents=True, exist_ok=True)
    up = root / "up"
    git(["init", "-q", "-b", "main"], up, env)
    for tag, files in VERSIONS.items():
        for rel, text in files.items():
            (up / "app" / rel).write_text(text)
        git(["add", "-A"], up, env)
        git(["commit", "-qm", tag], up, env)
        git(["tag", tag], up, env)
    subprocess.run(["kpt", "pkg", "get", f"file://{up}.git/app@v1", "fetched"], cwd=root / "ws", env=env, check=True,
                   capture_output=True, timeout=300)
    fetched = root / "ws" / "fetched"
    mono = root / "mono"
    for n in range(count):
        make_consumer(fetched, mono / "clusters" / name(n), n)
    return mono


def name(n: int) -> str:
    return f"c{n:05d}"


def make_consumer(fetched: Path, pkg: Path, n: int) -> None:
    shutil.copytree(fetched, pkg)
    kptfile = pkg / "Kptfile"  # as kpt pkg get names a package: after its folder
    kptfile.write_text(kptfile.read_text().replace("name: fetched", f"name: {pkg.name}", 1))
    if n % EDITED_EVERY == 0:
        edit(pkg)


def edit(pkg: Path) -> None:
    """A local edit on fields v2 does not change: replicas, a label, a ConfigMap key, a file of its own."""
    deploy = pkg / "deploy.yaml"
    deploy.write_text(deploy.read_text().replace("  replicas: 2\n", "  replicas: 5\n")
                      .replace("  labels:\n    app: web\n", "  labels:\n    app: web\n    team: payments\n", 1))
    conf = pkg / "settings.yaml"
    conf.write_text(conf.read_text() + "  region: eu-west\n")
    (pkg / "local.yaml").write_text(settings("local").replace("name: settings", "name: local-only"))


def without_name(files: dict[str, bytes], pkg_name: str) -> dict[str, bytes]:
    """A package's files with its own name in its Kptfile put back to a placeholder (only that differs)."""
    out = dict(files)
    out["Kptfile"] = out["Kptfile"].replace(f"name: {pkg_name}".encode(), b"name: NAME", 1)
    return out


def references(root: Path, mono: Path, env: dict[str, str]) -> dict[bool, dict[str, bytes]]:
    """What a single ``krm-merge update PKG@v2`` makes of an edited and of an unedited consumer."""
    refs: dict[bool, dict[str, bytes]] = {}
    for n in (0, 1):
        where = root / "reference" / name(n)
        shutil.rmtree(where.parent, ignore_errors=True)
        where.parent.mkdir(parents=True)
        shutil.copytree(mono / "clusters" / name(n), where)
        done = subprocess.run([KRM_MERGE, "update", f"{name(n)}@v2"], cwd=where.parent, env=env,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise SystemExit(f"bench: error: the single update of {name(n)} failed: {done.stderr[-2000:]}")
        refs[n % EDITED_EVERY == 0] = without_name(read_bytes(where), name(n))
    if refs[True] == refs[False] or b"replicas: 5" not in refs[True]["deploy.yaml"]:
        raise SystemExit("bench: error: the edited reference lost its local edit")
    if b"web:2.0" not in refs[False]["deploy.yaml"]:
        raise SystemExit("bench: error: the reference is not at v2")
    return refs


def check(count: int, tree: Path, report: Path, refs: dict[bool, dict[str, bytes]]) -> dict[str, Any]:
    """Every consumer byte-identical to its reference; the report counts every package updated."""
    wrong = [name(n) for n in range(count)
             if without_name(read_bytes(tree / "clusters" / name(n)), name(n)) != refs[n % EDITED_EVERY == 0]]
    data = json.loads(report.read_text())
    totals = data["totals"]
    if wrong or totals.get("updated") != count or data["selected"] != count:
        raise SystemExit(f"bench: error: {len(wrong)} consumer(s) differ from the single update's answer "
                         f"({wrong[:5]}); totals {totals}")
    return {"identical_to_single": count, "edited_locally": len(range(0, count, EDITED_EVERY))}


def run_size(count: int, runs: int, jobs: int | None) -> dict[str, Any]:
    """Build, check, then time ``runs`` fleet runs of ``count`` consumers."""
    with tempfile.TemporaryDirectory(prefix=f"krm-merge-bench-fleet-{count}-") as tmp:
        root = Path(tmp)
        env = environment(root)
        mono = build(root, count, env)
        refs = references(root, mono, cold(root, env))
        spec = f"file://{root / 'up'}.git/app"
        report = root / "report.json"
        fleet = [KRM_MERGE, "update", "clusters", "--upstream", spec, "--ref", "v2", "--report", "json", str(report),
                 *(["--jobs", str(jobs)] if jobs else [])]
        where = root / "fleet"
        measured(fleet, fresh(mono, where), cold(root, env))  # the checked run: not timed
        checked = check(count, where, report, refs)
        print(f"{count} consumers: checked {checked}", flush=True)
        timed: list[Measured] = []
        for _ in range(runs):
            timed.append(measured(fleet, fresh(mono, where), cold(root, env)))
        m = median(timed)
        peak = max(t.peak_mb for t in timed)
        print(f"{count} consumers: wall {m.wall:.2f} s, cpu {m.cpu:.2f} s, peak {peak:.0f} MB in all "
              f"({m.peak_process_mb:.0f} MB the largest process); {1000 * m.wall / count:.2f} ms per consumer",
              flush=True)
        return {"consumers": count, **m.as_json(), "peak_mb": round(peak, 1),
                "ms_per_consumer": round(1000 * m.wall / count, 3), "checked": checked}


def growth(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Wall time per consumer at the largest size over the smallest's; peak memory at the largest."""
    small, large = rows[0], rows[-1]
    ratio = (large["wall"] / small["wall"]) / (large["consumers"] / small["consumers"])
    cpu_ratio = (large["cpu"] / small["cpu"]) / (large["consumers"] / small["consumers"])
    return {"sizes": [small["consumers"], large["consumers"]], "wall_ratio": round(ratio, 3),
            "cpu_ratio": round(cpu_ratio, 3), "linear": ratio <= TARGETS["growth"],
            "peak_ratio": round(large["peak_mb"] / small["peak_mb"], 3), "peak_mb": large["peak_mb"],
            "peak_within_target": large["peak_mb"] <= TARGETS["peak_mb_at_10000"]}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES[0]} and {QUICK_SIZES[1]}")
    parser.add_argument("--sizes", help="comma-separated consumer counts, smallest first "
                                        f"(default {','.join(map(str, SIZES))})")
    parser.add_argument("--runs", type=int, default=1, help="timed runs per size (the median is kept)")
    parser.add_argument("--jobs", type=int, help="the fleet's --jobs (default: krm-merge's, one per CPU)")
    parser.add_argument("--record", type=Path, help="keep the run as `fleet_scale` in this results JSON")
    args = parser.parse_args(argv)
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes else list(QUICK_SIZES if args.quick else SIZES))
    if len(sizes) < 2 or sizes != sorted(sizes) or sizes[0] < EDITED_EVERY:
        parser.error(f"--sizes: two or more counts, smallest first, each at least {EDITED_EVERY}")
    load_start, started_at = os.getloadavg()[0], datetime.datetime.now(datetime.timezone.utc)
    rows = [run_size(count, args.runs, args.jobs) for count in sizes]
    grown = growth(rows)
    print(f"growth {grown['sizes'][0]} -> {grown['sizes'][1]}: wall per consumer x{grown['wall_ratio']:.2f} "
          f"(cpu x{grown['cpu_ratio']:.2f}; linear: <= {TARGETS['growth']}); peak {grown['peak_mb']:.0f} MB at "
          f"{grown['sizes'][1]}, x{grown['peak_ratio']:.2f} the smaller size's (target <= "
          f"{TARGETS['peak_mb_at_10000']} MB at 10,000)")
    if args.record:
        results = json.loads(args.record.read_text()) if args.record.exists() else {}
        results["fleet_scale"] = {
            "date": started_at.strftime("%Y-%m-%d %H:%M UTC"),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2)},
            "targets": TARGETS, "runs": args.runs, "jobs": args.jobs, "sizes": rows, "growth": grown}
        args.record.write_text(json.dumps(results, indent=1) + "\n")
        print(f"recorded in {args.record}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
