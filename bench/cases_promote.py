"""Promote benchmark cases (issues 15 and 16), each checking its answer before it times anything.

    python bench/cases_promote.py                 # both cases at full size
    python bench/cases_promote.py --quick         # small sizes
    python bench/cases_promote.py --only grep

Cases (functions usable from bench/run.py too):

* ``grep``: a repository of 5,000 files with 200 ``$promotion`` markers across 20 pipelines,
  promoted in ONE ``krm-merge promote`` run (20 ``--set`` options), against
  ``grep -rl '$promotion'`` over the same tree, the two run alternately.  Target: ratio <= 2
  (wall, medians; issue 45, was 3).
* ``command-vs-run``: 40 files x 100 Deployments (one marker per file), ``krm-merge promote``
  against ``krm-merge run -- mode=promote`` doing the same edit.  Target: ratio <= 1.0.

The check: every file equals the original with exactly the marked values replaced (computed
here by a line edit, independent of the product), and both commands agree byte for byte.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
# Our commands run with cached bytecode, as an installed package or the image would (the
# cache goes to a temporary prefix, never into the checkout); set by main().
ENV: dict[str, str] | None = None

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{n}
  namespace: team-{team}
  labels:
    app.kubernetes.io/name: app-{n}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: app
        image: registry.example.net/app-{n}:1.0.{n}
        ports:
        - containerPort: 8080
        env:
        - name: LOG_LEVEL
          value: info
      - name: sidecar
        image: busybox:1.36 # pinned on purpose
"""

OLD_TAG_LINE = "        image: registry.example.net/app-{n}:1.0.{n}"


def _marked(n: int, pipeline: int) -> str:
    marker = f' # {{"$promotion": "default:pipe-{pipeline}:prod"}}'
    return DEPLOYMENT.format(n=n, team=n % 50).replace(OLD_TAG_LINE.format(n=n), OLD_TAG_LINE.format(n=n) + marker)


def _expected(n: int, pipeline: int, value: str) -> str:
    return _marked(n, pipeline).replace(f"registry.example.net/app-{n}:1.0.{n} #", f"{value(pipeline)} #")


def value_for(pipeline: int) -> str:
    """The promoted value of pipeline ``pipeline`` (a digest-pinned image reference)."""
    return f"registry.example.net/app:2.{pipeline}.0@sha256:{pipeline:064x}"


# ------------------------------------------------------------------------------ inputs


def build_repo(root: Path, files: int = 5000, markers: int = 200, pipelines: int = 20) -> dict[str, str]:
    """A repository of ``files`` one-Deployment files, ``markers`` of them marked; returns expected texts."""
    every = max(1, files // markers)
    expected: dict[str, str] = {}
    for n in range(files):
        d = root / f"team-{n % 50}" / f"app-{n}"
        d.mkdir(parents=True, exist_ok=True)
        rel = f"team-{n % 50}/app-{n}/deployment.yaml"
        if n % every == 0 and n // every < markers:
            pipeline = (n // every) % pipelines
            (root / rel).write_text(_marked(n, pipeline))
            expected[rel] = _expected(n, pipeline, value_for)
        else:
            text = DEPLOYMENT.format(n=n, team=n % 50)
            (root / rel).write_text(text)
            expected[rel] = text
    return expected


def build_multi_doc(root: Path, files: int = 40, docs: int = 100) -> dict[str, str]:
    """``files`` files of ``docs`` Deployments each, one marker per file; returns expected texts."""
    root.mkdir(parents=True, exist_ok=True)
    expected: dict[str, str] = {}
    for f in range(files):
        marked = (f * 37) % docs
        original, wanted = [], []
        for d in range(docs):
            n = f * docs + d
            if d == marked:
                original.append(_marked(n, 0))
                wanted.append(_expected(n, 0, value_for))
            else:
                original.append(DEPLOYMENT.format(n=n, team=n % 50))
                wanted.append(original[-1])
        rel = f"apps-{f}.yaml"
        (root / rel).write_text("---\n".join(original))
        expected[rel] = "---\n".join(wanted)
    return expected


# ------------------------------------------------------------------------------ checks


class WrongAnswer(Exception):
    """A command's output is not the expected tree."""


def check_tree(root: Path, expected: dict[str, str], what: str) -> None:
    """Every file equals its expected text (and no file was added)."""
    got = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}
    if set(got) != set(expected):
        raise WrongAnswer(f"{what}: files differ: {sorted(set(got) ^ set(expected))[:5]}")
    for rel, text in expected.items():
        if got[rel].read_text() != text:
            raise WrongAnswer(f"{what}: {rel} is not the expected text")


CPU: dict[str, list[float]] = {}  # command name -> CPU seconds (user+sys) of each timed run


def _timed(cmd: list[str], prepare: Callable[[], None] | None = None) -> float:
    if prepare is not None:
        prepare()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    key = cmd[0] if cmd[0] == "grep" else " ".join(Path(c).name for c in cmd[:2])
    CPU.setdefault(key, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1) or (done.returncode == 1 and cmd[0] != "grep"):
        raise WrongAnswer(f"{' '.join(cmd[:3])} failed: {done.stderr.decode()[-500:]}")
    return wall


def _alternate(runs: int, first: Callable[[], float], second: Callable[[], float]) -> tuple[float, float]:
    """The medians of ``runs`` runs of each, run in turn (first, second, first, ...): a machine whose speed
    drifts during the case moves both alike."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        a.append(first())
        b.append(second())
    return statistics.median(a), statistics.median(b)


# ------------------------------------------------------------------------------ cases


def set_options(pipelines: int) -> list[str]:
    """``--set`` options promoting every pipeline's prod environment."""
    out: list[str] = []
    for p in range(pipelines):
        out += ["--set", f"default:pipe-{p}:prod={value_for(p)}"]
    return out


def case_grep(work: Path, files: int = 5000, markers: int = 200, pipelines: int = 20, runs: int = 5) -> dict[str, float]:
    """One multi-promotion run over a large repository vs ``grep -rl``; checked, then timed."""
    pristine = work / "repo"
    expected = build_repo(pristine, files, markers, pipelines)
    tree = work / "repo-run"
    shutil.copytree(pristine, tree)
    cmd = [KRM_MERGE, "promote", str(tree), *set_options(pipelines)]
    _timed(cmd)
    check_tree(tree, expected, "krm-merge promote")
    _timed(cmd)  # a second run changes nothing
    check_tree(tree, expected, "krm-merge promote (second run)")
    grep = ["grep", "-rl", "$promotion", str(pristine)]
    dry = [KRM_MERGE, "promote", str(pristine), *set_options(pipelines), "--dry-run"]
    _timed(grep), _timed(dry)  # warm the page cache
    CPU.clear()
    g, ours = _alternate(runs, lambda: _timed(grep), lambda: _timed(dry))
    g_cpu, ours_cpu = statistics.median(CPU["grep"]), statistics.median(CPU["krm-merge promote"])
    return {"grep_s": g, "ours_s": ours, "ratio": ours / g, "target": 2.0, "grep_cpu_s": g_cpu,
            "ours_cpu_s": ours_cpu}


def case_command_vs_run(work: Path, files: int = 40, docs: int = 100, runs: int = 5) -> dict[str, float]:
    """The ``promote`` command vs ``run -- mode=promote`` on big multi-document files; checked, then timed."""
    pristine = work / "multi"
    expected = build_multi_doc(pristine, files, docs)
    a, b = work / "multi-command", work / "multi-run"
    command = [KRM_MERGE, "promote", str(a), "--set", f"default:pipe-0:prod={value_for(0)}"]
    run = [KRM_MERGE, "run", str(b), "--", "mode=promote", "pipeline=default/pipe-0", "environment=prod",
           f"value={value_for(0)}"]

    def fresh(target: Path) -> Callable[[], None]:
        def prepare() -> None:
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(pristine, target)
        return prepare

    _timed(command, fresh(a))
    _timed(run, fresh(b))
    check_tree(a, expected, "krm-merge promote")
    check_tree(b, expected, "krm-merge run -- mode=promote")
    ours, reference = _alternate(runs, lambda: _timed(command, fresh(a)), lambda: _timed(run, fresh(b)))
    return {"run_s": reference, "command_s": ours, "ratio": ours / reference, "target": 1.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="grep,command-vs-run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    chosen = args.only.split(",")
    failed = False
    global ENV
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        if "grep" in chosen:
            size = dict(files=500, markers=40, pipelines=20) if args.quick else {}
            r = case_grep(work, runs=args.runs, **size)
            print(f"promote 1 run, 20 pipelines vs grep -rl: grep {r['grep_s'] * 1000:.0f} ms, "
                  f"ours {r['ours_s'] * 1000:.0f} ms, ratio {r['ratio']:.2f} (target <= {r['target']}); "
                  f"CPU grep {r['grep_cpu_s'] * 1000:.0f} ms, ours {r['ours_cpu_s'] * 1000:.0f} ms; "
                  f"load average {os.getloadavg()[0]:.1f}")
            failed |= r["ratio"] > r["target"]
        if "command-vs-run" in chosen:
            size = dict(files=8, docs=50) if args.quick else {}
            r = case_command_vs_run(work, runs=args.runs, **size)
            print(f"promote command vs run -- mode=promote: run {r['run_s'] * 1000:.0f} ms, "
                  f"command {r['command_s'] * 1000:.0f} ms, ratio {r['ratio']:.2f} (target <= {r['target']})")
            failed |= r["ratio"] > r["target"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
