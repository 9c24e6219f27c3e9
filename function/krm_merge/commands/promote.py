"""``krm-merge promote DIR``: one or many promotions applied to files, in place, for a CI job.

    krm-merge promote DIR [--set NS:PIPELINE:ENV=VALUE]... [--image-policy NS:NAME=IMAGE_REF]...
                          [--kustomize-image DIR:NAME=IMAGE_REF]... [--environment E]
                          [--report json|markdown FILE] [--dry-run] [--allow-no-match] [--skip-unreadable]
                          [--pull-request [--branch T] [--base B] [--remote R] [--forge F] [--forge-api URL]
                                          [--forge-repo O/N] [--label L]... [--reviewer U]... [--secrets-dir DIR]]
                          [--push [--base B] [--remote R]] [--push-attempts N]
    krm-merge promote DIR --pipeline NS/NAME (--environment E | --from-environment E) --value V
    krm-merge promote DIR --image-policy NS:NAME --value IMAGE[:TAG][@DIGEST]
    krm-merge promote DIR --event FILE|- (--pipeline NS/NAME | --pipeline-file FILE) [--pull-request ...]

The command turns its options into promotions and hands them to promote's file-mode
engine (:mod:`krm_merge.promote.filemode`): only files whose bytes contain a marker key (or
the Pipeline API group, to find Pipelines) are decoded and parsed, plus the kustomization
files of ``--kustomize-image``.  A changed file differs from the original only in the set
scalars (and, for kustomize images, the added entry lines).  A marked file that is not
UTF-8 or not valid YAML is an error (a warning and skipped with ``--skip-unreadable``).  All files are written at once or none.  What the run
did is one report of typed outcomes (each field set, each file skipped, each error), rendered
by :mod:`krm_merge.outcomes.render`: lines on stderr, ``--results``, ``--report``.
With ``--pull-request`` the change then goes up for review (:mod:`krm_merge.change.stage`):
checked and committed before the write, pushed and opened as a pull request after it; with ``--push`` it is
one commit pushed to the base branch, planned again whenever another writer pushed first
(:mod:`krm_merge.change.push_stage`, docs/promote-races.md).  The run is the change pipeline's
(:func:`krm_merge.change.pipeline.run_command`): this module parses and calls it.
With ``--event`` the promotion is the one a Flux event asks of its Pipeline
(:mod:`krm_merge.promote.event`); an event with nothing to promote is one line and exit code 0.
Exit code 0 when fields were set (or already current, or nothing matched with
``--allow-no-match``, or an event had nothing to promote), 1 on any error, 2 on bad usage.
"""

from __future__ import annotations

import argparse

from krm_merge.change.pipeline import Output, PromoteTarget, PushTarget, run_command
from krm_merge.change.settings import PROMOTE_BRANCH, SettingsError
from krm_merge.commands.base import command_parser
from krm_merge.commands.pull_request_options import add_options, settings_from_args
from krm_merge.outcomes import render
from krm_merge.outcomes.report import Report
from krm_merge.promote.errors import PromoteError, describe
from krm_merge.promote.filemode import EventSource, FilePlanner, PromoteRequest
from krm_merge.promote.request import (
    Promotion, RequestError, parse_image_policy, parse_kustomize_image, parse_set, promotion_from_spec)

PROG = "krm-merge promote"


class UsageError(PromoteError):
    """Options that do not fit together (exit code 2, like argparse's own errors)."""


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Set the fields marked for GitOps promotions, in place, in one run.", EXAMPLES,
                          _arguments)


EXAMPLES = ("krm-merge promote clusters/ --image-policy flux-system:app=ghcr.io/org/app:1.2",
            "krm-merge promote . --set default:podinfo:prod=6.2.1 --dry-run",
            "krm-merge promote . --pipeline default/podinfo --from-environment staging \\\n"
            "      --value 6.2.1 --pull-request",
            'krm-merge promote . --pipeline flux-system/podinfo \\\n      --event "$GITHUB_EVENT_PATH"')

EXIT_STATUS = ("exit status: 0 fields set, already current, or nothing to promote (--event: an event that is not a "
               "successful upgrade, an object no Pipeline tracks, the last environment; --push, --pull-request: "
               "another writer's higher version already on the branch); 1 an error (--push, --pull-request: also "
               "every push lost its race, --push-attempts times; the last commit stays on a local branch); "
               "2 bad usage")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = EXIT_STATUS
    p.add_argument("dir", help="the directory to search (recursively) for marked YAML files")
    p.add_argument("--set", action="append", default=[], metavar="NS:PIPELINE:ENV=VALUE",
                   help='set {"$promotion": "NS:PIPELINE:ENV"} markers (repeatable)')
    p.add_argument("--image-policy", action="append", default=[], metavar="NS:NAME=IMAGE_REF",
                   help='set {"$imagepolicy": "NS:NAME[:tag|:name|:digest]"} markers (repeatable); '
                        "NS:NAME alone takes --value")
    p.add_argument("--kustomize-image", action="append", default=[], metavar="DIR:NAME=IMAGE_REF",
                   help="set images[name=NAME] in DIR/kustomization.yaml (DIR may use {environment.name})")
    p.add_argument("--pipeline", metavar="NS/NAME", help="Pipeline of a single promotion (with --value)")
    env = p.add_mutually_exclusive_group()
    env.add_argument("--environment", metavar="ENV", help="the environment to promote to")
    env.add_argument("--from-environment", metavar="ENV",
                     help="the environment promoted from; the target is the next one in the Pipeline")
    p.add_argument("--value", help="the new value of a single --pipeline or --image-policy promotion")
    p.add_argument("--event", metavar="FILE|-",
                   help="a Flux event (the generic webhook's body, a repository_dispatch body, $GITHUB_EVENT_PATH): "
                        "promote its revision from its environment to the next one of the Pipeline")
    p.add_argument("--pipeline-file", metavar="FILE",
                   help="with --event: read the Pipeline from FILE (default: --pipeline, found under DIR)")
    p.add_argument("--report", nargs=2, metavar=("FORMAT", "FILE"), help=render.REPORT_HELP)
    # A report is output the caller asked for (a pull request body), not a change to the
    # repository: a dry run still writes it, so a CI job can preview a release with its report.
    p.add_argument("--dry-run", action="store_true",
                   help="print a unified diff (unless a --report takes stdout); change no file under DIR "
                        "(a --report FILE is still written)")
    p.add_argument("--allow-no-match", action="store_true", help="exit 0 when a promotion finds no field")
    p.add_argument("--skip-unreadable", action="store_true",
                   help="warn about and skip a marked file that is not valid YAML or not UTF-8 (default: an error, "
                        "exit 1)")
    add_options(p, default_branch=PROMOTE_BRANCH.replace("{promotion}", "{namespace}-{pipeline}-{environment}"))
    push = p.add_argument_group("push", "deliver the change as one commit pushed to the base branch (--base, "
                                "--remote), planned again on the new head whenever another writer pushed first; "
                                "see docs/promote-races.md")
    push.add_argument("--push", action="store_true",
                      help="after planning: one commit of the changed files on the base branch's tip, pushed with "
                           "a lease (signed where git's configuration signs); your checkout stays as it is")
    push.add_argument("--push-attempts", type=_attempts, default=None, metavar="N",
                      help="with --push or --pull-request: pushes in all before giving up when other writers "
                           "keep pushing to the branch first (default 20)")
    p.add_argument("--secrets-dir", metavar="DIR",
                   help="with --pull-request and a Pipeline whose promotion names a secretRef: its token is "
                        "DIR/<namespace>/<name>/<key> (default $KRM_MERGE_SECRETS_DIR)")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    arg_parser = parser()
    args = arg_parser.parse_args(argv)
    if args.report and args.report[0] not in render.FORMATS:
        arg_parser.error(f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    from_pipeline = _check_event_options(arg_parser, args)
    push = _push_target(arg_parser, args)
    try:
        settings = settings_from_args(args)
    except SettingsError as err:
        arg_parser.error(str(err))
    if args.secrets_dir and not args.pull_request:
        arg_parser.error("--secrets-dir: goes with --pull-request")
    report = Report("promote", args.dir)
    output = Output(args.results, args.report, args.quiet)
    try:
        promotions = promotions_from_args(args) if args.event is None else []
    except UsageError as err:
        arg_parser.error(err.message)  # exits 2: not a result
    except PromoteError as err:  # a promotion that cannot be: the run's error, said after the destinations
        return run_command(err, report, output, describe=describe)
    event = None if args.event is None else EventSource(args.event, args.pipeline, args.pipeline_file)
    request = PromoteRequest(args.dir, tuple(promotions), event, args.skip_unreadable, args.allow_no_match,
                             args.dry_run)
    target: PushTarget | PromoteTarget | None = push
    if target is None and settings is not None:
        target = PromoteTarget(settings, args.dir, args.secrets_dir, from_pipeline, args.push_attempts)
    return run_command(FilePlanner(request), report, output, target=target, dry_run=args.dry_run,
                       describe=describe)


def _check_event_options(arg_parser: argparse.ArgumentParser, args: argparse.Namespace) -> bool:
    """--event brings its own promotion: the options that make one do not go with it.

    Its pull request is the Pipeline's to ask for (pipeline-controller's pull-request strategy):
    without ``--pull-request`` the pull-request options are read, and used when the
    Pipeline's promotion for the target environment is a pull request: True then.  With ``--push`` the user
    asked for the delivery: the Pipeline's pull request is not opened.
    """
    if args.event is None:
        if args.pipeline_file is not None:
            arg_parser.error("--pipeline-file: goes with --event")
        return False
    for option in ("set", "image_policy", "kustomize_image", "environment", "from_environment", "value"):
        if getattr(args, option):
            arg_parser.error(f"--{option.replace('_', '-')}: does not go with --event (the event names the "
                             "environment and the value)")
    if args.pipeline is None and args.pipeline_file is None:
        arg_parser.error("--event: give --pipeline NS/NAME or --pipeline-file FILE")
    if args.push:
        return False
    from_pipeline = not args.pull_request
    args.pull_request = True
    return from_pipeline


def _attempts(text: str) -> int:
    """``--push-attempts N``: a whole number from 1 to 100."""
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 100, got {text!r}")
    return int(text)


def _push_target(arg_parser: argparse.ArgumentParser, args: argparse.Namespace) -> PushTarget | None:
    """``--push``: where it pushes (taken from --remote and --base); None without it."""
    if not args.push:
        if args.push_attempts is not None and not args.pull_request:
            arg_parser.error("--push-attempts: goes with --push or --pull-request")
        return None
    if args.pull_request:
        arg_parser.error("--push: does not go with --pull-request (one delivers to the base branch, the other "
                         "opens a pull request)")
    target = PushTarget(args.dir, args.remote or "origin", args.base, args.push_attempts)
    args.remote = args.base = None  # read here: the pull-request options left must not be given
    return target


def promotions_from_args(args: argparse.Namespace) -> list[Promotion]:
    """The promotions the options ask for (UsageError for malformed options)."""
    try:
        return _promotions_from_args(args)
    except RequestError as err:
        raise UsageError(err.message) from None


def _promotions_from_args(args: argparse.Namespace) -> list[Promotion]:
    promotions: list[Promotion] = [parse_set(text) for text in args.set]
    bare_policies = [text for text in args.image_policy if "=" not in text]
    promotions.extend(parse_image_policy(text) for text in args.image_policy if "=" in text)
    if args.pipeline is not None or bare_policies:
        if args.value is None:
            raise UsageError("--value is needed with --pipeline or --image-policy NS:NAME")
        if len(bare_policies) + (args.pipeline is not None) > 1:
            raise UsageError("--value serves one --pipeline or --image-policy NS:NAME; use --set/--image-policy "
                               "NS:NAME=IMAGE_REF for several")
        if args.pipeline is not None:
            if not args.environment and not args.from_environment:
                raise PromoteError("give --environment or --from-environment")
            promotions.append(promotion_from_spec({"pipeline": args.pipeline, "environment": args.environment,
                                                   "fromEnvironment": args.from_environment, "value": args.value}))
        else:
            if args.from_environment or (args.environment and not args.kustomize_image):
                raise PromoteError("--image-policy takes no environment")
            promotions.append(promotion_from_spec({"imagePolicy": bare_policies[0], "value": args.value}))
    elif args.value is not None:
        raise UsageError("--value goes with --pipeline or --image-policy NS:NAME")
    promotions.extend(parse_kustomize_image(text, args.environment) for text in args.kustomize_image)
    if not promotions:
        raise UsageError("nothing to promote: give --set, --image-policy, --kustomize-image or --pipeline")
    return promotions
