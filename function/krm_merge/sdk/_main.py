"""``krm_merge.sdk.run``: make a function the program's main, on stdin or on a directory.

Internal module (users import :func:`krm_merge.sdk.run`); apart from
:mod:`krm_merge.sdk._core` so that the directory engine it loads on demand
(:mod:`krm_merge.sdk._directory`, which builds on ``_core``) is no import cycle.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from krm_merge import files
from krm_merge.sdk._core import FunctionFn, name_of, run_resource_list, write_resource_list

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def run(fn: FunctionFn, argv: Sequence[str] | None = None, *, name: str | None = None) -> NoReturn:
    """Make ``fn`` the program's main function, then exit with its exit code.

    Without arguments (how kpt, a Kptfile pipeline and kustomize call
    functions): read a ResourceList on standard input, write the result on
    standard output.  With arguments, run standalone on a package directory::

        fn.py DIR [--fn-config FILE] [--dry-run] [--results FILE] [-- key=value ...]

    reading every ``*.yaml``/``*.yml`` and the Kptfile like ``kpt fn source``,
    passing ``--fn-config`` or a ConfigMap of the ``key=value`` pairs as the
    functionConfig, and writing back like ``kpt fn sink`` — only the
    documents that changed, nothing when an error was reported;
    ``--dry-run`` prints a unified diff instead.  Results go to standard error.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    label = name or name_of(fn)
    if args:
        # Only a run on a directory loads the package reader, the writer and argparse.
        from krm_merge.sdk._directory import standalone

        sys.exit(standalone(fn, args, label))
    rl = run_resource_list(fn, lambda: files.read_stream(sys.stdin.buffer, "the input"), label)  # bounded
    out, code = write_resource_list(rl), rl.results.exit_code()
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.exit(code)


