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
        rl.results.append(Result("input is nested too deeply to process", "error"))
    except Exception as err:  # a bug of ours: report it, never crash the pipeline
        import traceback  # only on this path: keeps start-up light

        traceback.print_exc(file=sys.stderr)
        rl.results.append(Result(f"internal error in krm-merge: {type(err).__name__}: {err}", "error"))


def run_function(text: str) -> tuple[str, int]:
    """The whole function: input text to (output text, exit code)."""
    out, code, _ = run_function_with_results(text)
    return out, code


def run_function_with_results(text: str) -> tuple[str, int, Results]:
    """Like :func:`run_function`, also returning the results for logging."""
    try:
        rl = read_resource_list(text)
    except KrmError as err:
        rl = ResourceList()
        rl.results.append(err.to_result())
        return write_resource_list(rl), 1, rl.results
    except RecursionError:
        rl = ResourceList()
        rl.results.append(Result("input is nested too deeply to process", "error"))
        return write_resource_list(rl), 1, rl.results
    process(rl)
    return write_resource_list(rl), rl.results.exit_code(), rl.results
