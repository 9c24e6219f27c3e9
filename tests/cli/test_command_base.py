"""Every command's parser is built by the one command base (``commands/base.py``), so every ``--help`` is
80 columns wide and ends with examples, through the real ``krm-merge`` executable (issue 32)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from krm_merge import cli
from krm_merge.commands.base import WIDTH, CommandParser

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
COMMANDS = [c for c in cli.SUBCOMMANDS if c != "fleet"]  # fleet is update's form: `update --help` shows it


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_is_80_columns_and_ends_with_examples(command: str) -> None:
    done = subprocess.run([KRM_MERGE, command, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    too_wide = [line for line in done.stdout.splitlines() if len(line) > WIDTH]
    assert not too_wide, too_wide
    examples = done.stdout.split("\nexamples:\n", 1)[1].splitlines()
    assert examples and all(e.startswith((f"  krm-merge {command}", "      ")) for e in examples), examples
    assert examples[0].startswith(f"  krm-merge {command}"), examples


@pytest.mark.parametrize("command", cli.SUBCOMMANDS)
def test_every_parser_is_the_command_base(command: str) -> None:
    parser = importlib.import_module(f"krm_merge.commands.{command}").parser()
    assert isinstance(parser, CommandParser), command
    options = {s for action in parser._actions for s in action.option_strings}
    assert {"--results", "--quiet", "-q"} <= options, command


@pytest.mark.parametrize("command", COMMANDS)
def test_a_usage_error_is_one_line_named_by_its_command(command: str) -> None:
    done = subprocess.run([KRM_MERGE, command, "--no-such-option"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith(f"krm-merge {command}: error: "), done.stderr
    assert "usage:" not in done.stderr, done.stderr
