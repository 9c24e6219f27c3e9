"""The SDK's function path: its public classes and helpers, and the one run sequence.

Internal: users import these names from :mod:`krm_merge.sdk`; krm-merge's own
runner uses the internals here (:func:`read_input`, :func:`call_reporting_errors`,
:func:`run_resource_list`, :func:`run_text_with_results`).  A function run on a
directory is :mod:`krm_merge.sdk._directory`, loaded only then.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from krm_merge.errors import KrmMergeError
from krm_merge.krm import resourcelist as _resourcelist
from krm_merge.krm import yamlio as _yamlio
from krm_merge.krm import results as _results
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import File, KrmError, Result, result_of
from krm_merge.krm.selectors import Selector
from krm_merge.krm.selectors import select as _select
from krm_merge.yaml.load import DuplicateKey, check_size, collecting_duplicate_keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


class Results(_results.Results):
    """The results of one run (a ``list`` of :class:`Result`), with builders as kpt's Go SDK.

    Each builder appends a :class:`Result` about ``obj`` (its ``resourceRef``
    and, when known, its file are filled in) and returns it.  ``field`` is the
    field path (``spec.replicas``), ``current``/``proposed`` its current and
    proposed values, ``tags`` free-form labels.  Any ``error`` result makes the
    function exit with code 1.
    """

    def error(  # type: ignore[override]  # the SDK names the keywords the internal builder passes on
        self, message: str, obj: KubeObject | None = None, *, field: str | None = None,
        current: Any = None, proposed: Any = None, file: File | None = None, tags: dict[str, str] | None = None,
    ) -> Result:
        """Report an error (the run fails, exit code 1)."""
        return self._add("error", message, obj, field=field, current=current, proposed=proposed, file=file, tags=tags)

    def warning(  # type: ignore[override]  # the SDK names the keywords the internal builder passes on
        self, message: str, obj: KubeObject | None = None, *, field: str | None = None,
        current: Any = None, proposed: Any = None, file: File | None = None, tags: dict[str, str] | None = None,
    ) -> Result:
        """Report a warning."""
        return self._add("warning", message, obj, field=field, current=current, proposed=proposed, file=file, tags=tags)

    def info(  # type: ignore[override]  # the SDK names the keywords the internal builder passes on
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
        # The SDK's Results (with the builders); items and function_config are the one KubeObject class
        # (KubeObject(...) makes the internal Item, which the base's hints name).
        super().__init__(items, function_config,  # type: ignore[arg-type]
                         results if isinstance(results, Results) else Results(results or ()), api_version, kind)

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
        return _select(self.items, selector, include_local_config=include_local_config)


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
        items=inner.items,  # type: ignore[arg-type]  # the internal Items: the KubeObjects the SDK names
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


def name_of(fn: Callable[..., Any]) -> str:
    """The name a function's internal errors name it by."""
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
            import traceback  # start-up: only a crash with KRM_FN_TRACEBACK=1 loads it (and textwrap, tokenize)

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
    out, code, _ = run_text_with_results(fn, text, name or name_of(fn))
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


def _read_input_from(read: Callable[[], str | bytes]) -> tuple[ResourceList, bool]:
    """:func:`read_input` of what ``read()`` returns; a reader's own refusal (standard input past the size limit,
    stopped as it is read) is the error result of an unreadable input."""
    try:
        return read_input(read())  # no local holds the text: read_input is its only holder
    except KrmMergeError as err:
        rl = ResourceList()
        rl.results.append(result_of(err))
        return rl, False


def run_resource_list(fn: FunctionFn, read: Callable[[], str | bytes], name: str) -> ResourceList:
    """Read the input ``read()`` returns, run ``fn`` on it, report duplicate keys. Internal.

    The one sequence of every function entry point.  The input comes from a
    callable so that only :func:`read_input` holds it: a caller streaming a
    large input keeps no copy alive while ``fn`` runs.
    """
    with collecting_duplicate_keys() as duplicates:
        rl, readable = _read_input_from(read)
        if readable:
            call_reporting_errors(fn, rl, name)
        report_duplicate_keys(rl.results, duplicates)
    return rl


def run_text_with_results(fn: FunctionFn, text: str | bytes, name: str) -> tuple[str, int, Results]:
    """:func:`run_text` plus the results (the krm-merge CLI logs them). Internal."""
    rl = run_resource_list(fn, lambda: text, name)
    return write_resource_list(rl), rl.results.exit_code(), rl.results
