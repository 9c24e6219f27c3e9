"""Write a comment-preserving KRM function (kpt function) in a few lines of Python.

The public face of the I/O layer krm-merge's own modes run on, in the spirit of
kpt's Go SDK (``fn.ResourceList``, ``fn.KubeObject``, ``fn.Results``,
``fn.AsMain``)::

    from krm_merge.sdk import KrmError, ResourceList, run

    def set_team(rl: ResourceList) -> None:
        team = rl.function_config.get_str("data.team") if rl.function_config else None
        if not team:
            raise KrmError("data.team is required", rl.function_config, "data.team")
        for obj in rl.select(kind="Deployment"):
            if obj.labels.get("team") != team:
                obj.set_label("team", team)
                rl.results.info(f"set label team={team}", obj, field="metadata.labels.team")

    if __name__ == "__main__":
        run(set_team)

What you get:

* items you do not change are written back byte for byte; edited items keep
  their comments and formatting, changed values included;
* ``run`` reads a ResourceList on stdin and writes it on stdout (what
  ``kpt fn eval --exec``, a Kptfile pipeline and kustomize call), or, given a
  directory, runs standalone on it like ``kpt fn source | fn | kpt fn sink``;
* every failure becomes a KRM result: raise :class:`KrmError` naming the
  resource and field, or let any exception escape — it is reported as an
  error result (exit code 1), never as a traceback in the pipeline.

The modules under ``krm_merge.krm`` implement this and are internal.
"""

from __future__ import annotations

import os
import sys
import traceback  # ~0.5 ms: its own imports are loaded already
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from krm_merge.errors import KrmMergeError
from krm_merge.krm import resourcelist as _resourcelist
from krm_merge.krm import yamlio as _yamlio
from krm_merge.krm import results as _results
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import Field, File, KrmError, ResourceRef, Result, result_of
from krm_merge.krm.selectors import Selector
from krm_merge.krm.selectors import select as _select
from krm_merge.outcomes.kinds import FunctionResult
from krm_merge.outcomes.report import Report, State
from krm_merge.yaml.load import DuplicateKey, check_size, collecting_duplicate_keys

__all__ = [
    "Field",
    "File",
    "FunctionFn",
    "KrmError",
    "KubeObject",
    "ResourceList",
    "ResourceRef",
    "Result",
    "Results",
    "Selector",
    "dump_yaml",
    "load_all_yaml",
    "load_yaml",
    "read_resource_list",
    "run",
    "run_text",
    "write_resource_list",
]

class Results(_results.Results):
    """The results of one run (a ``list`` of :class:`Result`), with builders as kpt's Go SDK.

    Each builder appends a :class:`Result` about ``obj`` (its ``resourceRef``
    and, when known, its file are filled in) and returns it.  ``field`` is the
    field path (``spec.replicas``), ``current``/``proposed`` its current and
    proposed values, ``tags`` free-form labels.  Any ``error`` result makes the
    function exit with code 1.
    """

    def error(
        self, message: str, obj: KubeObject | None = None, *, field: str | None = None,
        current: Any = None, proposed: Any = None, file: File | None = None, tags: dict[str, str] | None = None,
    ) -> Result:
        """Report an error (the run fails, exit code 1)."""
        return self._add("error", message, obj, field=field, current=current, proposed=proposed, file=file, tags=tags)

    def warning(
        self, message: str, obj: KubeObject | None = None, *, field: str | None = None,
        current: Any = None, proposed: Any = None, file: File | None = None, tags: dict[str, str] | None = None,
    ) -> Result:
        """Report a warning."""
        return self._add("warning", message, obj, field=field, current=current, proposed=proposed, file=file, tags=tags)

    def info(
        self, message: str, obj: KubeObject | None = None, *, field: str | None = None,
        current: Any = None, proposed: Any = None, file: File | None = None, tags: dict[str, str] | None = None,
    ) -> Result:
        """Report information, such as a change that was made."""
        return self._add("info", message, obj, field=field, current=current, proposed=proposed, file=file, tags=tags)

    @property
    def has_errors(self) -> bool:
        """Whether any result is an error."""
        return super().has_errors

    def exit_code(self) -> int:
        """1 when any error was reported, else 0 (kpt decides pass or fail by it)."""
        return super().exit_code()


class ResourceList(_resourcelist.ResourceList):
    """A function's input and output: ``items``, ``function_config`` and ``results``.

    ``items`` is a list of :class:`KubeObject` you may edit, reorder, extend
    (:meth:`add`) or shorten (:meth:`remove`); ``function_config`` is the
    functionConfig object (``None`` when there is none); ``results`` collects
    what to report (``rl.results.info/warning/error(message, obj, field=...)``).
    Iterating a ResourceList iterates its items.
    """

    results: Results

    def __init__(self, items: list[KubeObject] | None = None, function_config: KubeObject | None = None,
                 results: Sequence[Result] | None = None, api_version: str = "config.kubernetes.io/v1",
                 kind: str = "ResourceList") -> None:
        # The SDK's Results (with the builders); items and function_config are the one KubeObject class.
        super().__init__(items, function_config, results if isinstance(results, Results) else Results(results or ()),
                         api_version, kind)

    def select(
        self,
        selector: Selector | None = None,
        *,
        include_local_config: bool = False,
        **fields: Any,
    ) -> list[KubeObject]:
        """Items matching a :class:`Selector`, or the selector these keywords build.

        Keywords are those of :class:`Selector` (``group``, ``version``,
        ``kind``, ``name`` — a regular expression allowed —, ``namespace``,
        ``labels``, ``annotations``).  Items annotated
        ``config.kubernetes.io/local-config: "true"`` are left out unless
        ``include_local_config``.
        """
        if selector is None:
            selector = Selector(**fields)
        elif fields:
            raise TypeError("give a Selector or keywords, not both")
        return _select(self.items, selector, include_local_config=include_local_config)  # type: ignore[return-value]


def read_resource_list(text: str | bytes) -> ResourceList:
    """Parse a ResourceList (``config.kubernetes.io/v1``, or a ``v1`` ``List``).

    Raises :class:`KrmError` when the text is not one.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise KrmError(f"input is not UTF-8 text (byte {err.start})") from None
    inner = _resourcelist.read_resource_list(text)
    return ResourceList(
        items=inner.items,
        function_config=inner.function_config,
        results=inner.results,
        api_version=inner.api_version,
        kind=inner.kind,
    )


def write_resource_list(rl: _resourcelist.ResourceList) -> str:
    """The ResourceList as text: unchanged items are their exact input bytes, then the results."""
    return _resourcelist.write_resource_list(rl)


def load_yaml(text: str, what: str = "input") -> Any:
    """Parse one YAML document (YAML 1.1 as kpt and kubectl read it) into plain data.

    Bounded: alias bombs and absurd nesting are refused.  Raises
    :class:`KrmError` naming ``what`` (e.g. ``"data.patch"``) on invalid YAML.
    """
    return _yamlio.load_data(text, what)


def load_all_yaml(text: str, what: str = "input") -> list[Any]:
    """Parse every document of a multi-document YAML string into plain data (bounded as :func:`load_yaml`)."""
    return _yamlio.load_all_data(text, what)


def dump_yaml(data: Any) -> str:
    """Plain data as block-style YAML, quoted the way kpt (kyaml) quotes."""
    return _yamlio.dump_data(data)


FunctionFn = Callable[[ResourceList], None]
"""The shape of a KRM function: it edits the ResourceList in place and reports through ``rl.results``."""

_TOO_DEEP = "input is nested too deeply to process"


def _name_of(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def call_reporting_errors(fn: FunctionFn, rl: ResourceList, name: str) -> None:
    """Run ``fn``; whatever it raises becomes an error result in ``rl.results``.

    Internal (not in ``__all__``): the one exception-to-result rule, shared with
    krm-merge's own runner.
    """
    try:
        fn(rl)
    except KrmMergeError as err:
        rl.results.append(result_of(err))
    except RecursionError:
        rl.results.append(Result(_TOO_DEEP, "error"))
    except Exception as err:  # the author's bug: report it, never crash the pipeline
        rl.results.append(Result(f"internal error in {name}: {type(err).__name__}: {err}{_where(err)}", "error"))
        if os.environ.get("KRM_FN_TRACEBACK") == "1":
            traceback.print_exc(file=sys.stderr)


def report_duplicate_keys(results: _results.Results, duplicates: list[DuplicateKey]) -> None:
    """Each duplicate mapping key becomes a warning, and every error names them.

    Internal (not in ``__all__``). They are read last-wins, as kubectl reads
    them, so an earlier value is silently lost: the likely cause of an error
    such as a patch without a target (``metadata:`` written twice).
    """
    if not duplicates:
        return
    note = "; ".join(dup.message() for dup in duplicates)
    for n, result in enumerate(results):
        if result.severity == "error":
            results[n] = result._replace(message=f"{result.message} (note: {note})")
    for dup in duplicates:
        results.append(Result(dup.message(), "warning", tags={"key": dup.key, "line": str(dup.line)}))


def _where(err: BaseException) -> str:
    """`` (at file.py:12)``: the innermost frame, so the author can find the bug without a traceback."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f" (at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno})"


def run_text(fn: FunctionFn, text: str | bytes, *, name: str | None = None) -> tuple[str, int]:
    """The whole function on a ResourceList's text: ``(output text, exit code)``.

    The exit code is 1 when any error result was reported (kpt decides
    pass/fail by it), else 0.  Unreadable input gives a ResourceList with no
    items and one error result.  ``name`` names the function in internal-error
    messages (default: ``fn.__name__``).
    """
    out, code, _ = run_text_with_results(fn, text, name or _name_of(fn))
    return out, code


def read_input(text: str | bytes) -> tuple[ResourceList, bool]:
    """The input's ResourceList and True, or an empty one holding the error result and False.

    Internal (not in ``__all__``): the one way every entry point reads a
    ResourceList (size bound, UTF-8, nesting).
    """
    try:
        check_size(len(text), "the input")
        return read_resource_list(text), True
    except KrmMergeError as err:
        failure = result_of(err)
    except RecursionError:
        failure = Result(_TOO_DEEP, "error")
    rl = ResourceList()
    rl.results.append(failure)
    return rl, False


def run_resource_list(fn: FunctionFn, read: Callable[[], str | bytes], name: str) -> ResourceList:
    """Read the input ``read()`` returns, run ``fn`` on it, report duplicate keys. Internal.

    The one sequence of every function entry point.  The input comes from a
    callable so that only :func:`read_input` holds it: a caller streaming a
    large input keeps no copy alive while ``fn`` runs.
    """
    with collecting_duplicate_keys() as duplicates:
        rl, readable = read_input(read())
        if readable:
            call_reporting_errors(fn, rl, name)
        report_duplicate_keys(rl.results, duplicates)
    return rl


def run_text_with_results(fn: FunctionFn, text: str | bytes, name: str) -> tuple[str, int, Results]:
    """:func:`run_text` plus the results (the krm-merge CLI logs them). Internal."""
    rl = run_resource_list(fn, lambda: text, name)
    return write_resource_list(rl), rl.results.exit_code(), rl.results


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
    label = name or _name_of(fn)
    if args:
        sys.exit(_standalone(fn, args, label))
    out, code = run_text(fn, sys.stdin.buffer.read(), name=label)
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.exit(code)


def function_config_from_args(fn_config: str | None, pairs: list[str]) -> KubeObject | None:
    """The functionConfig ``kpt fn eval`` would build from these arguments (internal; the `run` command and :func:`run` use it)."""
    from krm_merge import files  # the function path (stdin) never reads a file: it must not load files.py

    if fn_config and pairs:
        raise KrmError("give either --fn-config or key=value arguments, not both")
    if fn_config:
        try:
            return KubeObject(files.read_text(fn_config), what=fn_config)
        except OSError as err:
            raise KrmError(f"cannot read {fn_config}: {err.strerror}") from None
    if not pairs:
        return None
    data: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise KrmError(f"argument {pair!r} is not of the form key=value")
        data[key] = value
    return KubeObject.from_data(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": data}
    )


def _standalone(fn: FunctionFn, argv: list[str], label: str) -> int:
    # Only an SDK function run on a directory parses arguments: its stdin path loads neither.
    import argparse

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


ReadHook = Callable[[ResourceList, Any], None]
WriteHook = Callable[[ResourceList, Any, Report], None]  # (the run's ResourceList, its krm.pkgio.ChangeSet, its Report)


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
    """``kpt fn source | fn | kpt fn sink`` on a directory; returns the exit code.  Internal.

    The one standalone path (``krm-merge run`` and :func:`run` with a
    directory): reads the package, builds the functionConfig from
    ``fn_config`` or the ``key=value`` ``pairs``, runs ``fn`` with the
    exception-to-result rule, then writes back only the changed documents,
    nothing when an error was reported.  What it did is a report rendered by
    :mod:`krm_merge.outcomes.render`: the function's results on stderr (and in
    ``results_file``), a dry run's unified diff on stdout.
    ``skip_undecodable(config)`` says whether files that are not UTF-8 are left
    out instead of failing the read; ``after_read(rl, package)`` may add results.
    ``name`` names the function in internal errors, ``label`` prefixes stderr lines.
    ``summary`` adds one line on stderr after a successful run (files and items
    changed, warnings), so a run that changed nothing says so.  ``before_write(rl,
    changes, report)`` runs once the changes are planned and before they are written (or
    shown, with ``dry_run``): what it raises stops the run with nothing written;
    ``after_write`` runs after the write (not in a dry run); both may add outcomes to the
    run's report (``krm-merge run`` opens a promote run's pull request there).
    """
    from krm_merge import txn
    from krm_merge.outcomes import render  # start-up: the function path (stdin) renders no report

    report = Report("run", str(root), prog=label)

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
    from krm_merge.krm import package

    with collecting_duplicate_keys() as duplicates:
        config = function_config_from_args(fn_config, list(pairs))
        skip = skip_undecodable(config) if skip_undecodable is not None else False
        pkg, inner = package.read_package(root, skip_undecodable=skip)
        rl = ResourceList(items=inner.items, results=inner.results)
        for message in recovered:
            rl.results.warning(message)
        rl.function_config = config
        if after_read is not None:
            after_read(rl, pkg)
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
    if before_write is not None:
        before_write(rl, changes, report)
    if dry_run:
        report.state = State.DRY_RUN
        return diff
    package.apply_writes(root, changes)
    report.state = State.WRITTEN
    if after_write is not None:
        after_write(rl, changes, report)
    return iter(())
