"""The ``krm-merge`` command line.

With no arguments it is a KRM function: a ResourceList on stdin, a
ResourceList on stdout (what kpt and kustomize call).  Subcommands run the
same modes on directories without an orchestrator.  Commands and modes come
from the registry (:mod:`krm_merge.registry`), which imports a command's or a
mode's module only when it is used, so the function path starts fast.
"""

from __future__ import annotations

import gc
import os
import sys
from types import ModuleType

from krm_merge import __version__, interrupts, registry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

SUBCOMMANDS = registry.COMMANDS

# Allocations between two collections of the youngest generation, for a run of the console
# script (CPython's default is 700).  Most of a short run's allocations are its imports —
# functions, classes, code objects that are never garbage — and the default threshold made
# the collector scan them ~35 times: 10 ms of a no-op update's ~75 ms CPU, 16 ms of a
# small package's update (issue 24).  Cycles are still collected, every 50,000
# allocations; the older generations keep their default ratios.
GEN0_THRESHOLD = 50_000


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m krm_merge``."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help", "help"):
        sys.stdout.write(usage())
        return 0
    if args and args[0] == "--version":
        sys.stdout.write(f"krm-merge {__version__}\n")
        return 0
    if args and args[0] in SUBCOMMANDS:
        return _subcommand(args[0], args[1:])
    if args:
        sys.stderr.write(f"krm-merge: error: unknown command {args[0]!r} (see krm-merge --help)\n")
        return 2
    if sys.stdin.isatty():
        sys.stdout.write(usage())
        return 0
    return function_main()


def entry() -> NoReturn:
    """The console script: :func:`main`, then exit without the interpreter's teardown.

    Freeing every object and module at exit costs a few milliseconds on a small run and much
    more after a large one, for nothing a short-lived process needs (mypy's ``hard_exit`` does
    the same).  The output streams are flushed first; krm-merge registers no ``atexit`` work.
    An exception leaves the normal way; ``SystemExit`` (argument parsing) gives its status.
    The garbage collector runs less often (:data:`GEN0_THRESHOLD`); in-process callers of
    :func:`main` keep their own settings.

    SIGINT, SIGTERM and SIGHUP are handled from the first line (:mod:`krm_merge.interrupts`):
    whenever one arrives, the command stops the way a failure does (a write before its commit
    point rolled back, one after it finished), one line on stderr says which, and the exit
    status is 128+signal; never a traceback.
    """
    handler = interrupts.Handler()
    said = False  # whether a command's report said the signal (outcomes.Report.guard)
    try:
        handler.install()
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(GEN0_THRESHOLD, older, oldest)
        code = main()
        said = handler.signo is not None and code == 128 + handler.signo  # the command's report said it
    except SystemExit as stop:  # argument parsing's exits, and Interrupted
        code = _exit_status(stop)
    except BrokenPipeError:  # the reader went away (`krm-merge ... | head`): stop as a process killed by SIGPIPE
        code = 128 + 13
    except KeyboardInterrupt:  # Python's own SIGINT handler, in the instant before ours was installed
        handler.signo = handler.signo or interrupts.SIGINT
        code = 0
    handler.disarm()  # from here a signal is only recorded: the run is over
    if handler.signo is not None:
        if not said:  # it came outside any command's report
            _say_interrupted(handler)
        code = 128 + handler.signo
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: as the interpreter's own exit would, fail with 120
        code = code or 120
    os._exit(code)


def _exit_status(stop: SystemExit) -> int:
    """The status ``sys.exit`` would give (a message is printed, as the interpreter prints it)."""
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    sys.stderr.write(f"{stop.code}\n")
    return 1


def _say_interrupted(handler: interrupts.Handler) -> None:
    """Say a signal no command's report took (it came before or after one), through the renderer."""
    from krm_merge.outcomes import render  # start-up: only a run stopped by a signal needs it

    args = sys.argv[1:]
    prog = f"krm-merge {args[0]}" if args and args[0] in SUBCOMMANDS else "krm-merge"
    try:
        render.interrupted(prog, handler.signo or interrupts.SIGINT, handler.written)
    except OSError:
        pass  # stderr closed: the exit status still says it


def function_main() -> int:
    """KRM function mode: read stdin, write stdout, exit 1 on error results."""
    from krm_merge.runner import log_results, run_function_streams

    code, results = run_function_streams(sys.stdin.buffer, sys.stdout.buffer)
    sys.stdout.flush()
    if os.environ.get("LOG_TO_STDERR") == "true":
        # kustomize sets this and shows only stderr (never the results) to its users; content's controls escaped
        log_results(results, _display().EscapingStream(sys.stderr))
    return code


def _subcommand(name: str, argv: list[str]) -> int:
    command = registry.load_command(name)
    if command is None:
        sys.stderr.write(f"krm-merge: error: the {name!r} command is not available in this version\n")
        return 1
    # Everything a command prints is for a person: content's terminal controls are escaped.
    escaping = _display().EscapingStream
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = escaping(out), escaping(err)
    try:
        return command.main(argv)
    except SystemExit as usage_error:
        if usage_error.code == 2:  # the parser refused the arguments: name the option probably meant
            sys.stderr.write(usage(name, argv))
        raise
    finally:
        sys.stdout, sys.stderr = out, err


def _display() -> ModuleType:
    """:mod:`krm_merge.krm.display`, the escaping of what is printed: only a command or a logged function run
    prints content (``--version`` and ``--help`` never do)."""
    from krm_merge.krm import display  # start-up: see the docstring

    return display


# --- usage ------------------------------------------------------------------------


def usage(command: str | None = None, refused: list[str] | None = None) -> str:
    """``krm-merge --help``: built from the argument parsers and mode tables, so it cannot drift.

    With ``command``: the ``did you mean --x?`` lines for the arguments its parser ``refused``.
    """
    # Only --help and a usage error pay for the parser and the text wrapping (argparse,
    # textwrap): the function path, --version and the commands never build the whole usage.
    from krm_merge.usage import build_parser, option_hints

    return build_parser().format_help() if command is None else option_hints(command, refused or [])
