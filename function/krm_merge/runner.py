"""Runs one mode on a ResourceList and turns every failure into a result.

bytes → ResourceList → mode → results + items → bytes.  Nothing below this
module prints or exits; everything that goes wrong arrives here as a
:class:`~krm_merge.errors.KrmMergeError` and leaves as an error result
(:func:`~krm_merge.krm.results.result_of`, the one conversion).
"""

from __future__ import annotations

import dataclasses
import sys

from krm_merge.config import resolve
from krm_merge.errors import KrmMergeError
from krm_merge.krm.resourcelist import ResourceList, read_resource_list, write_resource_list
from krm_merge.krm.results import Result, Results, result_of
from krm_merge.yaml.load import DuplicateKey, check_size, collecting_duplicate_keys


_TOO_DEEP = "input is nested too deeply to process"


def process(rl: ResourceList) -> None:
    """Resolve the mode from the functionConfig and run it; results land in ``rl``."""
    try:
        invocation = resolve(rl.function_config)
        invocation.module.run(rl, invocation.config)
    except KrmMergeError as err:
        rl.results.append(result_of(err))
    except RecursionError:
        rl.results.append(Result(_TOO_DEEP, "error"))
    except Exception as err:  # a bug of ours: report it, never crash the pipeline
        import traceback  # only on this path: keeps start-up light

        traceback.print_exc(file=sys.stderr)
        rl.results.append(Result(f"internal error in krm-merge: {type(err).__name__}: {err}", "error"))


def run_function(text: str | bytes) -> tuple[str, int]:
    """The whole function: input (text, or UTF-8 bytes) to (output text, exit code)."""
    out, code, _ = run_function_with_results(text)
    return out, code


def run_function_with_results(text: str | bytes) -> tuple[str, int, Results]:
    """Like :func:`run_function`, also returning the results for logging."""
    with collecting_duplicate_keys() as duplicates:
        rl, failure = _read(text)
        if failure is not None:
            rl.results.append(failure)
        else:
            process(rl)
        report_duplicate_keys(rl.results, duplicates)
    return write_resource_list(rl), rl.results.exit_code(), rl.results


def _read(text: str | bytes) -> tuple[ResourceList, Result | None]:
    """The input's ResourceList, or an empty one and the error result saying why it could not be read."""
    try:
        check_size(len(text), "the input")
        return read_resource_list(text.decode("utf-8") if isinstance(text, bytes) else text), None
    except UnicodeDecodeError as err:
        return ResourceList(), Result(f"input is not UTF-8 text (byte {err.start})", "error")
    except KrmMergeError as err:
        return ResourceList(), result_of(err)
    except RecursionError:
        return ResourceList(), Result(_TOO_DEEP, "error")


def report_duplicate_keys(results: Results, duplicates: list[DuplicateKey]) -> None:
    """Each duplicate mapping key becomes a warning, and every error names them.

    They are read last-wins, as kubectl reads them, so an earlier value is
    silently lost: the likely cause of an error such as a patch without a
    target (``metadata:`` written twice).
    """
    if not duplicates:
        return
    note = "; ".join(dup.message() for dup in duplicates)
    for n, result in enumerate(results):
        if result.severity == "error":
            results[n] = dataclasses.replace(result, message=f"{result.message} (note: {note})")
    for dup in duplicates:
        results.append(Result(dup.message(), "warning", tags={"key": dup.key, "line": str(dup.line)}))
