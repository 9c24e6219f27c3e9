"""``krm-merge update PKG@REF`` (git included) against ``kpt pkg update`` on the same fetched package.

    python bench/cases_update.py                    # 2,000 resources, kpt once, ours 3 times
    python bench/cases_update.py --sizes 500,2000,4000 --no-kpt   # our growth only

The package is bench/run.py's generated one (one resource a file), fetched from a
local git repository with ``kpt pkg get``; 5% is changed locally and 5% upstream
(committed), then both tools update a fresh copy of the fetched package to
``main``: kpt with its clone cache, ours with its git mirror (the first run
clones it, later runs fetch, as a user's second update would).  Prints the
median wall and CPU time of each and the ratio.  Uses run.py's measuring code
(unchanged) and leaves everything in a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import inputs  # noqa: E402
import run  # noqa: E402


def case(work: Path, count: int, runs: int, with_kpt: bool) -> run.Row:
    root = work / f"git-update-{count}"
    env = dict(os.environ, HOME=str(root / "home"), TMPDIR=str(root / "tmp"), XDG_CACHE_HOME=str(root / "cache"),
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    for d in ("home", "tmp", "up", "ws", "cache"):
        (root / d).mkdir(parents=True)
    up = root / "up"
    run._git(["init", "-q", "-b", "main"], up, env)
    written = inputs.write_package(up / "pkg", count, per_file=1)
    run._git(["add", "-A"], up, env)
    run._git(["commit", "-qm", "original"], up, env)
    subprocess.run(["kpt", "pkg", "get", f"file://{up}.git/pkg@main", "local"], cwd=root / "ws", env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    local = root / "ws" / "local"
    run._edit_some(local, count, 20, 1, "7")  # 5% changed locally
    run._edit_some(up / "pkg", count, 20, 2, "9")  # 5% changed upstream
    run._git(["commit", "-qam", "updated"], up, env)
    expected = run.expected_merge(local, count)
    run_dir = root / "ws" / "run"

    def fresh() -> None:
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.copytree(local, run_dir)

    def checked(cmd: list[str], what: str, **kwargs: object) -> run.Sample:
        sample = run.run_measured(cmd, env=env, prepare=fresh, **kwargs)  # type: ignore[arg-type]
        run.check_update(run_dir, expected, f"{what} at {count}")
        return sample

    kpt = ["kpt", "pkg", "update", "run@main", "--strategy", "resource-merge"]
    ours = [run.KRM_MERGE, "update", f"{run_dir}@main", "--strategy", "resource-merge"]
    row = run.Row("update PKG@REF", f"{count} res", count, written / 1e6, "kpt pkg update",
                  target=run.Target(time=0.02), check="every resource equals the expected merge, each run")
    run.alternate(row, runs,
                  lambda: checked(kpt, "kpt pkg update", cwd=root / "ws"),
                  lambda: checked(ours, "krm-merge update"),
                  reference_runs=1 if with_kpt else 0)
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2000", help="comma-separated resource counts")
    parser.add_argument("--runs", type=int, default=3, help="runs of krm-merge per size")
    parser.add_argument("--no-kpt", action="store_true", help="time krm-merge only (growth)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="krm-merge-bench-update-") as tmp:
        for count in (int(s) for s in args.sizes.split(",")):
            row = case(Path(tmp), count, args.runs, not args.no_kpt)
            ours_wall, ours_cpu = row.median("ours", "wall"), row.median("ours", "cpu")
            if row.reference:
                ref_wall, ref_cpu = row.median("reference", "wall"), row.median("reference", "cpu")
                print(f"{row.case} {row.size}: kpt {ref_wall:.2f} s wall / {ref_cpu:.2f} s cpu; "
                      f"krm-merge {ours_wall:.2f} s / {ours_cpu:.2f} s; ratio wall {ours_wall / ref_wall:.4f}, "
                      f"cpu {ours_cpu / ref_cpu:.4f} ({row.target.describe()}; {row.check})", flush=True)
            else:
                print(f"{row.case} {row.size}: krm-merge {ours_wall:.2f} s wall / {ours_cpu:.2f} s cpu", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
