"""``krm-merge promote DIR``: set marked fields in files, in place, for a CI job.

    krm-merge promote DIR --pipeline NS/NAME (--environment E | --from-environment E)
                          --value V [--dry-run] [--allow-no-match]
    krm-merge promote DIR --image-policy NS:NAME --value IMAGE[:TAG][@DIGEST] [...]

Only files whose bytes contain the marker key (or the Pipeline API group, to find the
Pipeline for ``--from-environment``) are parsed.  A changed file differs from the original
only in the marked scalars.  Files that are not valid YAML are reported and left alone.
Writes are all-or-nothing.  Exit code 0 when fields were set (or already current, or
nothing matched with ``--allow-no-match``), 1 on any error, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from krm_merge.promote.errors import PromoteError
from krm_merge.promote.files import PlannedWrite, ScreenedFile, decode, encode, screen, write_all
from krm_merge.promote.imagepolicy import image_policy_setters, normalize_policy
from krm_merge.promote.markers import IMAGEPOLICY_KEY, PROMOTION_KEY
from krm_merge.promote.pipeline import PIPELINE_GROUP, PipelineRef, find_pipeline, resolve_target

if TYPE_CHECKING:
    from krm_merge.promote.edit import Change

PROG = "krm-merge promote"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    # A fixed width keeps argparse from importing shutil (and bz2, lzma) on every run.
    p = _Parser(prog=PROG, description="Set the fields marked for a GitOps promotion, in place.",
                formatter_class=lambda prog: argparse.HelpFormatter(prog, width=100))
    p.add_argument("dir", help="the directory to search (recursively) for marked YAML files")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--pipeline", metavar="NS/NAME", help='Pipeline of the {"$promotion": "ns:name:env"} markers')
    who.add_argument("--image-policy", metavar="NS:NAME", help='Flux ImagePolicy of {"$imagepolicy": ...} markers')
    env = p.add_mutually_exclusive_group()
    env.add_argument("--environment", metavar="ENV", help="the environment to promote to")
    env.add_argument("--from-environment", metavar="ENV",
                     help="the environment promoted from; the target is the next one in the Pipeline")
    p.add_argument("--value", required=True, help="the new value (always written as a string)")
    p.add_argument("--dry-run", action="store_true", help="print the changes and a diff, write nothing")
    p.add_argument("--allow-no-match", action="store_true", help="exit 0 when no marked field is found")
    return p


class _Run:
    """What one run found and plans to write."""

    def __init__(self, root: str, marker_key: str, setters: dict[str, str | None], describe: str) -> None:
        self.root = root
        self.marker_key = marker_key
        self.setters = setters
        self.describe = describe
        self.writes: list[PlannedWrite] = []
        self.changes: list[tuple[str, Change]] = []
        self.matched = 0
        self.errors: list[str] = []
        self.warnings: list[str] = []


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    try:
        return _main(args)
    except PromoteError as err:
        sys.stderr.write(f"{PROG}: error: {err}\n")
    except OSError as err:
        sys.stderr.write(f"{PROG}: error: {err.filename or ''}: {err.strerror or err}\n")
    return 1


def _main(args: argparse.Namespace) -> int:
    root = args.dir
    if not os.path.isdir(root):
        raise PromoteError(f"{root} is not a directory")
    run = _plan(root, args)
    for warning in run.warnings:
        sys.stderr.write(f"{PROG}: warning: {warning}\n")
    if run.errors:
        for error in run.errors:
            sys.stderr.write(f"{PROG}: error: {error}\n")
        sys.stderr.write(f"{PROG}: nothing written\n")
        return 1
    out = sys.stdout
    for rel, change in run.changes:
        out.write(f"{rel}:{change.line}: {change.path}: {change.old!r} -> {change.new!r}\n")
    if run.matched == 0:
        message = f"no field found for {run.describe}"
        if args.allow_no_match:
            sys.stderr.write(f"{PROG}: warning: {message}\n")
            return 0
        sys.stderr.write(f"{PROG}: error: {message} (use --allow-no-match to accept this)\n")
        return 1
    if not run.changes:
        out.write(f"{run.matched} marked field(s) already at {args.value!r}; nothing to change\n")
    if args.dry_run:
        out.write(_diff(run.writes))
        return 0
    write_all(root, run.writes)
    return 0


def _plan(root: str, args: argparse.Namespace) -> _Run:
    if args.image_policy is not None:
        if args.environment or args.from_environment:
            raise PromoteError("--image-policy takes no environment")
        policy = normalize_policy(args.image_policy)
        setters = image_policy_setters(policy, args.value)
        run = _Run(root, IMAGEPOLICY_KEY, setters, f'markers {{"{IMAGEPOLICY_KEY}": "{policy}[:tag|:name|:digest]"}}')
        files = screen(root, (IMAGEPOLICY_KEY.encode(),))
    else:
        if not args.environment and not args.from_environment:
            raise PromoteError("give --environment or --from-environment")
        ref = PipelineRef.parse(args.pipeline)
        files = screen(root, (PROMOTION_KEY.encode(), PIPELINE_GROUP.encode()))
        target = resolve_target(ref, _find_pipeline(files, ref), environment=args.environment,
                                from_environment=args.from_environment)
        marker = ref.marker(target)
        run = _Run(root, PROMOTION_KEY, {marker: args.value}, f'marker {{"{PROMOTION_KEY}": "{marker}"}}')
    token = run.marker_key.encode()
    for screened in files:
        if token in screened.data:
            _promote_file(run, screened)
    return run


def _find_pipeline(files: list[ScreenedFile], ref: PipelineRef) -> dict[str, Any] | None:
    import yaml

    for screened in files:
        if PIPELINE_GROUP.encode() not in screened.data:
            continue
        try:
            docs = list(yaml.load_all(decode(screened.data)[0], Loader=yaml.CSafeLoader))
        except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
            continue  # reported when it also holds markers; otherwise not ours
        found = find_pipeline(docs, ref)
        if found is not None:
            return found
    return None


def _promote_file(run: _Run, screened: ScreenedFile) -> None:
    # Imported here: YAML parsing is only paid for when a file holds a marker.
    from krm_merge.promote.engine import promote_text

    try:
        text, bom = decode(screened.data)
    except UnicodeDecodeError as err:
        run.warnings.append(f"{screened.rel}: not UTF-8 text (byte {err.start}); skipped")
        return
    try:
        outcome = promote_text(text, run.marker_key, run.setters)
    except PromoteError as err:
        if err.message.startswith("not valid YAML"):
            run.warnings.append(f"{screened.rel}" + (f":{err.line}" if err.line else "")
                                + f": {err.message}; skipped")
        else:
            run.errors.append(str(err.located(file=screened.rel)))
        return
    for bad in outcome.malformed:
        run.warnings.append(f"{screened.rel}:{bad.line}: comment mentions {run.marker_key} but {bad.reason}: "
                            f"{bad.comment.strip()}")
    run.matched += outcome.matched
    if outcome.changed:
        try:
            run.writes.append(PlannedWrite(screened, encode(outcome.text, bom)))
        except PromoteError as err:
            run.errors.append(str(err.located(file=screened.rel)))
            return
        run.changes.extend((screened.rel, change) for change in outcome.changes)


def _diff(writes: list[PlannedWrite]) -> str:
    from krm_merge import files

    return files.unified_diff(
        (w.file.rel, w.file.data.decode("utf-8", "replace"), w.data.decode("utf-8", "replace")) for w in writes
    )