"""``krm-merge run DIR``: run a mode on a package directory without kpt.

Reads the package like ``kpt fn source``, runs the mode chosen by
``--fn-config FILE`` or ``-- key=value`` arguments (a ConfigMap, as
``kpt fn eval`` builds it), and writes back like ``kpt fn sink``: only files
whose items changed are rewritten; nothing is written when any error is
reported.  A promote functionConfig with a ``pullRequest`` block puts the
change up for review as ``promote --pull-request`` does
(:mod:`krm_merge.change.stage`): checked before the write, committed,
pushed and opened after it (``--dry-run``: shown, nothing done).
"""

from __future__ import annotations

import argparse
from typing import Any

from krm_merge.commands.base import command_parser
from krm_merge.change.stage import PullRequestStep, promote_step
from krm_merge.config import mode_name, resolve
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.pkgio import ChangeSet
from krm_merge.krm.results import File
from krm_merge.krm.snapshot import Snapshot
from krm_merge.outcomes.report import Report
from krm_merge.promote.pipeline import find_pipeline
from krm_merge.promote.report import field_sets_from_results, subject
from krm_merge.promote.request import resolve as resolve_promotions
from krm_merge.runner import NAME, run_mode
from krm_merge.sdk import ResourceList
from krm_merge.sdk._directory import run_directory

PROG = "krm-merge run"


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Run a krm-merge mode on a package directory.", EXAMPLES, _arguments)


EXAMPLES = ('krm-merge run apps/podinfo -- mode=reorder-merge "patch=$(cat patch.yaml)"',
            "krm-merge run apps/podinfo --fn-config promote.yaml --dry-run")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the package directory")
    p.add_argument("--fn-config", metavar="FILE", help="a file holding the functionConfig")
    p.add_argument("--dry-run", action="store_true",
                   help="print a unified diff instead of changing the package (a --results FILE is still written)")
    p.add_argument("pairs", nargs="*", metavar="-- KEY=VALUE",
                   help="the functionConfig as ConfigMap data, as `kpt fn eval` builds it (e.g. mode=promote)")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    if "--" in argv:
        cut = argv.index("--")
        own, pairs = argv[:cut], argv[cut + 1 :]
    else:
        own, pairs = argv, []
    p = parser()
    args = p.parse_args(own)
    if args.pairs:  # only arguments after `--` are the functionConfig, as with kpt fn eval
        p.error(f"unexpected argument {args.pairs[0]!r}: key=value arguments go after `--` "
                f"(krm-merge run {args.dir} -- {' '.join(args.pairs)})")
    # run_directory renders its own report: the mode's results, --results, the summary, a dry run's diff
    return _run(args.dir, args.fn_config, pairs, args.dry_run, args.results, not args.quiet)


def _is_promote(config: Item | None) -> bool:
    return mode_name(config) == "promote"


def _run(root: str, fn_config: str | None, pairs: list[str], dry_run: bool, results_file: str | None,
         summary: bool) -> int:
    steps: list[PullRequestStep] = []  # a promote run's pull request, once its changes are planned

    def after_read(rl: ResourceList, pkg: Any, snapshot: Snapshot) -> None:
        if _is_promote(rl.function_config):
            # promote skips files it cannot read, as the promote command does, and says so.
            from krm_merge.modes.promote import unread_file_warnings  # start-up: only a promote run loads that mode

            for message, rel in unread_file_warnings(snapshot, pkg.skipped):
                rl.results.warning(message, file=File(rel))

    def before_write(rl: ResourceList, changes: ChangeSet, report: Report) -> bool:
        # The mode ran without an error: its config is valid (a wrong one is an error result naming it).
        config = resolve(rl.function_config).config if _is_promote(rl.function_config) else None
        if config is None or config.pull_request is None:
            return False
        step = _promote_step(report, root, rl, config)
        steps.append(step)
        return step.before_write(changes.writes, lambda: _promotion_report(root, rl, config, changes), dry_run=dry_run)

    def after_write(rl: ResourceList, changes: ChangeSet, report: Report) -> None:
        for step in steps:
            step.publish()

    return run_directory(
        run_mode, root, fn_config=fn_config, pairs=pairs, dry_run=dry_run, results_file=results_file,
        name=NAME, label=PROG, skip_undecodable=_is_promote, after_read=after_read, summary=summary,
        before_write=before_write, after_write=after_write,
    )


def _promote_step(report: Report, root: str, rl: ResourceList, config: Any) -> PullRequestStep:
    """The pull-request step of a promote run's ``pullRequest`` block; the Pipelines among the items name the branch."""
    pipelines = [item.data for item in rl.items if item.kind == "Pipeline"]
    finder = lambda ref: find_pipeline(pipelines, ref)  # noqa: E731
    return promote_step(report, config.pull_request, root, resolve_promotions(config.promotions, finder), finder)


def _promotion_report(root: str, rl: ResourceList, config: Any, changes: ChangeSet) -> Report:
    """The run as a promote report once written: the commit's and pull request's words, as the promote command's."""
    words = Report("promote", root)
    words.subject = subject(config.promotions)
    words.extend(field_sets_from_results(rl.results))
    words.add_changes(changes)
    return words.as_written()
