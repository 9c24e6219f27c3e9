"""Runs one mode on a ResourceList and turns every failure into a result.

bytes → ResourceList → mode → results + items → bytes.  Nothing below this
module prints or exits; everything that goes wrong arrives here as a
:class:`~krm_merge.errors.KrmMergeError` and leaves as an error result.
krm-merge is a function of the public SDK (:mod:`krm_merge.sdk`): reading,
writing, the exception-to-result rule (:func:`~krm_merge.krm.results.result_of`)
and the duplicate-key warnings are the SDK's, so the modes get the SDK's
``ResourceList`` and ``KubeObject``.
"""

from __future__ import annotations

from krm_merge import sdk
from krm_merge.config import resolve
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import Results

NAME = "krm-merge"

# One rule for every entry point (the function and `run`): the SDK's.
report_duplicate_keys = sdk.report_duplicate_keys


def run_mode(rl: ResourceList) -> None:
    """Resolve the mode from the functionConfig and run it (exceptions propagate)."""
    invocation = resolve(rl.function_config)
    invocation.module.run(rl, invocation.config)


def process(rl: ResourceList) -> None:
    """Run the mode; results land in ``rl``, every exception as an error result."""
    sdk.call_reporting_errors(run_mode, rl, NAME)  # type: ignore[arg-type]


def run_function(text: str | bytes) -> tuple[str, int]:
    """The whole function: ResourceList text in, (ResourceList text, exit code) out."""
    out, code, _ = run_function_with_results(text)
    return out, code


def run_function_with_results(text: str | bytes) -> tuple[str, int, Results]:
    """Like :func:`run_function`, also returning the results for logging."""
    return sdk.run_text_with_results(run_mode, text, NAME)
