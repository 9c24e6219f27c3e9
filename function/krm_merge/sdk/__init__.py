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

The modules under ``krm_merge.krm`` implement this and are internal, as are
this package's own modules (``_core``, the function path; ``_main``, :func:`run`;
``_directory``, the engine of a run on a directory, shared with ``krm-merge run``): this module
exports exactly the names of ``__all__``.
"""

from __future__ import annotations

from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import Field, File, KrmError, ResourceRef, Result
from krm_merge.krm.selectors import Selector
from krm_merge.sdk._core import (
    FunctionFn,
    ResourceList,
    Results,
    dump_yaml,
    load_all_yaml,
    load_yaml,
    read_resource_list,
    run_text,
    write_resource_list,
)
from krm_merge.sdk._main import run

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
