"""The one command base: how every command's argument parser is built.

Every command under :mod:`krm_merge.commands` builds its parser with
:func:`command_parser`, so the conventions hold for all of them at once:

* the help is formatted at :data:`WIDTH` columns (a fixed width also keeps
  argparse from importing ``shutil``, and with it ``bz2`` and ``lzma``, to ask
  the terminal);
* the help ends with the command's examples (at least one);
* a usage error is one line, ``krm-merge NAME: error: ...``, exit code 2
  (``cli`` then adds the ``did you mean --x?`` lines); an option taking a
  number reads it with :func:`number` (ASCII digits, bounded: :mod:`krm_merge.numbers`);
* every command takes ``--results FILE`` and ``--quiet``, rendered by
  :func:`krm_merge.outcomes.render.finish` (``tests/cli/test_command_base.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from krm_merge import numbers
from krm_merge.outcomes import render

WIDTH = 80
"""The columns of every command's ``--help``."""


class CommandParser(argparse.ArgumentParser):
    """A command's parser: its usage errors in one line, its examples after the options."""

    def __init__(self, prog: str, description: str, examples: Sequence[str]) -> None:
        if not examples:
            raise ValueError(f"{prog}: a command's help shows at least one example")
        super().__init__(prog=prog, description=description, formatter_class=_formatter)
        self.examples = tuple(examples)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")

    def format_help(self) -> str:
        """argparse's help, then ``examples:``, one command line each (kept as written, not wrapped)."""
        return super().format_help() + "\nexamples:\n" + "".join(f"  {example}\n" for example in self.examples)


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=WIDTH)


def number(low: int = 0, high: int | None = None) -> Callable[[str], int]:
    """The type of an option taking a whole number from ``low`` to ``high``: read by :func:`krm_merge.numbers.whole`
    (ASCII digits only, bounded), a bad value a usage error naming the option and the value."""

    def parse(text: str) -> int:
        try:
            return numbers.whole(text, "value", low=low, high=high)
        except numbers.NumberError as err:  # argparse names the option in front of it: "argument --jobs: ..."
            raise argparse.ArgumentTypeError(err.message.removeprefix("value: ")) from None

    return parse


def command_parser(prog: str, description: str, examples: Sequence[str],
                   add_arguments: Callable[[CommandParser], None]) -> CommandParser:
    """A command's parser: ``add_arguments`` adds its own arguments, then every command's ``--results`` and
    ``--quiet`` follow."""
    parser = CommandParser(prog, description, examples)
    add_arguments(parser)
    parser.add_argument("--results", metavar="FILE", help=render.RESULTS_HELP)
    parser.add_argument("--quiet", "-q", action="store_true", help=render.QUIET_HELP)
    return parser


__all__ = ["WIDTH", "CommandParser", "command_parser", "number"]
