"""Byte-level fuzzing, bounded in time, plus the corpus as a regression suite.

``KRM_MERGE_FUZZ_SECONDS`` (default 20) bounds the coverage-guided run.  With
atheris installed it runs libFuzzer on :mod:`.fuzz_target` in a subprocess,
seeded from ``corpus/`` (copied: the repository corpus is never written);
without atheris a Hypothesis byte-level fallback mutates the corpus for the
same time.  A crash fails the test and prints the input; add it to
``corpus/`` once understood.  ``KRM_MERGE_FUZZ_SECONDS=0`` skips the run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from .fuzz_target import ENTRY_POINTS, NAMES, one_input, run_entry, seed_bytes
from .harness import CORPUS

SECONDS = int(os.environ.get("KRM_MERGE_FUZZ_SECONDS", "20"))
CI_RUNS = int(os.environ.get("KRM_MERGE_FUZZ_RUNS", "12000"))
CORPUS_FILES = sorted(p for p in CORPUS.iterdir() if p.is_file())


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_input_is_handled_cleanly(path: Path) -> None:
    entry = path.name.split("--", 1)[0]
    assert entry in ENTRY_POINTS, f"corpus file {path.name} must start with one of {NAMES}"
    run_entry(entry, path.read_text(encoding="utf-8"))


def test_every_entry_point_has_a_seed() -> None:
    assert {p.name.split("--", 1)[0] for p in CORPUS_FILES} >= set(ENTRY_POINTS)


@pytest.mark.skipif(SECONDS <= 0, reason="KRM_MERGE_FUZZ_SECONDS=0")
@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed (fallback runs)")
def test_atheris_coverage_guided(tmp_path: Path) -> None:
    work = tmp_path / "corpus"
    work.mkdir()
    for path in CORPUS_FILES:
        (work / path.name).write_bytes(seed_bytes(path))
    script = Path(__file__).with_name("fuzz_target.py")
    # On CI the run is a fixed sequence (seed and count), so a red CI means a
    # regression, not a lucky draw; the time bound only cuts it short.
    repeatable = ["-seed=1", f"-runs={CI_RUNS}"] if os.environ.get("CI") == "true" else []
    proc = subprocess.run(
        [sys.executable, str(script), f"-max_total_time={SECONDS}", "-rss_limit_mb=2048", "-timeout=30",
         *repeatable, "-print_final_stats=1", f"-artifact_prefix={tmp_path}/", str(work)],
        cwd=tmp_path, capture_output=True, text=True, timeout=SECONDS + 300,
    )
    crashes = sorted(tmp_path.glob("crash-*")) + sorted(tmp_path.glob("timeout-*")) + sorted(tmp_path.glob("oom-*"))
    shown = "\n".join(f"{c.name}: {c.read_bytes()[:2000]!r}" for c in crashes)
    assert proc.returncode == 0 and not crashes, f"fuzzer found a failure:\n{shown}\n{proc.stderr[-6000:]}"
    assert "Done" in proc.stderr and "runs in" in proc.stderr, proc.stderr[-2000:]


@st.composite
def mutated_seeds(draw: st.DrawFn) -> bytes:
    """A corpus seed with random byte-level edits (the fallback's mutator)."""
    data = bytearray(seed_bytes(draw(st.sampled_from(CORPUS_FILES))))
    for _ in range(draw(st.integers(0, 8))):
        op = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(data)))
        if op == 0:
            data[at:at] = draw(st.binary(max_size=8) | st.sampled_from(
                [b"\n", b": ", b"- ", b"#", b"---\n", b"&a ", b"*a", b"!!", b"'", b'"', b"{", b"[", b"|+\n"]))
        elif op == 1:
            del data[at:at + draw(st.integers(1, 16))]
        elif op == 2 and at < len(data):
            data[at] = draw(st.integers(0, 255))
        else:
            chunk = data[at:at + draw(st.integers(1, 64))]
            data[at:at] = chunk
    return bytes(data)


@pytest.mark.skipif(SECONDS <= 0, reason="KRM_MERGE_FUZZ_SECONDS=0")
def test_hypothesis_byte_level_fallback() -> None:
    """Runs always (atheris or not), for a share of the budget: raw bytes and mutated seeds."""
    budget = SECONDS if importlib.util.find_spec("atheris") is None else max(5, SECONDS // 4)
    deadline = time.monotonic() + budget

    @settings(max_examples=examples(50), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.binary(max_size=400) | mutated_seeds())
    def fuzz(data: bytes) -> None:
        one_input(data)

    batches = 0
    while time.monotonic() < deadline:  # fresh random batches until the time is spent
        fuzz()
        batches += 1
    assert batches >= 1
