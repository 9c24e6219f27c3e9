"""Builders of very large or very deep inputs (generated at run time, never stored)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass

from .harness import KRM_MERGE, RL_HEAD, configmap

PATCH_WEB = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  patched: \"yes\"\n"


def reorder_fc(patch: str = PATCH_WEB) -> str:
    """A functionConfig block (indented) applying ``patch``."""
    body = configmap({"mode": "reorder-merge", "patch": patch})
    return "functionConfig:\n" + "".join("  " + line + "\n" for line in body.rstrip("\n").split("\n"))


def target_item(extra: str) -> str:
    """The ``web`` ConfigMap as an item block, with ``extra`` lines (already indented for the item)."""
    return "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: web\n" + extra


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """Billion laughs under ``data``: width**levels nodes once expanded."""
    lines = ["  data:\n", "    l0: &a0 [" + ",".join(["lol"] * width) + "]\n"]
    for i in range(1, levels):
        lines.append(f"    l{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]\n")
    return "".join(lines)


def deep_flow(depth: int) -> str:
    return "  deep: " + "[" * depth + "]" * depth + "\n"


def deep_block_maps(depth: int) -> str:
    return "  deep:\n" + "".join("  " * (i + 2) + "k:\n" for i in range(depth)) + "  " * (depth + 2) + "v\n"


def long_list(n: int) -> str:
    return "  list:\n" + "  - x\n" * n


def many_items(n: int) -> str:
    one = "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i}\n    namespace: ns\n  data:\n    key: value-{i} # comment\n"
    return "".join(one.format(i=i) for i in range(n))


@dataclass
class Measured:
    code: int
    stdout: bytes
    stderr: bytes
    seconds: float
    max_rss_mb: float
    cpu_seconds: float  # user + system time of the console script: what load on other cores barely moves


_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:])\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(f'\\n@@rss_kb={usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}\\n')\n"
    "sys.exit(code)\n"
)


def measure(stdin: bytes, args: list[str] | None = None, timeout: float = 300) -> Measured:
    """Run the console script; wall time, its own CPU time and peak RSS (through a one-child wrapper)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, KRM_MERGE, *(args or [])], input=stdin,
                          capture_output=True, timeout=timeout)
    seconds = time.monotonic() - start
    err, _, tail = proc.stderr.rpartition(b"\n@@rss_kb=")
    rss_kb, _, cpu = tail.strip().partition(b" ")
    return Measured(proc.returncode, proc.stdout, err, seconds, int(rss_kb or 0) / 1024.0, float(cpu or 0))


def rl(items: str, fc: str | None = None) -> bytes:
    return (RL_HEAD + "items:\n" + items + (fc if fc is not None else reorder_fc())).encode()


ENV_SECONDS_FACTOR = float(os.environ.get("KRM_MERGE_TIME_FACTOR", "1"))


def hang_guard(expected_seconds: float) -> float:
    """A wall-clock limit that only a hang (or work out of all proportion) breaks.

    Ten times the time the run takes on a quiet machine: the suite runs on busy
    2-core machines, where a run is often several times slower.  A bound that
    matters is asserted on counted work or CPU time instead.
    """
    return 10 * expected_seconds * ENV_SECONDS_FACTOR
