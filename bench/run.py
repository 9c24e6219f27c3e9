"""krm-merge benchmarks against the reference tools (issues 7 and 15).

    python bench/run.py --quick          # small sizes (a few minutes)
    python bench/run.py                  # the targets' sizes; writes bench/results.json
    python bench/run.py --only startup,reorder --runs 3
    python bench/run.py --only update --merge   # re-measure these cases' rows in bench/results.json

Every case generates its inputs (deterministically) and first runs both
commands once and CHECKS their answers: our output must equal the reference
tool's (as data, item by item) or the expected result computed here from the
inputs.  A wrong answer stops the bench with an error; nothing is timed
before the check passed, and every timed run must print exactly the checked
output again.  Then the reference command and ours run alternately and the
medians of wall time, CPU time (user+sys from ``wait4``; the shared machine
disturbs it far less, so targets are judged on it) and peak RSS (children
included: kpt's function processes) are printed and written as JSON, from
which ``bench/report.py`` generates the README's lines and the docs tables.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import inputs  # noqa: E402

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
# Our commands run with cached bytecode, as an installed package or the image
# (which precompiles .pyc) would; the cache goes to a temporary prefix, never
# into the checkout.  Without it every run recompiles every module (~40 ms).
OURS_ENV: dict[str, str] = {}
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
GROWTH_LIMIT = 1.25  # linear: CPU grows at most 1.25 × the input size ratio


class WrongAnswer(Exception):
    """A command's output is not the right answer: the bench stops."""


class CommandFailed(Exception):
    """A benchmarked command exited non-zero."""


@dataclass
class Sample:
    """One run of one command."""

    wall: float
    cpu: float
    rss_mb: float


@dataclass
class Target:
    """Upper bounds of ours/reference (CPU time and peak memory)."""

    time: float | None = None
    memory: float | None = None
    note: str = ""  # what a row without a bound shows instead ("growth" by default)

    def describe(self) -> str:
        parts = ([f"time <= {self.time:g}"] if self.time is not None else []) + (
            [f"memory <= {self.memory:g}"] if self.memory is not None else [])
        return ", ".join(parts) or self.note or "growth"


@dataclass
class Row:
    """The result of one case at one size."""

    case: str
    size: str
    count: int
    megabytes: float
    reference_command: str = ""
    reference: list[Sample] = field(default_factory=list)
    ours: list[Sample] = field(default_factory=list)
    target: Target = field(default_factory=Target)
    check: str = ""

    def median(self, which: str, attr: str) -> float | None:
        samples = self.reference if which == "reference" else self.ours
        return statistics.median(getattr(s, attr) for s in samples) if samples else None

    def ratio(self, attr: str) -> float | None:
        ours, ref = self.median("ours", attr), self.median("reference", attr)
        return ours / ref if ours is not None and ref else None

    def met(self) -> bool | None:
        """Whether the target holds (None: no target at this size, or the reference was not run)."""
        if not self.reference:
            return None
        verdicts = []
        if self.target.time is not None:
            verdicts.append((self.ratio("cpu") or float("inf")) <= self.target.time)
        if self.target.memory is not None:
            verdicts.append((self.ratio("rss_mb") or float("inf")) <= self.target.memory)
        return all(verdicts) if verdicts else None

    def to_json(self) -> dict[str, Any]:
        def side(which: str) -> dict[str, float] | None:
            samples = self.reference if which == "reference" else self.ours
            if not samples:
                return None
            return {attr: round(self.median(which, attr) or 0.0, 4) for attr in ("wall", "cpu", "rss_mb")}

        return {
            "case": self.case, "size": self.size, "count": self.count, "megabytes": round(self.megabytes, 3),
            "reference_command": self.reference_command, "reference": side("reference"), "ours": side("ours"),
            "runs": {"reference": len(self.reference), "ours": len(self.ours)},
            "ratio": {"wall": _round(self.ratio("wall")), "cpu": _round(self.ratio("cpu")),
                      "memory": _round(self.ratio("rss_mb"))},
            "target": asdict(self.target), "met": self.met(), "check": self.check,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# --- running and checking -------------------------------------------------------------


def run_measured(cmd: list[str], *, stdin: Path | None = None, stdout: Path | None = None, cwd: Path | None = None,
                 env: dict[str, str] | None = None, prepare: Callable[[], None] | None = None, exit_code: int = 0) -> Sample:
    """Run ``cmd`` once; its wall time, CPU time and peak RSS (children included).  ``exit_code``: the one it must
    exit with (``update --conflicts mark`` exits 3 when it left markers)."""
    if prepare is not None:
        prepare()
    if env is None and OURS_ENV:
        env = OURS_ENV  # kpt passes its environment on to the function it runs
    stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL
    out_file = open(stdout, "wb") if stdout else subprocess.DEVNULL
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss:
        # Linux carries the forking process's peak RSS into the child's ru_maxrss
        # (and this process holds parsed outputs for the checks): GNU time, a small
        # process, reports the command's own peak instead.
        wrapped = [TIME, "-o", rss.name, "-f", "%M", *cmd] if TIME else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdin=stdin_file, stdout=out_file, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        for f in (stdin_file, out_file):
            if not isinstance(f, int):
                f.close()
        code = os.waitstatus_to_exitcode(status)
        if code != exit_code:
            err.seek(0)
            raise CommandFailed(f"{' '.join(cmd[:4])} ... exited {code}: {err.read()[-600:].decode(errors='replace')}")
        peak_kb = int(rss.read().split()[-1]) if TIME else usage.ru_maxrss
    return Sample(wall, usage.ru_utime + usage.ru_stime, peak_kb / 1024)


TIME = shutil.which("time", path="/usr/bin:/bin") if Path("/usr/bin/time").exists() else None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def same_output(run: Callable[[Path], Sample], out: Path, what: str) -> Callable[[], Sample]:
    """A timed runner that fails unless each run prints exactly the output checked before."""
    expected = _digest(out)

    def timed() -> Sample:
        sample = run(out)
        if _digest(out) != expected:
            raise WrongAnswer(f"{what}: a timed run printed something else than the checked run")
        return sample

    return timed


def alternate(row: Row, runs: int, reference: Callable[[], Sample] | None, ours: Callable[[], Sample],
              reference_runs: int | None = None) -> Row:
    """Run reference and ours alternately (the checked runs were the warm-up)."""
    reference_runs = (runs if reference_runs is None else reference_runs) if reference else 0
    for n in range(max(runs, reference_runs)):
        if n < reference_runs and reference is not None:
            row.reference.append(reference())
        if n < runs:
            row.ours.append(ours())
    return row


def resource_list_items(path: Path) -> list[Any]:
    data = yaml.load(path.read_text(), Loader=LOADER)
    if not isinstance(data, dict) or data.get("kind") != "ResourceList":
        raise WrongAnswer(f"{path.name}: not a ResourceList")
    errors = [r for r in data.get("results") or [] if r.get("severity") == "error"]
    if errors:
        raise WrongAnswer(f"{path.name}: error results: {errors[:2]}")
    return list(data.get("items") or [])


def kubectl_objects(path: Path) -> list[Any]:
    """kubectl -o yaml prints the objects one after another without ``---``; keys sorted, apiVersion first."""
    parts = [p for p in re.split(r"(?m)^(?=apiVersion: )", path.read_text()) if p.strip()]
    return [yaml.load(p, Loader=LOADER) for p in parts]


def check_equal_items(ours: list[Any], expected: list[Any], what: str) -> str:
    """Item by item, as data; the first difference is named."""
    if len(ours) != len(expected):
        raise WrongAnswer(f"{what}: {len(ours)} items, expected {len(expected)}")
    for n, (a, b) in enumerate(zip(ours, expected)):
        if a != b:
            name = (b.get("metadata") or {}).get("name") if isinstance(b, dict) else n
            raise WrongAnswer(f"{what}: item {n + 1} ({name}) differs from the expected object:\n"
                              f"ours:     {json.dumps(a, sort_keys=True)[:800]}\nexpected: {json.dumps(b, sort_keys=True)[:800]}")
    return f"{len(ours)} items equal"


# --- output -----------------------------------------------------------------------------


def print_row(row: Row) -> None:
    def f(v: float | None, fmt: str) -> str:
        return format(v, fmt) if v is not None else "-"

    ref_w, our_w = row.median("reference", "wall"), row.median("ours", "wall")
    ref_c, our_c = row.median("reference", "cpu"), row.median("ours", "cpu")
    ref_m, our_m = row.median("reference", "rss_mb"), row.median("ours", "rss_mb")
    met = row.met()
    verdict = "" if met is None else (" met" if met else " MISSED")
    print(
        f"{row.case:<15} {row.size:>14} {row.megabytes:7.2f} | {f(ref_w, '8.3f'):>8} {f(our_w, '8.3f'):>8} "
        f"{f(row.ratio('wall'), '6.3f'):>7} | {f(ref_c, '7.3f'):>7} {f(our_c, '7.3f'):>7} {f(row.ratio('cpu'), '6.3f'):>7} "
        f"| {f(ref_m, '6.0f'):>6} {f(our_m, '6.0f'):>6} {f(row.ratio('rss_mb'), '5.2f'):>6} | {row.target.describe()}{verdict}",
        flush=True,
    )


HEADER = (
    f"{'case':<15} {'size':>14} {'MB':>7} | {'ref s':>8} {'ours s':>8} {'ratio':>7} | {'ref cpu':>7} "
    f"{'our cpu':>7} {'ratio':>7} | {'ref MB':>6} {'our MB':>6} {'ratio':>6} | target (CPU time, memory)"
)


def growth(rows: list[Row]) -> dict[str, Any]:
    """CPU time per size ratio against the smallest size: linear when each is <= GROWTH_LIMIT."""
    base = rows[0]
    steps = []
    for row in rows[1:]:
        size_ratio = row.megabytes / base.megabytes
        cpu_ratio = (row.median("ours", "cpu") or 0.0) / (base.median("ours", "cpu") or 1.0)
        steps.append({"size": row.size, "size_ratio": round(size_ratio, 2), "cpu_ratio": round(cpu_ratio, 2),
                      "per_size": round(cpu_ratio / size_ratio, 3)})
    linear = all(s["per_size"] <= GROWTH_LIMIT for s in steps)
    shown = ", ".join(f"×{s['size_ratio']:g} input: ×{s['cpu_ratio']:g} CPU ({s['per_size']:.2f})" for s in steps)
    print(f"{'':15} growth from {base.size}: {shown} -> {'linear' if linear else 'NOT LINEAR'} "
          f"(limit {GROWTH_LIMIT} × size ratio)", flush=True)
    return {"case": base.case, "from": base.size, "steps": steps, "limit": GROWTH_LIMIT, "linear": linear}


# --- 1. startup -------------------------------------------------------------------------------


def case_startup(work: Path, runs: int) -> list[Row]:
    doc = inputs.deployment(0)
    rl = work / "one.yaml"
    rl.write_text(inputs.resource_list([doc], inputs.reorder_merge_config(inputs.PATCH, "kind: Deployment")))
    expected = _kubectl_patched(work, [doc], "one")
    out = work / "one.out"
    ours = lambda o: run_measured([KRM_MERGE], stdin=rl, stdout=o)  # noqa: E731
    ours(out)
    row = Row("startup", "1 item", 1, rl.stat().st_size / 1e6, "kubectl version --client", target=Target(time=1.5))
    row.check = check_equal_items(resource_list_items(out), expected, "startup")
    version = ["kubectl", "version", "--client"]
    run_measured(version)
    alternate(row, runs, lambda: run_measured(version), same_output(ours, out, "startup"))
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


# --- 1b. each start-up path against the interpreter's own start-up (issue 45) ------------------------------

STARTUP_NOTE = "start-up: against python -c pass"


def _git_repo_package(work: Path) -> tuple[Path, dict[str, str]]:
    """An upstream git repository (tag v1) and a package fetched from it at v1 (Kptfile with its lock), and the
    environment that keeps git's and krm-merge's caches inside ``work``: ``update PKG@v1`` is a no-op."""
    up, local = work / "startup-up", work / "startup-local"
    (up / "pkg").mkdir(parents=True)
    local.mkdir()
    env = dict(OURS_ENV or os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@e", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@e", GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null",
               XDG_CACHE_HOME=str(work / "startup-cache"))
    docs = {f"deploy-{n}.yaml": inputs.deployment(n) for n in range(3)}
    for name, text in docs.items():
        (up / "pkg" / name).write_text(text)
        (local / name).write_text(text)
    (up / "pkg" / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n")
    _git(["init", "-q", "-b", "main"], up, env)
    _git(["add", "-A"], up, env)
    _git(["commit", "-q", "-m", "v1"], up, env)
    _git(["tag", "v1"], up, env)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=up, env=env, capture_output=True, text=True,
                            check=True).stdout.strip()
    git = f"    repo: file://{up}\n    directory: /pkg\n    ref: v1\n"
    (local / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: startup-local\nupstream:\n  type: git\n  git:\n"
        f"{git}  updateStrategy: resource-merge\nupstreamLock:\n  type: git\n  git:\n{git}    commit: {commit}\n")
    return local, env


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def case_startup_paths(work: Path, runs: int) -> list[Row]:
    """A no-op update, a promote --dry-run and a function run on stdin, each alternating with `python -c pass`.

    The three paths of tests/architecture/test_start_up.py's budgets: what each costs above the
    interpreter's own start-up, in the same run (no target; issue 45 asks a no-op update of a small
    package <= 60 ms, which bench/cases_real_update.py judges on real packages).
    """
    python_pass = [sys.executable, "-c", "pass"]
    rows = []
    # no-op update: nothing may change, and the run must say so
    local, env = _git_repo_package(work)
    before = _tree_digest(local)
    update = [KRM_MERGE, "update", f"{local}@v1"]
    err = work / "startup-update.err"

    def noop() -> Sample:
        sample = run_measured(update, stdout=err, env=env)
        if _tree_digest(local) != before:
            raise WrongAnswer("start-up: a no-op update changed the package")
        return sample

    noop()
    row = Row("start-up", "no-op update", 3, 0.0, "python -c pass", target=Target(note=STARTUP_NOTE),
              check="the package unchanged after every run")
    rows.append(alternate(row, runs, lambda: run_measured(python_pass), noop))
    # promote --dry-run of one marked file among a few: the diff names the new value, no file changes
    tree = work / "startup-promote"
    tree.mkdir()
    for n in range(3):
        text = inputs.deployment(n)
        if n == 0:
            text = text.replace("  replicas: 1\n", '  replicas: 1 # {"$promotion": "default:web:prod"}\n', 1)
        (tree / f"deploy-{n}.yaml").write_text(text)
    before = _tree_digest(tree)
    promote = [KRM_MERGE, "promote", str(tree), "--set", "default:web:prod=7", "--dry-run"]
    out = work / "startup-promote.out"
    run_measured(promote, stdout=out)
    if '+  replicas: "7" # ' not in out.read_text() or _tree_digest(tree) != before:
        raise WrongAnswer("start-up: promote --dry-run did not print the promoted value, or changed a file")
    row = Row("start-up", "promote --dry-run", 3, 0.0, "python -c pass", target=Target(note=STARTUP_NOTE),
              check="the dry run's diff sets the marked value; no file changed")
    rows.append(alternate(row, runs, lambda: run_measured(python_pass),
                          same_output(lambda o: run_measured(promote, stdout=o), out, "start-up promote")))
    # a function run on stdin: case_startup's one-item reorder-merge ResourceList, its output checked there
    rl, out = work / "one.yaml", work / "one.out"
    row = Row("start-up", "function run", 1, rl.stat().st_size / 1e6, "python -c pass",
              target=Target(note=STARTUP_NOTE), check="the output of the checked startup run")
    rows.append(alternate(row, runs, lambda: run_measured(python_pass),
                          same_output(lambda o: run_measured([KRM_MERGE], stdin=rl, stdout=o), out, "start-up")))
    for row in rows:
        print_row(row)
    return rows


# --- 2. reorder-merge vs kubectl patch --local --------------------------------------------------


def _kubectl_patch_cmd(objects: Path, patch: Path) -> list[str]:
    return ["kubectl", "patch", "--local", "-f", str(objects), "--type", "strategic", "--patch-file", str(patch),
            "-o", "yaml"]


def _kubectl_patched(work: Path, docs: list[str], tag: str) -> list[Any]:
    objects, patch, out = work / f"kubectl-{tag}.yaml", work / "patch.yaml", work / f"kubectl-{tag}.out"
    objects.write_text(inputs.multi_doc(docs))
    patch.write_text(inputs.PATCH)
    run_measured(_kubectl_patch_cmd(objects, patch), stdout=out)
    return kubectl_objects(out)


def case_reorder(work: Path, case: str, sizes: list[int], runs: int, targets: dict[int, Target]) -> list[Row]:
    """``case`` "reorder-merge": one patch with a kind selector; "patches": one named patch document per item."""
    rows = []
    patch = work / "patch.yaml"
    patch.write_text(inputs.PATCH)
    for count in sizes:
        docs = [inputs.deployment(n) for n in range(count)]
        objects = work / f"deployments-{count}.yaml"
        objects.write_text(inputs.multi_doc(docs))
        if case == "reorder-merge":
            config = inputs.reorder_merge_config(inputs.PATCH, "kind: Deployment")
            size = f"{count:,} Deployments"
        else:
            config = inputs.configmap_config("patch", [inputs.named_patch(n) for n in range(count)])
            size = f"{count:,} × {count:,}"
        rl = work / f"rl-{case}-{count}.yaml"
        rl.write_text(inputs.resource_list(docs, config))
        del docs
        kubectl = _kubectl_patch_cmd(objects, patch)
        ref_out, our_out = work / f"kubectl-{count}.out", work / f"ours-{case}-{count}.out"
        reference = lambda o, cmd=kubectl: run_measured(cmd, stdout=o)  # noqa: E731
        ours = lambda o, rl=rl: run_measured([KRM_MERGE], stdin=rl, stdout=o)  # noqa: E731
        reference(ref_out)
        ours(our_out)
        row = Row(case, size, count, rl.stat().st_size / 1e6, "kubectl patch --local", target=targets.get(count, Target()))
        row.check = check_equal_items(resource_list_items(our_out), kubectl_objects(ref_out), f"{case} at {count}") + \
            " with kubectl's"
        alternate(row, runs, same_output(reference, ref_out, "kubectl"), same_output(ours, our_out, case))
        print_row(row)
        rows.append(row)
        for p in (rl, objects, ref_out, our_out):
            p.unlink()
    return rows


# --- 3. offline apply of N objects -------------------------------------------------------------


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _expected_applied(n: int) -> dict[str, Any]:
    """Deployment ``n`` after offline apply of :func:`inputs.desired_object` (kubectl's 3-way rules,
    no previous last-applied: desired fields set, nothing removed, the annotation records desired)."""
    item = yaml.load(inputs.deployment(n), Loader=LOADER)
    desired = yaml.load(inputs.desired_object(n), Loader=LOADER)
    item["spec"]["replicas"] = 9
    item["spec"]["template"]["spec"]["containers"][0]["image"] = inputs.DESIRED_IMAGE.format(n=n)
    desired["metadata"]["annotations"] = {}
    item["metadata"]["annotations"][LAST_APPLIED] = json.dumps(desired, sort_keys=True, separators=(",", ":")) + "\n"
    return item


def case_apply(work: Path, sizes: list[int], runs: int) -> list[Row]:
    rows = []
    for count in sizes:
        docs = [inputs.deployment(n) for n in range(count)]
        config = inputs.configmap_config("desired", [inputs.desired_object(n) for n in range(count)])
        rl = work / f"rl-apply-{count}.yaml"
        rl.write_text(inputs.resource_list(docs, config))
        del docs
        out = work / f"ours-apply-{count}.out"
        ours = lambda o, rl=rl: run_measured([KRM_MERGE], stdin=rl, stdout=o)  # noqa: E731
        ours(out)
        row = Row("offline apply", f"{count:,} objects", count, rl.stat().st_size / 1e6)
        items = resource_list_items(out)
        for item in items:  # the annotation is JSON: compare it as data, key order aside
            ann = item["metadata"]["annotations"]
            ann[LAST_APPLIED] = json.dumps(json.loads(ann[LAST_APPLIED]), sort_keys=True, separators=(",", ":")) + "\n"
        row.check = check_equal_items(items, [_expected_applied(n) for n in range(count)], f"offline apply at {count}")
        alternate(row, runs, None, same_output(ours, out, "offline apply"))
        print_row(row)
        rows.append(row)
        rl.unlink()
        out.unlink()
    return rows


# --- 4. pass-through: kpt fn eval --exec krm-merge vs --exec cat ---------------------------------


def case_passthrough(work: Path, megabytes: list[float], runs: int, big_target: float) -> list[Row]:
    rows = []
    config = work / "fn-config.yaml"
    config.write_text(inputs.reorder_merge_config(inputs.ANNOTATE_PATCH, "labelSelector: bench/group=g0"))
    for size in megabytes:
        count = max(50, int(size * 1e6 / 570))
        pkg = work / f"pkg-{count}"
        written = inputs.write_package(pkg, count, per_file=10)
        base = ["kpt", "fn", "eval", str(pkg), "--fn-config", str(config), "-o", "stdout", "--exec"]
        ref_out, our_out = work / f"cat-{count}.out", work / f"pass-{count}.out"
        reference = lambda o, base=base: run_measured(base + ["cat"], stdout=o)  # noqa: E731
        ours = lambda o, base=base: run_measured(base + [KRM_MERGE], stdout=o)  # noqa: E731
        reference(ref_out)
        ours(our_out)
        expected = resource_list_items(ref_out)
        touched = 0
        for item in expected:
            if (item["metadata"].get("labels") or {}).get("bench/group") == "g0":
                item["metadata"].setdefault("annotations", {})["bench.example.com/touched"] = "true"
                touched += 1
        row = Row("pass-through", f"{count:,} resources", count, written / 1e6, "kpt fn eval --exec cat",
                  target=Target(time=1.10) if size >= big_target else Target())
        row.check = check_equal_items(resource_list_items(our_out), expected, f"pass-through at {count}") + \
            f" with cat's plus the annotation on {touched}"
        alternate(row, runs, same_output(reference, ref_out, "kpt --exec cat"), same_output(ours, our_out, "pass-through"))
        print_row(row)
        rows.append(row)
        shutil.rmtree(pkg)
    return rows


# --- 5. promote vs grep -rl ----------------------------------------------------------------------


def promote_rows(work: Path, quick: bool, runs: int) -> list[Row]:
    """The checked promote cases of bench/cases_promote.py, as rows of this bench."""
    import cases_promote  # type: ignore[import-not-found]  # beside this script, on sys.path

    cases_promote.ENV = OURS_ENV
    size = dict(files=500, markers=40, pipelines=20) if quick else {}
    r = cases_promote.case_grep(work, runs=runs, **size)
    grep_row = Row("promote", f"{size.get('files', 5000):,} files", size.get("files", 5000), 0.0,
                   "grep -rl '$promotion'", target=Target(time=r["target"]),
                   check="every file equals the expected text (cases_promote.check_tree)")
    grep_row.reference = [Sample(r["grep_s"], r["grep_cpu_s"], 0.0)]
    grep_row.ours = [Sample(r["ours_s"], r["ours_cpu_s"], 0.0)]
    size2 = dict(files=8, docs=50) if quick else {}
    r2 = cases_promote.case_command_vs_run(work, runs=runs, **size2)
    cmd_row = Row("promote command", "40 files × 100 docs" if not quick else "8 files × 50 docs", 0, 0.0,
                  "krm-merge run -- mode=promote", target=Target(time=r2["target"]),
                  check="both trees equal the expected texts (cases_promote.check_tree)")
    # cases_promote reports wall medians only here: the same figure stands for CPU.
    cmd_row.reference = [Sample(r2["run_s"], r2["run_s"], 0.0)]
    cmd_row.ours = [Sample(r2["command_s"], r2["command_s"], 0.0)]
    for row in (grep_row, cmd_row):
        print_row(row)
    return [grep_row, cmd_row]


# --- 6. resource-merge: krm-merge update vs kpt pkg update ------------------------------------------


def _git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _edit_some(pkg: Path, count: int, every: int, offset: int, value: str) -> None:
    """Change ``replicas``/``retries``/``port`` of every ``every``-th resource (5% with 20)."""
    for n in range(offset, count, every):
        path = next(pkg.glob(f"team-*/res-{n}.yaml"))
        path.write_text(_edited(path.read_text(), value))


def _edited(text: str, value: str) -> str:
    text = text.replace("  replicas: ", f"  replicas: {value}", 1) if "replicas:" in text else text
    return text.replace('retries: "3"', f'retries: "{value}"').replace("port: 80\n", f"port: {value}\n")


def _package_data(root: Path) -> dict[str, Any]:
    """Every resource file of a package as data (the Kptfile aside: its upstream bookkeeping differs by tool)."""
    return {p.relative_to(root).as_posix(): yaml.load(p.read_text(), Loader=LOADER)
            for p in sorted(root.rglob("*.yaml")) if p.name != "Kptfile"}


def check_update(run_dir: Path, expected: dict[str, Any], what: str) -> str:
    got = _package_data(run_dir)
    if set(got) != set(expected):
        raise WrongAnswer(f"{what}: files differ: {sorted(set(got) ^ set(expected))[:5]}")
    for rel, data in expected.items():
        if got[rel] != data:
            raise WrongAnswer(f"{what}: {rel} is not the expected merge:\n{json.dumps(got[rel])[:600]}\n{json.dumps(data)[:600]}")
    return f"{len(expected)} resources equal the expected merge"


def expected_merge(local: Path, count: int) -> dict[str, Any]:
    """The update's answer when upstream changed every 20th resource from the 3rd and local from the 2nd.

    The two edits touch different resources: the merge is local's files (with
    kpt's bookkeeping annotations) with upstream's edit made to them.
    """
    expected = _package_data(local)
    for n in range(2, count, 20):
        path = next(local.glob(f"team-*/res-{n}.yaml"))
        expected[path.relative_to(local).as_posix()] = yaml.load(_edited(path.read_text(), "9"), Loader=LOADER)
    return expected


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
        expected = expected_merge(local, count)
        run_dir = root / "ws" / "run"

        def fresh() -> None:
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.copytree(local, run_dir)

        kpt = ["kpt", "pkg", "update", "run"]
        ours_cmd = [KRM_MERGE, "update", str(run_dir), "--origin", str(origin), "--upstream", str(upstream)]
        row = Row("resource-merge", f"{count:,} resources", count, written / 1e6, "kpt pkg update",
                  target=Target(time=0.02) if count >= 2000 else Target())
        checks = []
        run_measured(ours_cmd, prepare=fresh)
        checks.append(check_update(run_dir, expected, f"krm-merge update at {count}"))
        with_kpt = count in kpt_sizes
        if with_kpt:  # kpt's run is slow: the checked run is also the timed one
            row.reference.append(run_measured(kpt, cwd=root / "ws", env=env, prepare=fresh))
            check_update(run_dir, expected, f"kpt pkg update at {count}")
            checks.append("kpt's result too")

        def ours() -> Sample:
            sample = run_measured(ours_cmd, prepare=fresh)
            check_update(run_dir, expected, f"krm-merge update at {count}")
            return sample

        alternate(row, runs, None, ours)
        row.check = ", ".join(checks)
        print_row(row)
        rows.append(row)
        shutil.rmtree(root)
    return rows


# --- 8. conflict markers: update --conflicts mark (issue 43: 20,000 conflicts in under 5 s) ----------------


def _marked_package(root: Path, count: int) -> Path:
    """One ConfigMap of ``count`` fields, each changed differently locally and upstream (issue 43's shape)."""
    for copy in ("origin", "local", "upstream"):
        (root / copy).mkdir(parents=True)
        (root / copy / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n"
                                             + "".join(f"  k{i}: {copy}{i}\n" for i in range(count)))
    (root / "local" / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: local\nupstreamLock:\n  type: git\n  git:\n"
        "    repo: https://example.com/pkgs\n    directory: /local\n    ref: v1\n    commit: " + "a" * 40 + "\n")
    return root / "local"


def check_marked(run_dir: Path, count: int, what: str) -> str:
    """Every field holds local's value with upstream's and origin's in its marker, and the ledger records each."""
    text = (run_dir / "cm.yaml").read_text()
    head, _, body = text.partition("\ndata:\n")  # kpt's identity comment and annotation go into metadata
    lines = body.splitlines()
    want = [f'  k{i}: local{i} # krm-merge:conflict upstream="upstream{i}" origin="origin{i}"' for i in range(count)]
    if lines != want:
        wrong = next((i for i, (a, b) in enumerate(zip(lines, want)) if a != b), min(len(lines), len(want)))
        raise WrongAnswer(f"{what}: line {head.count(chr(10)) + wrong + 3} of cm.yaml is not its field's value with its marker")
    recorded = json.loads((run_dir / ".krm-merge.conflicts").read_text())["conflicts"]
    if sorted((e["field"], e["local"], e["upstream"], e["origin"]) for e in recorded) != sorted(
            (f"data.k{i}", f"local{i}", f"upstream{i}", f"origin{i}") for i in range(count)):  # the ledger sorts by field
        raise WrongAnswer(f"{what}: the conflict ledger does not record each marked field")
    return "every field marked with its three values, each recorded in the ledger, each run"


def case_marks(work: Path, sizes: list[int], runs: int) -> list[Row]:
    rows = []
    for count in sizes:
        root = work / f"marks-{count}"
        local = _marked_package(root, count)
        run_dir = root / "run"

        def fresh(local: Path = local, run_dir: Path = run_dir) -> None:
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.copytree(local, run_dir)

        cmd = [KRM_MERGE, "update", str(run_dir), "--origin", str(root / "origin"), "--upstream", str(root / "upstream"),
               "--conflicts", "mark", "--quiet"]
        row = Row("conflict marks", f"{count:,} conflicts", count, (local / "cm.yaml").stat().st_size / 1e6,
                  target=Target(note="under 5 s wall at 20,000 (issue 43)"))
        run_measured(cmd, prepare=fresh, exit_code=3)
        row.check = check_marked(run_dir, count, f"update --conflicts mark at {count}")

        def ours(cmd: list[str] = cmd, fresh: Callable[[], None] = fresh, run_dir: Path = run_dir,
                 count: int = count) -> Sample:
            sample = run_measured(cmd, prepare=fresh, exit_code=3)
            check_marked(run_dir, count, f"update --conflicts mark at {count}")
            return sample

        alternate(row, runs, None, ours)
        print_row(row)
        rows.append(row)
        shutil.rmtree(root)
    return rows


# --- main ---------------------------------------------------------------------------------------------

CASES = ("startup", "reorder", "patches", "apply", "passthrough", "promote", "update", "marks")


def machine() -> dict[str, Any]:
    def first_line(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"

    cpu = "?"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(), "system": platform.platform(),
        "kubectl": first_line(["kubectl", "version", "--client"]).replace("Client Version: ", ""),
        "kpt": first_line(["kpt", "version"]),
        "load_average_start": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, kpt pkg update at 500 resources only")
    parser.add_argument("--only", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    parser.add_argument("--runs", type=int, default=0, help="timed runs per command (default 3 quick / 5 full)")
    parser.add_argument("--json", default="", help="where to write the results (default: bench/results.json for a "
                        "full run of every case, bench/out/results-quick.json otherwise)")
    parser.add_argument("--merge", action="store_true", help="with --only (full sizes): replace only those cases' rows "
                        "and growth in bench/results.json (or --json), keeping every other row of the recorded full "
                        "run; the partial run's date, runs and load are recorded beside them (`remeasured`)")
    args = parser.parse_args()
    chosen = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in CASES]
    if unknown:
        parser.error(f"unknown case {unknown[0]!r}; cases: {', '.join(CASES)}")
    if args.merge and args.quick:
        parser.error("--merge records full-size rows only (no --quick)")
    runs = args.runs or (3 if args.quick else 5)
    complete = not args.quick and set(chosen) == set(CASES)
    json_path = Path(args.json) if args.json else (
        HERE / "results.json" if complete or args.merge else HERE / "out" / "results-quick.json")
    if args.merge and not _is_full_run(json_path):
        parser.error(f"--merge needs a recorded full run in {json_path} (python bench/run.py first)")
    info = machine()
    started_at = datetime.datetime.now(datetime.timezone.utc)
    print(f"krm-merge benchmarks ({'quick' if args.quick else 'full'}), {info['cpus']} CPUs, Python {info['python']}, "
          f"{runs} timed runs per command after a checked run; medians; targets judged on CPU time")
    print(HEADER)
    started = time.perf_counter()
    rows: list[Row] = []
    growths: list[dict[str, Any]] = []
    small = [62, 250, 1000]
    full = [1000, 4000, 16000]
    with tempfile.TemporaryDirectory(prefix="krm-merge-bench-") as tmp:
        work = Path(tmp)
        OURS_ENV.update({k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        OURS_ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        try:
            if "startup" in chosen:
                rows += case_startup(work, runs * 3)
                rows += case_startup_paths(work, runs * 3)
            if "reorder" in chosen:
                got = case_reorder(work, "reorder-merge", small if args.quick else full, runs,
                                   {1000: Target(time=1.0, memory=1.5), 16000: Target(memory=1.5)})
                rows += got
                growths.append(growth(got))
            if "patches" in chosen:
                got = case_reorder(work, "patches", small if args.quick else full, runs,
                                   {1000: Target(time=1.0, memory=1.5)})
                rows += got
                growths.append(growth(got))
            if "apply" in chosen:
                got = case_apply(work, small if args.quick else full, runs)
                rows += got
                growths.append(growth(got))
            if "passthrough" in chosen:
                # ×1, ×4, ×16: the 10 MB target is the largest full size.
                sizes = [0.04, 0.156, 0.625] if args.quick else [0.625, 2.5, 10.0]
                got = case_passthrough(work, sizes, max(1, runs - 3) if not args.quick else runs, 9.0)
                rows += got
                growths.append(growth(got))
            if "promote" in chosen:
                rows += promote_rows(work, args.quick, runs)
            if "update" in chosen:
                got = case_update(work, [500, 2000], {500} if args.quick else {500, 2000}, runs)
                rows += got
                growths.append(growth(got))
            if "marks" in chosen:
                got = case_marks(work, [5000, 20000], runs)
                rows += got
                growths.append(growth(got))
        except (CommandFailed, WrongAnswer) as err:
            print(f"bench: error: {err}", file=sys.stderr)
            return 1
    total = time.perf_counter() - started
    print(f"total {total:.0f} s")
    if args.merge:
        partial = {"cases": chosen, "date": started_at.strftime("%Y-%m-%d %H:%M UTC"), "runs": runs,
                   "seconds": round(total), "machine": dict(info, load_average_end=round(os.getloadavg()[0], 2))}
        merged = merge_rows(json.loads(json_path.read_text()), [r.to_json() for r in rows], growths, partial)
        json_path.write_text(json.dumps(merged, indent=1) + "\n")
        print(f"results: {json_path} (rows of {', '.join(chosen)} replaced; now: python bench/report.py)")
        return 0
    result = {
        "date": started_at.strftime("%Y-%m-%d %H:%M UTC"), "mode": "quick" if args.quick else "full",
        "runs": runs, "seconds": round(total), "machine": dict(info, load_average_end=round(os.getloadavg()[0], 2)),
        "judged_on": "CPU time (user+sys) and peak RSS, medians", "growth_limit": GROWTH_LIMIT,
        "rows": [r.to_json() for r in rows], "growth": growths,
    }
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"results: {json_path}")
    return 0


def _is_full_run(path: Path) -> bool:
    try:
        return bool(json.loads(path.read_text()).get("mode") == "full")
    except (OSError, ValueError):
        return False


def merge_rows(results: dict[str, Any], rows: list[dict[str, Any]], growths: list[dict[str, Any]],
               partial: dict[str, Any]) -> dict[str, Any]:
    """``results`` (a full run) with the rows and growth of the cases in ``rows`` replaced, in place of the old ones.

    Every other row stays as the full run measured it; ``partial`` (which
    cases, when, how many runs, the machine's load) is kept in
    ``remeasured``, replacing earlier entries for the same cases (or fewer), so the
    tables say which figures come from which run.
    """
    cases = {r["case"] for r in rows}
    out: list[dict[str, Any]] = []
    for row in results["rows"]:
        if row["case"] in cases:
            if rows:  # the new rows go where the first old row of their cases was
                out.extend(rows)
                rows = []
            continue
        out.append(row)
    out.extend(rows)  # cases the full run did not have
    new_growth = {g["case"]: g for g in growths}
    kept = [new_growth.pop(g["case"], g) if g["case"] in cases else g for g in results.get("growth", [])]
    # an earlier entry whose every case this run measured again describes no row any more
    earlier = [p for p in results.get("remeasured", []) if not set(p["cases"]) <= set(partial["cases"])]
    return {**results, "rows": out, "growth": kept + list(new_growth.values()), "remeasured": [*earlier, partial]}


if __name__ == "__main__":
    sys.exit(main())
