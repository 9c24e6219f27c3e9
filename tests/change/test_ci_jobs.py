"""The CI jobs of docs/pull-requests.md: the example's files, valid YAML, command lines the promote parser takes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.commands import promote

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "pull-requests.md"
JOBS = ROOT / "examples" / "promote-pull-request" / "ci"


def _yaml_blocks() -> list[str]:
    blocks, current = [], None
    for line in PAGE.read_text().splitlines(keepends=True):
        if current is None and line.strip() == "```yaml":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


@pytest.mark.parametrize("job", ["github-actions.yaml", "gitlab-ci.yaml"])
def test_the_documented_job_is_the_examples_file_and_its_command_parses(job: str) -> None:
    text = (JOBS / job).read_text()
    assert text in _yaml_blocks(), f"docs/pull-requests.md must show {job} as it is"
    commands = [s for s in _strings(yaml.safe_load(text)) if "krm-merge promote" in s]
    assert len(commands) == 1
    # the CI's own substitutions (${{ ... }}, $VAR, ${VAR#v}) stand for plain values here
    line = re.sub(r"\$\{\{[^}]*\}\}|\$\{[^}]*\}|\$\w+", "6.3.0", commands[0])
    argv = shlex.split(line)
    argv = argv[argv.index("krm-merge") + 2:]
    args = promote.parser().parse_args(argv)
    assert args.pull_request and args.value == "6.3.0" and args.report == ["json", "promotion.json"]
    assert args.pipeline == "flux-system/podinfo" and args.from_environment == "staging"


def test_every_test_the_security_page_pins_pull_requests_with_exists() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    section = text[text.index("## What `--pull-request` refuses"):text.index("## Reporting a problem")]
    named = set(re.findall(r"`(?:[\w/.]+::)?(test_\w+)(?:\[[^\]]*\])?`", section))
    defined = set(re.findall(r"^def (test_\w+)", "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py")),
                             re.MULTILINE))
    assert named and named <= defined, sorted(named - defined)
