"""``krm-merge --help``: the whole command line as one parser, generated from the commands and modes.

Each command's own ``parser()`` becomes a subcommand and each mode's keys are
listed, so the help cannot drift from what runs.  :func:`krm_merge.cli.usage`
imports this module only for ``--help``: argparse and textwrap stay off the
function path and the commands' start-up.
"""

from __future__ import annotations

import argparse
import textwrap

from krm_merge import __version__, registry
from krm_merge.commands import suggest
from krm_merge.registry import API_VERSION

DESCRIPTION = """\
krm-merge: a KRM function for safe YAML merges (strategic merge patch with
$setElementOrder, kpt pipeline and package 3-way merges, GitOps promotion).

With no command it runs as a KRM function: a ResourceList on stdin, a
ResourceList on stdout (kpt, kustomize):
  krm-merge < resourcelist.yaml"""

# The image as tools/build-image.sh tags it for this version (the same tag as the docs and templates).
EXAMPLES = f"""\
Examples:
  kpt fn eval PKG --exec krm-merge -- mode=reorder-merge "patch=$(cat patch.yaml)"
  kpt fn eval PKG --image localhost/krm-merge:{__version__} -- mode=promote pipeline=default/podinfo \\
      environment=prod value=6.2.1

Exit code: 0 on success, 1 when any error result was reported, 2 for usage errors,
3 when conflicts are left marked (update --conflicts mark, conflicts, resolve)."""

SUBCOMMANDS = registry.COMMANDS


def build_parser() -> argparse.ArgumentParser:
    """The whole command line as one parser: each command's own parser as a subcommand."""
    parser = argparse.ArgumentParser(
        prog="krm-merge", description=DESCRIPTION, epilog=_epilog(),
        formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=100),
    )
    parser.add_argument("--version", action="version", version=f"krm-merge {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in SUBCOMMANDS:
        own = _command(name).parser()
        commands.add_parser(name, parents=[own], add_help=False, help=own.description,
                            description=own.description)
    return parser


def option_hints(name: str, argv: list[str]) -> str:
    """``krm-merge NAME: did you mean --x?`` for each unknown option of ``argv`` near one of the command's."""
    return suggest.hints(f"krm-merge {name}", argv, _command(name).parser().format_help())


def _command(name: str) -> registry.Command:
    command = registry.load_command(name)
    if command is None:
        raise LookupError(f"the {name!r} command is not in this build")
    return command


def _epilog() -> str:
    parts = ["Command usage:"]
    for name in SUBCOMMANDS:
        text = _command(name).parser().format_usage().removeprefix("usage: ").rstrip()
        parts.append(textwrap.indent(text, "  "))
    parts.append("")
    parts.append(_modes_table())
    parts.append("")
    parts.append(EXAMPLES)
    return "\n".join(parts)


def _modes_table() -> str:
    """The modes, their typed kinds and every functionConfig key each reads."""
    lines = [
        "The functionConfig is a ConfigMap (data.mode selects the mode) or a typed",
        f"resource of apiVersion {API_VERSION}:",
        "",
    ]
    for mode in registry.all_modes():
        lines.append(f"  {mode.name:<16}{mode.kind:<16}{mode.summary}")
        keys = ", ".join(mode.keys)
        lines.extend(textwrap.wrap(f"keys: {keys}", width=96, initial_indent=" " * 34, subsequent_indent=" " * 40))
    return "\n".join(lines)
