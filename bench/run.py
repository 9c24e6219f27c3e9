"""krm-merge benchmarks against the reference tools (issue 7).

    python bench/run.py --quick          # < 3 minutes: small sizes, kpt pkg update at 500 resources
    python bench/run.py                  # the targets' sizes (kpt pkg update at 2,000 takes ~2 min)
    python bench/run.py --only startup,reorder

Every case generates its inputs (deterministically), runs the reference
command and ours alternately, and prints the median wall time, the median
CPU time (user+sys, which the shared 2-vCPU machine disturbs less), the ratio
ours/reference and the peak resident memory of each (from ``wait4``'s rusage,
which includes the command's children: kpt's function processes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import inputs  # noqa: E402

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
# Our commands run with cached bytecode, as an installed package or the image
# (which precompiles .pyc) would; the cache goes to a temporary prefix, never
# into the checkout.  Without it every run recompiles every module (~40 ms).
OURS_ENV: dict[str, str] = {}


@dataclass
class Sample:
    """One run of one command."""

    wall: float
    cpu: float
    rss_mb: float


@dataclass
class Row:
    """The result of one case at one size."""

    case: str
    size: str
    megabytes: float
    reference: list[Sample] = field(default_factory=list)
    ours: list[Sample] = field(default_factory=list)
    target: str = ""

    def median(self, which: str, attr: str) -> float:
        samples = self.reference if which == "reference" else self.ours
        return statistics.median(getattr(s, attr) for s in samples) if samples else float("nan")


class CommandFailed(Exception):
    """A benchmarked command exited non-zero."""


def run_measured(cmd: list[str], *, stdin: Path | None = None, cwd: Path | None = None,
                 env: dict[str, str] | None = None, prepare: Callable[[], None] | None = None) -> Sample:
    """Run ``cmd`` once; its wall time, CPU time and peak RSS (children included)."""
    if prepare is not None:
        prepare()
    if env is None and OURS_ENV:
        env = OURS_ENV  # kpt passes its environment on to the function it runs
    stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=stdin_file, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if stdin:
            stdin_file.close()  # type: ignore[union-attr]
        if proc.returncode != 0:
            err.seek(0)
            raise CommandFailed(f"{' '.join(cmd[:4])} ... exited {proc.returncode}: {err.read()[-600:].decode(errors='replace')}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def alternate(row: Row, runs: int, reference: Callable[[], Sample], ours: Callable[[], Sample],
              reference_runs: int | None = None) -> Row:
    """Run reference and ours alternately (after one warm-up of each)."""
    reference_runs = runs if reference_runs is None else reference_runs
    if reference_runs > 1:  # a single slow reference run (kpt pkg update) is not worth a warm-up
        reference()
    ours()
    for n in range(max(runs, reference_runs)):
        if n < reference_runs:
            row.reference.append(reference())
        if n < runs:
            row.ours.append(ours())
    return row


def print_row(row: Row) -> None:
    ref_w, our_w = row.median("reference", "wall"), row.median("ours", "wall")
    ref_c, our_c = row.median("reference", "cpu"), row.median("ours", "cpu")
    ref_m, our_m = row.median("reference", "rss_mb"), row.median("ours", "rss_mb")
    per_mb = f"{our_w / row.megabytes:6.2f}" if row.megabytes else "     -"
    print(
        f"{row.case:<15} {row.size:>12} {row.megabytes:7.2f} | {ref_w:8.3f} {our_w:8.3f} {_ratio(our_w, ref_w)} "
        f"| {ref_c:7.3f} {our_c:7.3f} {_ratio(our_c, ref_c)} | {ref_m:6.0f} {our_m:6.0f} {our_m / ref_m:5.2f}x "
        f"| {per_mb} | {row.target}",
        flush=True,
    )


def _ratio(ours: float, reference: float) -> str:
    ratio = ours / reference
    return f"{ratio:6.3f}x" if ratio < 0.1 else f"{ratio:6.2f}x"


HEADER = (
    f"{'case':<15} {'size':>12} {'MB':>7} | {'ref s':>8} {'ours s':>8} {'ratio':>7} | {'ref cpu':>7} "
    f"{'our cpu':>7} {'ratio':>7} | {'ref MB':>6} {'our MB':>6} {'ratio':>6} | {'s/MB':>6} | target"
)


# --- 1. reorder-merge vs kubectl patch --local ---------------------------------------


def case_reorder(work: Path, sizes: list[int], runs: int) -> list[Row]:
    rows = []
    patch = work / "patch.yaml"
    patch.write_text(inputs.PATCH)
    config = inputs.reorder_merge_config(inputs.PATCH, "kind: Deployment")
    for count in sizes:
        docs = [inputs.deployment(n) for n in range(count)]
        objects = work / f"deployments-{count}.yaml"
        objects.write_text(inputs.multi_doc(docs))
        rl = work / f"rl-{count}.yaml"
        rl.write_text(inputs.resource_list(docs, config))
        kubectl = ["kubectl", "patch", "--local", "-f", str(objects), "--type", "strategic",
                   "--patch-file", str(patch), "-o", "yaml"]
        row = Row("reorder-merge", f"{count} deploy", rl.stat().st_size / 1e6,
                  target="ratio <= 1.0, memory <= 1.5x" if count == 1000 else "growth")
        alternate(row, runs, lambda: run_measured(kubectl), lambda: run_measured([KRM_MERGE], stdin=rl))
        print_row(row)
        rows.append(row)
    return rows


# --- 2. pass-through: kpt fn eval --exec krm-merge vs --exec cat ------------------------


def case_passthrough(work: Path, megabytes: list[float], runs: int) -> list[Row]:
    rows = []
    config = work / "fn-config.yaml"
    config.write_text(inputs.reorder_merge_config(inputs.ANNOTATE_PATCH, "labelSelector: bench/group=g0"))
    for size in megabytes:
        count = max(50, int(size * 1e6 / 570))
        pkg = work / f"pkg-{count}"
        written = inputs.write_package(pkg, count, per_file=10)
        base = ["kpt", "fn", "eval", str(pkg), "--fn-config", str(config), "-o", "stdout", "--exec"]
        row = Row("pass-through", f"{count} res", written / 1e6,
                  target="ratio <= 1.10" if size >= 9 else "growth")
        alternate(row, runs, lambda: run_measured(base + ["cat"]), lambda: run_measured(base + [KRM_MERGE]))
        print_row(row)
        rows.append(row)
    return rows


# --- 3. resource-merge: krm-merge update vs kpt pkg update -------------------------------


def _git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _edit_some(pkg: Path, count: int, every: int, offset: int, value: str) -> None:
    """Change ``replicas``/``retries``/``port`` of every ``every``-th resource (5% with 20)."""
    for n in range(offset, count, every):
        path = next(pkg.glob(f"team-*/res-{n}.yaml"))
        text = path.read_text()
        text = text.replace("  replicas: ", f"  replicas: {value}", 1) if "replicas:" in text else text
        text = text.replace('retries: "3"', f'retries: "{value}"').replace("port: 80\n", f"port: {value}\n")
        path.write_text(text)


def case_update(work: Path, sizes: list[int], kpt_sizes: set[int], runs: int) -> list[Row]:
    rows = []
    for count in sizes:
        root = work / f"update-{count}"
        env = dict(OURS_ENV or os.environ, HOME=str(root / "home"), TMPDIR=str(root / "tmp"),
                   GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
        for d in ("home", "tmp", "up", "ws"):
            (root / d).mkdir(parents=True)
        up = root / "up"
        _git(["init", "-q", "-b", "main"], up, env)
        written = inputs.write_package(up / "pkg", count, per_file=1)
        _git(["add", "-A"], up, env)
        _git(["commit", "-qm", "original"], up, env)
        origin = root / "origin"
        shutil.copytree(up / "pkg", origin)
        subprocess.run(["kpt", "pkg", "get", f"file://{up}.git/pkg@main", "local"], cwd=root / "ws", env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        local = root / "ws" / "local"
        _edit_some(local, count, 20, 1, "7")  # 5% changed locally
        _edit_some(up / "pkg", count, 20, 2, "9")  # 5% changed upstream
        _git(["commit", "-qam", "updated"], up, env)
        upstream = up / "pkg"
        run_dir = root / "ws" / "run"

        def fresh() -> None:
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.copytree(local, run_dir)

        kpt = ["kpt", "pkg", "update", "run"]
        ours = [KRM_MERGE, "update", str(run_dir), "--origin", str(origin), "--upstream", str(upstream)]
        with_kpt = count in kpt_sizes
        row = Row("resource-merge", f"{count} res", written / 1e6,
                  target="ratio <= 0.02" if count >= 2000 else "growth (the target is at 2,000)")
        alternate(row, runs,
                  lambda: run_measured(kpt, cwd=root / "ws", env=env, prepare=fresh),
                  lambda: run_measured(ours, prepare=fresh),
                  reference_runs=1 if with_kpt else 0)
        if row.reference:
            print_row(row)
        else:
            our_w = row.median("ours", "wall")
            print(f"{row.case:<15} {row.size:>12} {row.megabytes:7.2f} | {'(no kpt)':>8} {our_w:8.3f}"
                  f"        | {'':7} {row.median('ours', 'cpu'):7.3f}        | {'':6} "
                  f"{row.median('ours', 'rss_mb'):6.0f}        | {our_w / row.megabytes:6.2f} | {row.target}", flush=True)
        rows.append(row)
    return rows


# --- 4. promote vs grep -rl ----------------------------------------------------------------


def case_promote(work: Path, files: int, runs: int) -> list[Row]:
    root = work / "promote"
    inputs.write_promote_tree(root, files, 50)
    size = sum(p.stat().st_size for p in root.rglob("*.yaml")) / 1e6
    grep = ["grep", "-rl", "$promotion", str(root)]
    counter = iter(range(10**6))

    def ours() -> Sample:
        # A new value each run, so every run rewrites the 50 marked files.
        value = f"2.0.{next(counter)}"
        return run_measured([KRM_MERGE, "promote", str(root), "--pipeline", "default/podinfo",
                             "--environment", "prod", "--value", value])

    row = Row("promote", f"{files} files", size, target="ratio <= 3")
    alternate(row, runs, lambda: run_measured(grep), ours)
    print_row(row)
    return [row]


# --- 5. startup -----------------------------------------------------------------------------


def case_startup(work: Path, runs: int) -> list[Row]:
    rl = work / "one.yaml"
    rl.write_text(inputs.resource_list([inputs.deployment(0)], inputs.reorder_merge_config(inputs.PATCH, "kind: Deployment")))
    row = Row("startup", "1 item", rl.stat().st_size / 1e6, target="ratio <= 1.5")
    alternate(row, runs, lambda: run_measured(["kubectl", "version", "--client"]),
              lambda: run_measured([KRM_MERGE], stdin=rl))
    print_row(row)
    print_import_times(rl)
    return [row]


def print_import_times(rl: Path) -> None:
    """The slowest top-level imports of a one-item run (``python -X importtime``)."""
    with open(rl, "rb") as stdin:
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "krm_merge"], stdin=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=OURS_ENV or None)
    rows = []
    for line in proc.stderr.decode().splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative_us, name = line[len("import time:"):].split("|")
        if not name.startswith("  "):  # nested imports are indented further
            rows.append((int(cumulative_us), name.strip()))
    total = sum(us for us, _ in rows)
    top = ", ".join(f"{name} {us / 1000:.1f}" for us, name in sorted(rows, reverse=True)[:8])
    print(f"{'':15} imports: {total / 1000:.1f} ms in top-level packages; slowest (ms): {top}")


# --- main -----------------------------------------------------------------------------------

CASES = ("startup", "reorder", "passthrough", "promote", "update")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, kpt pkg update at 500 resources only")
    parser.add_argument("--only", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    parser.add_argument("--runs", type=int, default=0, help="runs per command (default 3 quick / 5 full)")
    args = parser.parse_args()
    chosen = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in CASES]
    if unknown:
        parser.error(f"unknown case {unknown[0]!r}; cases: {', '.join(CASES)}")
    runs = args.runs or (3 if args.quick else 5)
    print(f"krm-merge benchmarks ({'quick' if args.quick else 'full'}), {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}, {runs} runs per command; medians")
    print(HEADER)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="krm-merge-bench-") as tmp:
        work = Path(tmp)
        OURS_ENV.update({k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        OURS_ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        try:
            if "startup" in chosen:
                case_startup(work, runs * 3)
            if "reorder" in chosen:
                # ×1, ×4, ×16; the 1,000-Deployment target is in both modes.
                case_reorder(work, [62, 250, 1000] if args.quick else [1000, 4000, 16000], runs)
            if "passthrough" in chosen:
                # ×1, ×4, ×16: the 10 MB target is the largest full size.
                sizes = [0.04, 0.156, 0.625] if args.quick else [0.625, 2.5, 10.0]
                case_passthrough(work, sizes, runs)
            if "promote" in chosen:
                case_promote(work, 5000, runs)
            if "update" in chosen:
                if args.quick:
                    case_update(work, [500, 2000], {500}, runs)
                else:
                    case_update(work, [500, 2000], {500, 2000}, runs)
        except CommandFailed as err:
            print(f"bench: error: {err}", file=sys.stderr)
            return 1
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
