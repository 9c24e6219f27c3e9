"""Kill trials: ``run``, ``update`` and ``promote`` killed at a random instant on a tree of many files.

Each trial copies a pristine package, starts the command, sends SIGKILL or
SIGTERM after a random delay within the command's own run time, then runs
``krm-merge recover`` and checks that the package is byte-identical to the
state before or after the command and holds no stray file; the command is
then run again and must give the after state.  A SIGTERM that lands while the
package is locked must leave no stray file even before the recovery.

``tests/reliability/test_kill.py`` runs a few fixed-seed trials;
``python tools/kill_trials.py --trials 200`` runs many more.
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests import helpers

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
VALUE = "registry.example.net/app:2.0.0"
MARKER = ' # {"$promotion": "default:pipe-0:prod"}'
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{n}
  namespace: team-{team}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
      - name: app
        image: registry.example.net/app-{n}:1.0.{n}{marker}
"""


@dataclass
class Case:
    """A command and the package it changes; ``before`` and ``after`` are whole trees."""

    name: str
    pristine: Path
    argv: list[str]  # with "{pkg}" standing for the package copy
    before: dict[str, bytes]
    after: dict[str, bytes]
    seconds: float  # one uninterrupted run


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` with its bytes (empty folders as ``path/``)."""
    return helpers.read_tree(root, empty_dirs=True)


LEDGER_NAME = ".krm-merge.conflicts"  # the conflict ledger an update leaves for a person: package content, kept


def strays(state: dict[str, bytes]) -> list[str]:
    """Paths krm-merge made for itself (lock, journal, staged or temporary files); not the conflict ledger."""
    return [p for p in state if any((part.startswith(".krm-merge") and part != LEDGER_NAME) or part.endswith(".tmp")
                                    for part in p.split("/"))]


def _deployments(root: Path, files: int, marked: bool, replicas: int = 2) -> None:
    for n in range(files):
        path = root / f"team-{n % 20}" / f"app-{n}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(DEPLOYMENT.format(n=n, team=n % 20, replicas=replicas, marker=MARKER if marked else ""))


def _kptfile(root: Path) -> None:
    (root / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n")


def build_cases(work: Path, files: int, only: tuple[str, ...] = ("promote", "run", "update")) -> list[Case]:
    """The commands ``only`` names, each on a pristine tree of ``files`` files, timed once uninterrupted."""
    promote = work / "promote"
    _deployments(promote, files, marked=True)
    run = work / "run"
    _deployments(run, files, marked=True)
    origin, upstream, local = work / "origin", work / "upstream", work / "update"
    for root, replicas in ((origin, 2), (upstream, 3), (local, 2)):
        _deployments(root, files, marked=False, replicas=replicas)
        _kptfile(root)
    specs = [
        ("promote", promote, [KRM_MERGE, "promote", "{pkg}", "--set", f"default:pipe-0:prod={VALUE}"]),
        ("run", run, [KRM_MERGE, "run", "{pkg}", "--", "mode=promote", "pipeline=default/pipe-0",
                      "environment=prod", f"value={VALUE}"]),
        ("update", local, [KRM_MERGE, "update", "{pkg}", "--origin", str(origin), "--upstream", str(upstream)]),
    ]
    cases = []
    for name, pristine, argv in specs:
        if name not in only:
            continue
        copy = work / f"{name}-timed"
        shutil.copytree(pristine, copy)
        start = time.monotonic()
        proc = subprocess.run(_argv(argv, copy), capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - start
        assert proc.returncode == 0, (name, proc.stderr)
        after = tree(copy)
        assert after != tree(pristine), name
        cases.append(Case(name, pristine, argv, tree(pristine), after, seconds))
        shutil.rmtree(copy)
    return cases


def _argv(argv: list[str], pkg: Path) -> list[str]:
    return [str(pkg) if a == "{pkg}" else a for a in argv]


def trial(case: Case, work: Path, rng: random.Random, signo: int) -> str:
    """One killed run and its recovery; returns a one-line account (raises AssertionError on a fault)."""
    pkg = work / f"{case.name}-trial"
    shutil.rmtree(pkg, ignore_errors=True)
    shutil.copytree(case.pristine, pkg)
    delay = rng.uniform(0.2, 1.1) * case.seconds
    proc = subprocess.Popen(_argv(case.argv, pkg), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(signo)
    _, err = proc.communicate(timeout=600)
    assert b"Traceback" not in err, err.decode()
    state = tree(pkg)
    if signo == signal.SIGTERM and proc.returncode == 128 + signo:
        # Caught while the package was locked: rolled back or finished, and the lock released.
        assert not strays(state), (case.name, proc.returncode, strays(state)[:5])
        assert state in (case.before, case.after), (case.name, "SIGTERM left a mixed package")
    recovered = subprocess.run([KRM_MERGE, "recover", str(pkg)], capture_output=True, text=True, timeout=600)
    assert recovered.returncode == 0, recovered.stderr
    state = tree(pkg)
    assert not strays(state), (case.name, strays(state)[:5])
    which = "before" if state == case.before else "after" if state == case.after else None
    changed = sum(1 for p in case.before if state.get(p) != case.before[p])
    assert which is not None, (case.name, f"mixed package: {changed} file(s) changed after recovery")
    again = subprocess.run(_argv(case.argv, pkg), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and tree(pkg) == case.after, (case.name, again.stderr)
    shutil.rmtree(pkg)
    lines = recovered.stderr.strip().splitlines()
    how = lines[-1].split(": ", 2)[-1][:70] if lines else "nothing to recover"
    return f"{case.name} {signal.Signals(signo).name} at {delay:.2f}s (exit {proc.returncode}): {which}; {how}"


def main(argv: list[str]) -> int:
    """``--trials N --files N --seed N``: many trials, one line each; exit 1 on the first fault."""
    import argparse
    import tempfile

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=60, help="trials per command and signal")
    p.add_argument("--files", type=int, default=3000)
    p.add_argument("--seed", type=int, default=int(time.time()))
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"seed {args.seed}", flush=True)
    with tempfile.TemporaryDirectory(prefix="krm-merge-kill-") as tmp:
        cases = build_cases(Path(tmp), args.files)
        for case in cases:
            print(f"{case.name}: {case.seconds:.2f}s uninterrupted", flush=True)
        for i in range(args.trials):
            for case in cases:
                for signo in (signal.SIGKILL, signal.SIGTERM):
                    try:
                        print(f"{i}: {trial(case, Path(tmp), rng, signo)}", flush=True)
                    except AssertionError as err:
                        print(f"{i}: FAULT {case.name} {signal.Signals(signo).name}: {err}", flush=True)
                        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
