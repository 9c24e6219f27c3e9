"""``krm-merge update PKG@REF`` against ``kpt pkg update`` on real public packages.

    python bench/cases_real_update.py --catalog DIR --samples DIR [--runs 3]

``DIR``: a git clone (bare is fine) of nephio-project/catalog and of
kptdev/kpt-samples.  Nothing of theirs is committed here: each run copies the
package directory at two of its published refs (directory-prefixed tags or
release branches) into a throw-away local repository, tagged ``PKG/v1`` and
``PKG/v2`` as upstream does, fetches ``@v1`` with ``kpt pkg get`` (kpt's
markers, indentation and quoting), makes a few local edits (an annotation on
two resources, a local ConfigMap) and then updates fresh copies ``@v2`` with
kpt and with krm-merge, alternately.  Each krm-merge answer is checked against
kpt's (every file equal as data, kpt's identifier annotation included), and
the share of files byte-identical to kpt's is counted.

The user's case (issue 45) is a second copy of the same fetch, edited as
people edit a package (:func:`user_edits`: a replica count, a label, an env
var, a ConfigMap key, a pinned image), each edited file written back by a
YAML round-trip tool (ruamel.yaml with another indentation and width, or
PyYAML's dump), then updated by both tools: a checked run first (equal as
data), then warm and cold runs.

The review diff (issue 33): the lines ``diff -rN`` shows between the two
upstream trees (upstream's own change), and between the package before the
update and kpt's result, and ours.  Wall times twice: warm (each tool's git
cache as the previous run left it) and cold (kpt's ``~/.kpt/repos`` and our
``$XDG_CACHE_HOME/krm-merge`` emptied before each run, as on a fresh CI
machine).  A no-op update (``@v2`` again) is timed too.  Prints one line a
package and the sum; ``--record bench/results.json`` keeps the run there
(``real_update``), from which ``bench/report.py`` writes the tables of
README.md and docs/performance.md.
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
import time
from pathlib import Path
from typing import Any

import yaml

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
WALL_TARGET = 0.5  # krm-merge's wall time / kpt's, on every package and on the sum (issue 24)
NOOP_TARGET = 0.15  # seconds of wall time for an update to the ref the package is at
COLD_TARGET = 0.5  # cold-cache wall time / kpt's, on every package (issue 33)
WARM_TARGET = 0.3  # warm wall time / kpt's, on every package (issue 33)
DIFF_TARGET = 1.05  # our review diff's lines / upstream's own change, summed (issue 33); and ours <= kpt's each
# Issue 45, judged per package for the annotation edits and the user's edits alike: warm <= WARM_TARGET on every
# package of more than SMALL_PACKAGE resources, cold <= COLD_TARGET on every package, and the no-op of a package of
# at most SMALL_PACKAGE resources <= NOOP_SMALL_TARGET seconds.
SMALL_PACKAGE = 20
NOOP_SMALL_TARGET = 0.06

# (source, package directory, old ref, new ref): several sizes, CRDs, subpackages.  A ref is a
# directory-prefixed tag (``v2.0.0`` -> ``DIR/v2.0.0``) or, written ``heads/NAME``, a release branch
# (the catalog's ``v3``..``v6`` and ``R3``; the refs issue 33 measured).
PACKAGES = [
    ("catalog", "nephio/core/porch", "v2.0.0", "v3.0.0"),
    ("catalog", "nephio/core/nephio-operator", "heads/v3", "heads/v4"),
    ("catalog", "nephio/optional/resource-backend", "v2.0.0", "v3.0.0"),
    ("catalog", "nephio/optional/webui", "v2.0.0", "v3.0.0"),
    ("catalog", "infra/capi/cluster-capi", "v2.0.0", "v3.0.0"),
    ("catalog", "workloads/free5gc/free5gc-operator", "v2.0.0", "v3.0.0"),
    ("catalog", "workloads/free5gc/free5gc-cp", "heads/v5", "heads/v6"),
    ("catalog", "distros/sandbox/gitea", "heads/R3", "heads/v6"),
    ("catalog", "workloads/tools/ueransim", "heads/R3", "heads/v6"),
    ("samples", "ghost", "v1", "v2"),
    ("samples", "cert-manager-basic", "v0", "v1"),
]


def revision(directory: str, ref: str) -> str:
    """The git revision of ``ref`` in the source repository (see PACKAGES)."""
    return f"refs/{ref}" if ref.startswith("heads/") else f"refs/tags/{directory}/{ref}"


def git(args: list[str], cwd: Path, env: dict[str, str], out: bool = False) -> Any:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True, timeout=300)
    return proc.stdout if out else None


def build_repo(source: Path, directory: str, refs: tuple[str, str], up: Path, versions: Path, env: dict[str, str]) -> None:
    """A local repository holding only ``directory`` at the two refs, tagged ``directory/v1`` and ``/v2``.

    Each version's tree is also kept as ``versions/v1`` and ``versions/v2`` (upstream's own change is their diff).
    """
    git(["init", "-q", "-b", "main"], up, env)
    for n, ref in enumerate(refs, 1):
        target = up / directory
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        data = git(["--git-dir", str(source), "archive", "--format=tar", f"{revision(directory, ref)}:{directory}"],
                   up, env, out=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=data, check=True)
        shutil.copytree(target, versions / f"v{n}")
        git(["add", "-A"], up, env)
        git(["commit", "-q", "--allow-empty", "-m", f"{directory} {ref}"], up, env)
        git(["tag", f"{directory}/v{n}"], up, env)


def diff_lines(before: Path, after: Path) -> int:
    """The lines ``diff -rN`` shows removed or added between two trees (a new or deleted file: all its lines)."""
    proc = subprocess.run(["diff", "-rN", str(before), str(after)], capture_output=True, text=True, errors="replace",
                          check=False, timeout=300)
    if proc.returncode > 1:
        raise RuntimeError(f"diff -rN {before} {after}: {proc.stderr}")
    return sum(1 for line in proc.stdout.splitlines() if line.startswith(("< ", "> ", "<\t", ">\t")) or line in ("<", ">"))


def local_edits(pkg: Path) -> None:
    """An annotation added to two resources (as text, next to kpt's identifier), and a local ConfigMap."""
    edited = 0
    for path in sorted(pkg.rglob("*.yaml")):
        text = path.read_text()
        marker = "    internal.kpt.dev/upstream-identifier:"
        if edited < 2 and text.count(marker) == 1:
            path.write_text(text.replace(marker, "    bench.example/local: \"edited\"\n" + marker, 1))
            edited += 1
    (pkg / "bench-local.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench-local\ndata:\n  mine: \"yes\"\n")


WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet")
PINNED = "@sha256:" + "5bd1" * 16  # a digest added to an image: the user pins what they run


def user_edits(pkg: Path) -> list[str]:
    """Edits as people make them (issue 45): a replica count, a label, an env var, a ConfigMap key and a pinned
    image, each file loaded and written back whole by a YAML round-trip tool, in turn ruamel.yaml (4-space
    mappings, 60 columns) and PyYAML's ``safe_dump_all`` (keys sorted, comments dropped).  Other resources of an
    edited file are re-formatted only.  Returns the edited files (relative paths, sorted).

    Targets, found in sorted file order: the replicas of the first Deployment or StatefulSet, the image of the
    second workload's first container (the first's when there is one), an env var on the last workload's first
    container, a label on the first CRD (else the first Service, else the first resource), a key in the first
    ConfigMap with ``data``.  A package without one of these kinds skips that edit.
    """
    docs: dict[Path, list[Any]] = {}
    for path in sorted(pkg.rglob("*.yaml")):
        if path.name != "bench-local.yaml":
            docs[path] = list(yaml.safe_load_all(path.read_text()))
    where = [(path, i, doc) for path, ds in docs.items() for i, doc in enumerate(ds) if isinstance(doc, dict)]
    workloads = [(p, i) for p, i, d in where if d.get("kind") in WORKLOADS
                 and ((d.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers")]
    edits: dict[tuple[Path, int], list[str]] = {}

    def edit(target: tuple[Path, int] | None, what: str) -> None:
        if target is not None:
            edits.setdefault(target, []).append(what)

    edit(next(((p, i) for p, i in workloads if docs[p][i]["kind"] != "DaemonSet"), None), "replicas")
    edit(workloads[1 % len(workloads)] if workloads else None, "image")
    edit(workloads[-1] if workloads else None, "env")
    labelled = (next(((p, i) for p, i, d in where if d.get("kind") == "CustomResourceDefinition"), None)
                or next(((p, i) for p, i, d in where if d.get("kind") == "Service"), None)
                or next(((p, i) for p, i, _ in where), None))
    edit(labelled, "label")
    edit(next(((p, i) for p, i, d in where if d.get("kind") == "ConfigMap" and isinstance(d.get("data"), dict)), None),
         "configmap")
    edited = sorted({path for path, _ in edits})
    for n, path in enumerate(edited):
        _rewrite(path, {i: whats for (p, i), whats in edits.items() if p == path}, ruamel=n % 2 == 0)
    return [p.relative_to(pkg).as_posix() for p in edited]


def _rewrite(path: Path, edits: dict[int, list[str]], *, ruamel: bool) -> None:
    """``path`` loaded, its documents' ``edits`` made, written back by ruamel.yaml or PyYAML."""
    if ruamel:
        from ruamel.yaml import YAML

        rt = YAML()
        rt.indent(mapping=4, sequence=4, offset=2)
        rt.width = 60
        # Quotes kept as written: ruamel.yaml reads and prints YAML 1.2, where a plain `yes` is a string; to
        # Kubernetes (YAML 1.1) and to krm-merge it is true, so dropping the quotes of "yes" changes the data.
        rt.preserve_quotes = True
        docs = list(rt.load_all(path.read_text()))
    else:
        docs = list(yaml.safe_load_all(path.read_text()))
    for i, whats in edits.items():
        doc = docs[i]
        for what in whats:
            if what == "replicas":
                doc["spec"]["replicas"] = int(doc["spec"].get("replicas") or 1) + 2
            elif what == "label":
                meta = doc.setdefault("metadata", {})
                if not isinstance(meta.get("labels"), dict):
                    meta["labels"] = {}
                meta["labels"]["bench.example/team"] = "local"
            elif what == "configmap":
                doc["data"]["bench-local"] = "local"
            else:
                container = doc["spec"]["template"]["spec"]["containers"][0]
                if what == "image":
                    container["image"] = str(container["image"]).partition("@")[0] + PINNED
                else:
                    if not isinstance(container.get("env"), list):
                        container["env"] = []
                    container["env"].append({"name": "BENCH_LOCAL", "value": "edited"})
    with path.open("w") as out:
        if ruamel:
            rt.dump_all(docs, out)
        else:
            yaml.safe_dump_all(docs, out)


def without_nulls(data: Any) -> Any:
    """kpt drops explicit nulls from every file it writes; krm-merge keeps untouched files (docs/merge.md)."""
    if isinstance(data, dict):
        return {k: without_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [without_nulls(v) for v in data]
    return data


def tree(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            rel = path.relative_to(root).as_posix()
            text = path.read_text(errors="replace")
            out[rel] = without_nulls(list(yaml.safe_load_all(text))) if rel.endswith((".yaml", ".yml")) or path.name == "Kptfile" else text
    return out


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU (user + system, children included) is less sensitive to a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd}: {proc.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median(samples: list[tuple[float, float]], which: int) -> float:
    values = sorted(s[which] for s in samples)
    return values[len(values) // 2]


def case(root: Path, source: Path, directory: str, refs: tuple[str, str], runs: int) -> dict[str, Any]:
    env = dict(os.environ, HOME=str(root / "home"), TMPDIR=str(root / "tmp"), XDG_CACHE_HOME=str(root / "cache"),
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    # as installed for a user: compiled modules are cached (an environment that forbids it
    # would charge every run ~0.1 s of compiling)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for d in ("home", "tmp", "up", "ws", "cache", "versions"):
        (root / d).mkdir(parents=True)
    up, ws = root / "up", root / "ws"
    build_repo(source, directory, refs, up, root / "versions", env)
    subprocess.run(["kpt", "pkg", "get", f"file://{up}.git/{directory}@v1", "local"], cwd=ws, env=env, check=True,
                   capture_output=True, timeout=300)
    local = ws / "local"
    edited = ws / "edited"  # the user's case (issue 45): the same fetch, edited and written back by YAML tools
    shutil.copytree(local, edited)
    local_edits(local)
    edited_files = user_edits(edited)
    resources = sum(len([d for d in yaml.safe_load_all(p.read_text()) if d]) for p in local.rglob("*.yaml"))
    caches = {"kpt": root / "home" / ".kpt" / "repos", "ours": root / "cache" / "krm-merge"}
    times = timed_updates(ws, local, env, caches, runs)
    theirs, ours = tree(ws / "kpt"), tree(ws / "ours")
    wrong = sorted(rel for rel in set(theirs) | set(ours) if theirs.get(rel) != ours.get(rel))
    written = [p.relative_to(ws / "ours").as_posix() for p in (ws / "ours").rglob("*")
               if p.is_file() and (local / p.relative_to(ws / "ours")).is_file()
               and p.read_bytes() != (local / p.relative_to(ws / "ours")).read_bytes()]
    written += [rel for rel in ours if not (local / rel).is_file()]
    identical = [rel for rel in written if (ws / "kpt" / rel).is_file()
                 and (ws / "kpt" / rel).read_bytes() == (ws / "ours" / rel).read_bytes()]
    noop = [timed([KRM_MERGE, "update", f"{ws / 'ours'}@v2"], ws, env) for _ in range(runs)]
    return {"package": directory, "refs": list(refs), "resources": resources,
            "kpt": median(times["kpt"], 0), "ours": median(times["ours"], 0),
            "kpt_cpu": median(times["kpt"], 1), "ours_cpu": median(times["ours"], 1),
            "kpt_cold": median(times["kpt_cold"], 0), "ours_cold": median(times["ours_cold"], 0),
            "noop": median(noop, 0), "noop_cpu": median(noop, 1), "wrong": wrong,
            "written": len(written), "identical": len(identical),
            "different": sorted(set(written) - set(identical)),
            "upstream_lines": diff_lines(root / "versions" / "v1", root / "versions" / "v2"),
            "kpt_lines": diff_lines(local, ws / "kpt"), "ours_lines": diff_lines(local, ws / "ours"),
            "edited": edited_case(ws, edited, edited_files, env, caches, runs)}


def timed_updates(ws: Path, local: Path, env: dict[str, str], caches: dict[str, Path],
                  runs: int) -> dict[str, list[tuple[float, float]]]:
    """``runs`` warm, then ``runs`` cold updates ``@v2`` of fresh copies of ``local`` (``ws/kpt``, ``ws/ours``), each
    tool in turn; the copies of the last run are left for the caller's check."""
    times: dict[str, list[tuple[float, float]]] = {"kpt": [], "ours": [], "kpt_cold": [], "ours_cold": []}
    for cold in (False, True):
        for _ in range(runs):
            for who in ("kpt", "ours"):
                target = ws / who
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(local, target)
                if cold:
                    shutil.rmtree(caches[who], ignore_errors=True)
                cmd = ["kpt", "pkg", "update", "kpt@v2"] if who == "kpt" else [KRM_MERGE, "update", f"{target}@v2"]
                times[who + ("_cold" if cold else "")].append(timed(cmd, ws, env))
    return times


def edited_case(ws: Path, edited: Path, files: list[str], env: dict[str, str], caches: dict[str, Path],
                runs: int) -> dict[str, Any]:
    """The user's case (issue 45): ``edited`` updated by both tools, checked first (krm-merge's answer equals kpt's
    as data; a wrong answer is recorded and stops the recording), then timed warm and cold."""
    check = timed_updates(ws, edited, env, caches, 1)  # the checked run (also fills both caches for the warm runs)
    theirs, ours = tree(ws / "kpt"), tree(ws / "ours")
    wrong = sorted(rel for rel in set(theirs) | set(ours) if theirs.get(rel) != ours.get(rel))
    times = timed_updates(ws, edited, env, caches, runs) if not wrong else check
    return {"files": files, "wrong": wrong,
            "kpt": median(times["kpt"], 0), "ours": median(times["ours"], 0),
            "kpt_cpu": median(times["kpt"], 1), "ours_cpu": median(times["ours"], 1),
            "kpt_cold": median(times["kpt_cold"], 0), "ours_cold": median(times["ours_cold"], 0)}


def common_options(parser: argparse.ArgumentParser, record_as: str) -> None:
    """The options every real-package bench takes: the two sources, runs, one package, where to record."""
    parser.add_argument("--catalog", required=True, help="git dir of nephio-project/catalog")
    parser.add_argument("--samples", required=True, help="git dir of kptdev/kpt-samples")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="one package directory (as in PACKAGES, e.g. workloads/free5gc/free5gc-cp)")
    parser.add_argument("--record", type=Path, help=f"record the run (every package) as `{record_as}` in this results "
                        "JSON (bench/results.json; then python bench/report.py regenerates the tables)")


def parse_options(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``argv`` read by ``parser`` (built with :func:`common_options`), the options checked together."""
    args = parser.parse_args(argv)
    if args.record and args.only:
        parser.error("--record needs every package (no --only)")
    if args.only and args.only not in {directory for _, directory, _, _ in PACKAGES}:
        parser.error(f"--only: no package {args.only!r} (one of: {', '.join(d for _, d, _, _ in PACKAGES)})")
    return args


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common_options(parser, "real_update")
    args = parse_options(parser, argv)
    sources = {"catalog": Path(args.catalog), "samples": Path(args.samples)}
    rows = []
    load_start, started_at = os.getloadavg()[0], datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="krm-merge-bench-real-") as tmp:
        for i, (src, directory, old, new) in enumerate(PACKAGES):
            if args.only and directory != args.only:
                continue
            row = case(Path(tmp) / str(i), sources[src], directory, (old, new), args.runs)
            rows.append(row)
            print(f"{directory} ({row['resources']} res): wall kpt {row['kpt']:.2f} s, krm-merge {row['ours']:.2f} s, "
                  f"ratio {row['ours'] / row['kpt']:.2f}; cold kpt {row['kpt_cold']:.2f} s, krm-merge "
                  f"{row['ours_cold']:.2f} s, ratio {row['ours_cold'] / row['kpt_cold']:.2f}; cpu kpt "
                  f"{row['kpt_cpu']:.2f} s, krm-merge {row['ours_cpu']:.2f} s, ratio {row['ours_cpu'] / row['kpt_cpu']:.2f}; "
                  f"no-op {row['noop']:.2f} s ({row['noop_cpu']:.2f} s cpu); review diff lines: upstream "
                  f"{row['upstream_lines']}, kpt {row['kpt_lines']}, krm-merge {row['ours_lines']}; "
                  f"files written {row['written']}, byte-identical to kpt {row['identical']}"
                  + (f"; differ: {row['different']}" if row["different"] else "")
                  + (f"; NOT EQUAL AS DATA: {row['wrong']}" if row["wrong"] else ""), flush=True)
            e = row["edited"]
            print(f"  user's edits ({', '.join(e['files']) or 'none'}): wall kpt {e['kpt']:.2f} s, krm-merge "
                  f"{e['ours']:.2f} s, ratio {e['ours'] / e['kpt']:.2f}; cold kpt {e['kpt_cold']:.2f} s, krm-merge "
                  f"{e['ours_cold']:.2f} s, ratio {e['ours_cold'] / e['kpt_cold']:.2f}; cpu ratio "
                  f"{e['ours_cpu'] / e['kpt_cpu']:.2f}" + (f"; NOT EQUAL AS DATA: {e['wrong']}" if e["wrong"] else ""),
                  flush=True)
    total = {k: sum(r[k] for r in rows) for k in ("kpt", "ours", "kpt_cold", "ours_cold", "kpt_cpu", "ours_cpu",
                                                  "written", "identical", "upstream_lines", "kpt_lines", "ours_lines")}
    print(f"sum: wall kpt {total['kpt']:.2f} s, krm-merge {total['ours']:.2f} s, ratio {total['ours'] / total['kpt']:.2f}; "
          f"cold kpt {total['kpt_cold']:.2f} s, krm-merge {total['ours_cold']:.2f} s, "
          f"ratio {total['ours_cold'] / total['kpt_cold']:.2f}; cpu kpt {total['kpt_cpu']:.2f} s, krm-merge "
          f"{total['ours_cpu']:.2f} s, ratio {total['ours_cpu'] / total['kpt_cpu']:.2f}; review diff lines: upstream "
          f"{total['upstream_lines']}, kpt {total['kpt_lines']}, krm-merge {total['ours_lines']} "
          f"({total['ours_lines'] / max(total['upstream_lines'], 1):.2f}x upstream's); "
          f"files byte-identical {total['identical']}/{total['written']}")
    edited = {k: sum(r["edited"][k] for r in rows) for k in ("kpt", "ours", "kpt_cold", "ours_cold")}
    print(f"user's edits, sum: wall kpt {edited['kpt']:.2f} s, krm-merge {edited['ours']:.2f} s, ratio "
          f"{edited['ours'] / edited['kpt']:.2f}; cold kpt {edited['kpt_cold']:.2f} s, krm-merge "
          f"{edited['ours_cold']:.2f} s, ratio {edited['ours_cold'] / edited['kpt_cold']:.2f}")
    wrong = any(r["wrong"] or r["edited"]["wrong"] for r in rows)
    if args.record and not wrong:
        record(args.record, rows, args.runs, started_at, load_start)
    return 1 if wrong else 0


def record(path: Path, rows: list[dict[str, Any]], runs: int, started_at: datetime.datetime, load_start: float) -> None:
    """Write the run into ``path``'s ``real_update`` (the rest of the file, bench/run.py's run, is kept)."""
    results = json.loads(path.read_text()) if path.exists() else {}
    results["real_update"] = {
        "date": started_at.strftime("%Y-%m-%d %H:%M UTC"), "runs": runs,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kpt": kpt_version(),
                    "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2)},
        "targets": {"wall_ratio": WALL_TARGET, "noop_seconds": NOOP_TARGET, "cold_ratio": COLD_TARGET,
                    "warm_ratio": WARM_TARGET, "diff_ratio": DIFF_TARGET, "small_package": SMALL_PACKAGE,
                    "noop_small_seconds": NOOP_SMALL_TARGET},
        "rows": [_rounded(r) for r in rows],
    }
    path.write_text(json.dumps(results, indent=1) + "\n")
    print(f"recorded in {path}; now: python bench/report.py")


def _rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 4) if isinstance(value, float) else value


def kpt_version() -> str:
    proc = subprocess.run(["kpt", "version"], capture_output=True, text=True, check=False)
    return (proc.stdout.strip().splitlines() or ["?"])[0]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
