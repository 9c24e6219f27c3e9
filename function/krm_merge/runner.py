"""Runs one mode on a ResourceList and turns every failure into a result.

bytes → ResourceList → mode → results + items → bytes.  Nothing below this
module prints or exits; everything that goes wrong arrives here as
:class:`KrmError` or :class:`ConfigError` and leaves as an error result.
"""

from __future__ import annotations

import sys

from krm_merge.config import ConfigError, resolve
from krm_merge.krm.resourcelist import ResourceList, read_resource_list, write_resource_list
from krm_merge.krm.results import KrmError, Result, Results


_TOO_DEEP = "input is nested too deeply to process"


def process(rl: ResourceList) -> None:
    """Resolve the mode from the functionConfig and run it; results land in ``rl``."""
    try:
        invocation = resolve(rl.function_config)
        invocation.module.run(rl, invocation.config)
    except ConfigError as err:
        rl.results.append(Result(str(err), "error", tags={"key": err.key} if err.key else {}))
    except KrmError as err:
        rl.results.append(err.to_result())
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
    try:
        rl = read_resource_list(text.decode("utf-8") if isinstance(text, bytes) else text)
    except UnicodeDecodeError as err:
        return _rejected(Result(f"input is not UTF-8 text (byte {err.start})", "error"))
    except KrmError as err:
        return _rejected(err.to_result())
    except RecursionError:
        return _rejected(Result(_TOO_DEEP, "error"))
    process(rl)
    return write_resource_list(rl), rl.results.exit_code(), rl.results


def _rejected(result: Result) -> tuple[str, int, Results]:
    """An input that could not be read: no items, the one error result, exit 1."""
    rl = ResourceList()
    rl.results.append(result)
    return write_resource_list(rl), 1, rl.results
