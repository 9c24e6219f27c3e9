"""A 1 MB package in kpt's own format passes through byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_function_mode import NOOP_CONFIG
from tests.conftest import require_binary
from tests.krm.helpers import corpus_documents

pytestmark = pytest.mark.e2e


def make_package(root: Path, target_bytes: int) -> None:
    docs = [d for name, d in corpus_documents() if not name.startswith("Kptfile")]
    size, n = 0, 0
    while size < target_bytes:
        for doc in docs:
            text = doc.replace("name: ", f"name: n{n}-", 1)
            path = root / f"dir{n % 7}" / f"res{n}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            size += len(text)
            n += 1


def test_one_megabyte_kpt_list_is_byte_identical(tmp_path: Path) -> None:
    require_binary("kpt")
    pkg = tmp_path / "pkg"
    make_package(pkg, 1_000_000)
    source = subprocess.run(["kpt", "fn", "source", str(pkg)], capture_output=True, text=True, check=True).stdout
    assert len(source) > 1_000_000
    stdin = source + "functionConfig:\n" + "".join("  " + line + "\n" for line in NOOP_CONFIG.splitlines())
    proc = subprocess.run([sys.executable, "-m", "krm_merge"], input=stdin, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    items_out = proc.stdout.partition("functionConfig:\n")[0]
    assert items_out == source


def test_kpt_eval_leaves_untouched_files_alone(tmp_path: Path) -> None:
    require_binary("kpt")
    pkg = tmp_path / "pkg"
    make_package(pkg, 50_000)
    before = {p: p.read_bytes() for p in pkg.rglob("*.yaml")}
    cfg = tmp_path / "noop.yaml"
    cfg.write_text(NOOP_CONFIG)
    krm_merge = str(Path(sys.executable).parent / "krm-merge")
    proc = subprocess.run(["kpt", "fn", "eval", str(pkg), "--exec", krm_merge, "--fn-config", str(cfg)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # kpt itself normalises some formatting (folded scalars, comment spacing): files may
    # differ from the originals only exactly as they do after kpt's identity run with `cat`.
    cat_pkg = tmp_path / "cat"
    make_package(cat_pkg, 50_000)
    subprocess.run(["kpt", "fn", "eval", str(cat_pkg), "--exec", "cat"], capture_output=True, check=True)
    for path in before:
        twin = cat_pkg / path.relative_to(pkg)
        assert path.read_bytes() == twin.read_bytes(), f"{path} differs from kpt's identity run"
