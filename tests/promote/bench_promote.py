"""Benchmark: ``krm-merge promote`` over 5,000 files with 50 markers vs ``grep -rl``.

Run: python tests/promote/bench_promote.py [--files 5000] [--markers 50]
Prints the median wall time of each over several runs and the ratio (target <= 3x).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{n}
  namespace: team-{team}
  labels:
    app.kubernetes.io/name: app-{n}
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: app-{n}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-{n}
    spec:
      containers:
        - name: app
          image: registry.example.net/app-{n}:1.0.{n}{marker}
          ports:
            - containerPort: 8080
          env:
            - name: LOG_LEVEL
              value: info
"""


def make_tree(root: Path, files: int, markers: int) -> None:
    every = max(1, files // markers)
    for n in range(files):
        marker = ' # {"$promotion": "default:podinfo:prod"}' if n % every == 0 and n // every < markers else ""
        d = root / f"team-{n % 50}" / f"app-{n}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "deployment.yaml").write_text(DEPLOYMENT.format(n=n, team=n % 50, marker=marker))


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def cpu(cmd: list[str]) -> float:
    """User + system CPU seconds of one run (steadier than wall time on a busy machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--markers", type=int, default=50)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    exe = str(Path(sys.executable).parent / "krm-merge")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        make_tree(root, args.files, args.markers)
        grep = ["grep", "-rl", "$promotion", str(root)]
        promote = [exe, "promote", str(root), "--pipeline", "default/podinfo", "--environment", "prod",
                   "--value", "2.0.0", "--dry-run"]
        timed(grep), timed(promote)  # warm the page cache
        g = statistics.median(timed(grep) for _ in range(args.runs))
        p = statistics.median(timed(promote) for _ in range(args.runs))
        gc = statistics.median(cpu(grep) for _ in range(args.runs))
        pc = statistics.median(cpu(promote) for _ in range(args.runs))
        work = Path(tmp) / "write"
        shutil.copytree(root, work)
        w = timed([exe, "promote", str(work), *promote[3:-1]])
    print(f"grep -rl:                    wall {g * 1000:7.1f} ms   cpu {gc * 1000:7.1f} ms")
    print(f"krm-merge promote --dry-run: wall {p * 1000:7.1f} ms   cpu {pc * 1000:7.1f} ms"
          f"   ({p / g:.2f}x grep wall, {pc / gc:.2f}x grep cpu)")
    print(f"krm-merge promote (writes {args.markers} files): wall {w * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
