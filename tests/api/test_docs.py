"""The API reference builds from the docstrings with pdoc, every warning an error.

Also: the tutorial's code is the real example (``examples/sdk-label-deployments``),
verbatim, so the page cannot drift from code the tests run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sdk-label-deployments"
# The public modules; the engine modules under krm_merge.smp are internal.
PDOC_ARGS = ["--docformat", "restructuredtext", "krm_merge.smp", "krm_merge.sdk", "krm_merge.testing",
             "!krm_merge.smp."]


def test_api_reference_builds_without_warnings(tmp_path: Path) -> None:
    try:
        import pdoc  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("pdoc is required on CI (pip install -e '.[docs]')")
        pytest.skip("pdoc not installed (pip install -e '.[docs]')")
    done = subprocess.run([sys.executable, "-W", "error", "-m", "pdoc", *PDOC_ARGS, "-o", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    assert pages == {"index.html", "krm_merge/smp.html", "krm_merge/sdk.html", "krm_merge/testing.html"}
    smp_page = (tmp_path / "krm_merge" / "smp.html").read_text()
    for name in ("create_three_way", "offline_apply", "Schema", "Schema.with_merge_keys", "ConflictError"):
        assert f'id="{name}"' in smp_page, name


def test_tutorial_code_is_the_tested_example() -> None:
    tutorial = (ROOT / "docs" / "sdk-tutorial.md").read_text()
    for name in ("label_deployments.py", "test_label_deployments.py"):
        code = (EXAMPLE / name).read_text()
        assert code in tutorial, f"docs/sdk-tutorial.md no longer shows {name} verbatim"


# --- docs/api.md's recipes, run as written (issue 48) -------------------------------------------------------------


def _recipe(title: str) -> list[tuple[str, str]]:
    """(language, text) of each fenced block under ``### title`` in docs/api.md, in order."""
    page = (ROOT / "docs" / "api.md").read_text()
    start = page.index(f"### {title}\n")
    end = min((i for i in (page.find("\n## ", start), page.find("\n### ", start + 1)) if i != -1), default=len(page))
    return re.findall(r"^```(\w*)\n(.*?)^```$", page[start:end], flags=re.M | re.S)


def test_the_patch_a_file_recipe_prints_what_the_page_shows(tmp_path: Path) -> None:
    blocks = _recipe("Patch a YAML file with a strategic merge patch, keeping its comments")
    code = "".join(text for language, text in blocks if language == "python")
    shown = [text for language, text in blocks if language == "text"]
    assert len(shown) == 1 and "# pinned" in shown[0]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown[0]


def test_the_patch_a_file_recipe_is_the_examples_command() -> None:
    blocks = _recipe("Patch a YAML file with a strategic merge patch, keeping its comments")
    definition = next(text for language, text in blocks if language == "python" and "def patch_file" in text)
    function = definition[definition.index("def patch_file"):]
    assert function in (ROOT / "examples" / "sdk-patch-file" / "patch_file.py").read_text()


def test_the_ten_line_function_runs_standalone_and_says_what_is_missing(tmp_path: Path) -> None:
    [code] = [text for language, text in _recipe("A KRM function in ten lines") if language == "python"]
    lines = [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(lines) <= 10, lines
    (tmp_path / "set_team.py").write_text(code)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the storefront\nspec: {}\n"
    (pkg / "web.yaml").write_text(deployment)
    (pkg / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    done = subprocess.run([sys.executable, "set_team.py", "pkg", "--", "team=payments"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (pkg / "web.yaml").read_text() == deployment.replace(
        "  name: web # the storefront\n", "  name: web # the storefront\n  labels:\n    team: payments\n")
    assert (pkg / "cm.yaml").read_text() == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    missing = subprocess.run([sys.executable, "set_team.py", "pkg"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 1 and "data.team is required" in missing.stderr
    assert "Traceback" not in missing.stderr
