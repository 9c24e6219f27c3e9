"""A release a user can install (issue 48): one version string, one project URL, a release built as CI builds it.

* The version: ``krm_merge.__version__`` is what ``--version`` says, the image ``--help`` shows, the
  Dockerfile's default label, and every versioned image tag, pip pin and pre-commit ``rev`` of the pages
  and templates.
* The URL: pyproject's ``[project.urls]`` name https://github.com/krm-merge/krm-merge, and no page,
  template or file of the package names krm-merge's repository anywhere else (``acme/krm-merge``...).
* The release workflow's build commands are commands ``.ci/run`` runs, so what is published was built
  the way CI checked it (``tools/build-dist.sh``: the wheel and the sdist installed in clean environments).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

import krm_merge

ROOT = Path(__file__).resolve().parents[2]
VERSION = krm_merge.__version__
PROJECT_URL = "https://github.com/krm-merge/krm-merge"
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"

# What a user reads or copies: the pages, the templates, the files that build and describe the package.
TEXTS = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", "Dockerfile", "Kptfile", "pyproject.toml",
         ".pre-commit-hooks.yaml", "docs", "examples", "tools", ".github", ".ci", "function/krm_merge"]
SUFFIXES = {".md", ".yaml", ".yml", ".sh", ".py", ".toml", ".txt", ""}

SEMVER = r"\d+\.\d+\.\d+(?:[-.+][\w.]+)?"
# A version of krm-merge named in a text: an image tag, a pip pin of the repository, a pre-commit rev.
VERSIONED = [
    re.compile(rf"(?:localhost|ghcr\.io/krm-merge)/krm-merge(?:-fleet)?:({SEMVER})"),
    re.compile(rf"git\+https://[\w./-]+/krm-merge(?:\.git)?@v({SEMVER})"),
    re.compile(rf"^\s*rev: v({SEMVER})\b", re.M),
]
# A repository called krm-merge on a forge, by URL or owner/name: its owner must be krm-merge.
REPOSITORY = re.compile(r"(?:github|gitlab|bitbucket|codeberg)\.(?:com|org)[/:]([\w.-]+)/krm-merge\b"
                        r"|\b(acme|example|example-org|your-org|org)/krm-merge\b")


def _texts() -> Iterator[tuple[str, str]]:
    for name in TEXTS:
        path = ROOT / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
        for file in files:
            if file.suffix in SUFFIXES and "__pycache__" not in file.parts and ".egg-info" not in str(file):
                try:
                    yield file.relative_to(ROOT).as_posix(), file.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    continue


def other_versions(text: str) -> list[str]:
    """Every version of krm-merge ``text`` names that is not ``__version__``."""
    return [m.group(1) for pattern in VERSIONED for m in pattern.finditer(text) if m.group(1) != VERSION]


def other_repositories(text: str) -> list[str]:
    """Every naming of a krm-merge repository in ``text`` whose owner is not krm-merge (a placeholder)."""
    return [m.group(0) for m in REPOSITORY.finditer(text) if (m.group(1) or m.group(2)) != "krm-merge"]


def test_the_command_line_says_the_package_version() -> None:
    version = subprocess.run([KRM_MERGE, "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == f"krm-merge {VERSION}"
    shown = subprocess.run([KRM_MERGE, "--help"], capture_output=True, text=True, timeout=60).stdout
    tags = re.findall(r"localhost/krm-merge:(\S+)", shown)
    assert tags and set(tags) == {VERSION}, tags


def test_the_image_is_labelled_and_tagged_with_the_package_version() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(rf"^ARG VERSION={re.escape(VERSION)}$", dockerfile, re.M)
    assert 'org.opencontainers.image.version="${VERSION}"' in dockerfile
    assert f'org.opencontainers.image.source="{PROJECT_URL}"' in dockerfile
    # tools/build-image.sh tags VERSION from __version__ itself, never a written number
    assert "function/krm_merge/__init__.py" in (ROOT / "tools" / "build-image.sh").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "krm_merge.__version__"}


def test_every_page_and_template_names_this_version() -> None:
    found = {where: other_versions(text) for where, text in _texts()}
    assert not {k: v for k, v in found.items() if v}, f"not {VERSION}"
    assert any(VERSIONED[0].search(text) for _, text in _texts())  # the check has something to look at


def test_one_project_url_everywhere() -> None:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Source"] == urls["Homepage"] == PROJECT_URL
    assert all(url.startswith(PROJECT_URL) for url in urls.values()), urls
    found = {where: other_repositories(text) for where, text in _texts()}
    assert not {k: v for k, v in found.items() if v}, f"krm-merge's repository is {PROJECT_URL}"


@pytest.mark.parametrize("planted", [
    'pip install "krm-merge @ git+https://github.com/acme/krm-merge@v0.1.0"',
    "git clone https://gitlab.com/acme/krm-merge.git",
    "see acme/krm-merge for the sources",
    "image: localhost/krm-merge:9.9.9",
])
def test_a_placeholder_or_another_version_is_found(planted: str) -> None:
    assert other_repositories(planted) or other_versions(planted)


def _workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps(job: str) -> list[dict[str, Any]]:
    return _workflow()["jobs"][job]["steps"]


def test_the_release_builds_with_the_commands_ci_runs() -> None:
    ci = {line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()}
    commands = [line.strip() for job in _workflow()["jobs"].values() for step in job["steps"]
                for line in str(step.get("run", "")).splitlines() if "tools/" in line]
    assert "bash tools/build-dist.sh dist" in commands
    assert all(command in ci for command in commands), [c for c in commands if c not in ci]
    build = next(step for step in _steps("dist") if "tools/build-dist.sh" in step.get("run", ""))
    assert build["env"]["RELEASE_TAG"] == "${{ github.ref_name }}"  # the tag must be the package's version


def test_the_release_publishes_with_trusted_publishing_and_images_with_an_sbom() -> None:
    jobs = _workflow()["jobs"]
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
    publish = [s for s in jobs["pypi"]["steps"] if str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish")]
    assert len(publish) == 1 and "password" not in publish[0].get("with", {})  # no stored token
    images = [s["with"] for s in jobs["image"]["steps"] if str(s.get("uses", "")).startswith("docker/build-push-action")]
    assert {i.get("target", "function") for i in images} == {"function", "fleet"}
    assert all(i["sbom"] is True and i["tags"].startswith("ghcr.io/krm-merge/krm-merge") for i in images)
    assert yaml.safe_load(WORKFLOW.read_text())[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads `on` as True


def test_the_changelog_keeps_a_changelog_and_the_release_notes_are_its_sections() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    sections = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert sections and sections[0] in ("Unreleased", VERSION), sections
    assert all(s == "Unreleased" or re.fullmatch(SEMVER, s) for s in sections)
    issues = set(re.findall(r"\(#(\d+)", text))
    assert {"48"} <= issues
    script = (ROOT / "tools" / "build-dist.sh").read_text()
    assert 'grep -q "^## \\[$version\\]" "$ROOT/CHANGELOG.md"' in script  # a tag without its section is refused
