"""The engine of a function run on a package directory (``kpt fn source | fn | kpt fn sink``).

Internal, and not exported by :mod:`krm_merge.sdk`: :func:`krm_merge.sdk.run`
given arguments and the ``krm-merge run`` command both drive
:func:`run_directory`.  Loaded only by a run on a directory, so the function
path (stdin) never loads the package reader, the writer, the renderer or
argparse.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from krm_merge import files, txn
from krm_merge.krm import package
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.results import File, KrmError
from krm_merge.krm.snapshot import Snapshot
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import FunctionResult
from krm_merge.outcomes.report import Report, State
from krm_merge.sdk._core import FunctionFn, ResourceList, call_reporting_errors, report_duplicate_keys
from krm_merge.yaml.load import collecting_duplicate_keys


def function_config_from_args(fn_config: str | None, pairs: list[str]) -> Item | None:
    """The functionConfig ``kpt fn eval`` would build from these arguments (the `run` command and :func:`krm_merge.sdk.run` use it)."""
    if fn_config and pairs:
        raise KrmError("give either --fn-config or key=value arguments, not both")
    if fn_config:
        try:
            return Item(files.read_text(fn_config), what=fn_config)  # a regular file, size-bounded
        except OSError as err:
            raise KrmError(f"cannot read {fn_config}: {err.strerror}") from None
        except UnicodeDecodeError as err:
            raise KrmError(f"{fn_config} is not UTF-8 text (byte {err.start})", file=File(fn_config)) from None
    if not pairs:
        return None
    data: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise KrmError(f"argument {pair!r} is not of the form key=value")
        data[key] = value
    return Item.from_data(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": data}
    )


def standalone(fn: FunctionFn, argv: list[str], label: str) -> int:
    """:func:`krm_merge.sdk.run` given arguments: parse them, run ``fn`` on the directory; the exit code."""
    cut = argv.index("--") if "--" in argv else len(argv)
    own, pairs = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(prog=label, description=f"Run {label} on a package directory.")
    parser.add_argument("dir", help="the package directory")
    parser.add_argument("--fn-config", metavar="FILE", help="a file holding the functionConfig")
    parser.add_argument("--dry-run", action="store_true", help="print a unified diff instead of writing")
    parser.add_argument("--results", metavar="FILE", help="also write the results as YAML to FILE")
    args = parser.parse_args(own)
    return run_directory(fn, args.dir, fn_config=args.fn_config, pairs=pairs, dry_run=args.dry_run,
                         results_file=args.results, name=label, label=label)


ReadHook = Callable[[ResourceList, Any, Snapshot], None]  # (the run's ResourceList, its krm.package.Package, the one listing)
WriteHook = Callable[[ResourceList, Any, Report], "bool | None"]  # (the run's ResourceList, its krm.pkgio.ChangeSet, its Report)


def run_directory(
    fn: FunctionFn,
    root: Any,
    *,
    fn_config: str | None = None,
    pairs: Sequence[str] = (),
    dry_run: bool = False,
    results_file: str | None = None,
    name: str,
    label: str,
    skip_undecodable: Callable[[Any], bool] | None = None,
    after_read: ReadHook | None = None,
    summary: bool = False,
    before_write: WriteHook | None = None,
    after_write: WriteHook | None = None,
) -> int:
    """``kpt fn source | fn | kpt fn sink`` on a directory; returns the exit code.

    The one standalone path (``krm-merge run`` and :func:`run` with a
    directory): reads the package, builds the functionConfig from
    ``fn_config`` or the ``key=value`` ``pairs``, runs ``fn`` with the
    exception-to-result rule, then writes back only the changed documents,
    nothing when an error was reported.  What it did is a report rendered by
    :mod:`krm_merge.outcomes.render`: the function's results on stderr (and in
    ``results_file``), a dry run's unified diff on stdout.
    ``skip_undecodable(config)`` says whether files that are not UTF-8 are left
    out instead of failing the read; ``after_read(rl, package, snapshot)`` may add results (``snapshot``:
    the package's one listing, :class:`krm_merge.krm.snapshot.Snapshot`, which the read filtered).
    ``name`` names the function in internal errors, ``label`` prefixes stderr lines.
    ``summary`` adds one line on stderr after a successful run (files and items
    changed, warnings), so a run that changed nothing says so.  ``before_write(rl,
    changes, report)`` runs once the changes are planned and before they are written (or
    shown, with ``dry_run``): what it raises stops the run with nothing written, and when it
    returns True (it committed the change on a pull request's branch) the files stay as they are;
    ``after_write`` runs after the write (not in a dry run); both may add outcomes to the
    run's report (``krm-merge run`` opens a promote run's pull request there).
    """
    report = Report("run", str(root), prog=label)
    refused = render.refuse_destinations(report, results_file, None, quiet=not summary)
    if refused is not None:  # a results file that cannot be written is refused before the package is read
        return refused

    def locked() -> Iterator[str]:
        # Held from the read to the write: a second writer is refused, not silently overwritten.
        with txn.PackageLock(root, label, read_only=dry_run) as lock:
            return _run_locked_directory(fn, root, lock.messages, fn_config, pairs, dry_run, name, skip_undecodable,
                                         after_read, report, (before_write, after_write))

    diff = report.guard(locked) or ()
    return render.finish(report, results_file=results_file, document=diff, quiet=not summary)


def _run_locked_directory(
    fn: FunctionFn, root: Any, recovered: list[str], fn_config: str | None, pairs: Sequence[str], dry_run: bool,
    name: str, skip_undecodable: Callable[[Any], bool] | None, after_read: ReadHook | None, report: Report,
    write_hooks: tuple[WriteHook | None, WriteHook | None] = (None, None),
) -> Iterator[str]:
    """Read, run the function, write (or not: the report's state says); a dry run's diff (empty otherwise)."""
    with collecting_duplicate_keys() as duplicates:
        config = function_config_from_args(fn_config, list(pairs))
        skip = skip_undecodable(config) if skip_undecodable is not None else False
        if not os.path.isdir(root):
            raise KrmError(f"{os.path.normpath(root)} is not a directory")
        snapshot = Snapshot.local(root)  # the package's one listing: the read and after_read filter it
        pkg, inner = package.read_package(root, skip_undecodable=skip, snapshot=snapshot)
        # the internal Items: the KubeObjects the SDK names
        rl = ResourceList(items=inner.items, results=inner.results)  # type: ignore[arg-type]
        for message in recovered:
            rl.results.warning(message)
        rl.function_config = config
        if after_read is not None:
            after_read(rl, pkg, snapshot)
        call_reporting_errors(fn, rl, name)
        report_duplicate_keys(rl.results, duplicates)
    report.extend(FunctionResult(result) for result in rl.results)
    if rl.results.has_errors:
        report.state = State.NOT_WRITTEN
        return iter(())
    changes = package.plan_changes(pkg, rl)
    report.add_changes(changes)
    report.items_changed = sum(1 for item in rl.items if getattr(item, "changed", False))
    before_write, after_write = write_hooks
    # Checked as the write checks it: a dry run refuses what the write would, and a refused write gets no
    # commit from the hook.  The diff is made file by file as it is printed: the whole diff as one string
    # cost a dry run more memory than the write.
    diff: Iterator[str] = iter(())
    if dry_run:
        diff = changes.diff(root)
    elif before_write is not None:
        changes.validate(root)
    kept = before_write(rl, changes, report) if before_write is not None else False
    if dry_run:
        report.state = State.DRY_RUN
        return diff
    if not kept:  # True: the hook committed the change on a pull request's branch, the files stay as they are
        package.apply_writes(root, changes)
    report.state = State.WRITTEN
    if after_write is not None:
        after_write(rl, changes, report)
    return iter(())
