"""The ``krm-merge`` command line.

With no arguments it is a KRM function: a ResourceList on stdin, a
ResourceList on stdout (what kpt and kustomize call).  Subcommands run the
same modes on directories without an orchestrator.  Subcommand modules are
imported only when used, so the function path starts fast.
"""

from __future__ import annotations

import importlib
import os
import sys

from krm_merge import __version__

USAGE = """\
krm-merge: a KRM function for safe YAML merges (strategic merge patch with
$setElementOrder, kpt pipeline and package 3-way merges, GitOps promotion).

Usage:
  krm-merge < resourcelist.yaml          run as a KRM function (kpt, kustomize)
  krm-merge run DIR [--fn-config FILE] [--dry-run] [-- key=value ...]
                                          run a mode on a package directory
  krm-merge diff ORIGINAL MODIFIED [--current CURRENT] [--overwrite]
                                          print the strategic merge patch kubectl computes
  krm-merge update LOCAL --origin DIR --upstream DIR [--strategy S] [--conflicts P]
                   [--fallback-keys K,...] [--dry-run]
                                          kpt pkg update's 3-way package merge, on directories
  krm-merge promote DIR (--pipeline NS/NAME (--environment E | --from-environment E) | --image-policy NS:NAME)
                   --value V [--allow-no-match] [--dry-run]
                                          set fields marked for promotion
  krm-merge --help | --version

The functionConfig is a ConfigMap (data.mode selects the mode) or a typed
resource of apiVersion fn.krm-merge.dev/v1alpha1:

  mode            kind            what it does
  reorder-merge   ReorderMerge    apply strategic merge patches exactly as the API server
                                  (keys: patch, serverOnlyItems, desired)
  pipeline-merge  PipelineMerge   3-way merge of Kptfile pipelines (keys: origin, upstream, conflicts, ...)
  resource-merge  ResourceMerge   kpt pkg update's 3-way merge (keys: strategy, conflicts, fallbackKeys, ...)
  promote         Promote         set fields marked # {"$promotion": "ns:pipeline:env"}
                                  (keys: pipeline, environment | fromEnvironment, value,
                                  allowNoMatch, imagePolicy, strategy, ...)

Examples:
  kpt fn eval PKG --exec krm-merge -- mode=reorder-merge "patch=$(cat patch.yaml)"
  kpt fn eval PKG --image localhost/krm-merge:dev -- mode=promote pipeline=default/podinfo \\
      environment=prod value=6.2.1

Exit code: 0 on success, 1 when any error result was reported.
"""

SUBCOMMANDS = ("run", "diff", "update", "promote")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m krm_merge``."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
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
        sys.stdout.write(USAGE)
        return 0
    return function_main()


def function_main() -> int:
    """KRM function mode: read stdin, write stdout, exit 1 on error results."""
    from krm_merge.runner import run_function_streams

    code, results = run_function_streams(sys.stdin.buffer, sys.stdout.buffer)
    sys.stdout.flush()
    if os.environ.get("LOG_TO_STDERR") == "true":
        # kustomize sets this and shows only stderr (never the results) to its users.
        for result in results:
            sys.stderr.write(result.display() + "\n")
    return code


def _subcommand(name: str, argv: list[str]) -> int:
    try:
        module = importlib.import_module(f"krm_merge.commands.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"krm_merge.commands.{name}":
            raise
        sys.stderr.write(f"krm-merge: error: the {name!r} command is not available in this version\n")
        return 1
    code: int = module.main(argv)
    return code
