"""``--pull-request``'s options on the command line: the parser's group, their defaults, the settings read.

Apart from :mod:`krm_merge.change.stage` (the stage around a command's
write) so that a command parses and checks its options without loading the
step, the renderer's pull-request words or the promote pipeline's reader: a plain
``update`` (no ``--pull-request``) never imports the step (issue #33: start-up).
"""

from __future__ import annotations

from krm_merge.change.settings import FORGES, UPDATE_BRANCH, Settings, SettingsError, forge_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    import argparse

OPTION_DEFAULTS: dict[str, Any] = {
    "pull_request": False, "branch": None, "base": None, "remote": None, "forge": None, "forge_api": None,
    "forge_repo": None, "label": None, "reviewer": None,
}
"""The options' values when not given (``update``'s plain form takes them from here)."""


def add_options(parser: argparse.ArgumentParser, *, default_branch: str) -> None:
    """The ``--pull-request`` options, in their own group of ``parser``'s help."""
    group = parser.add_argument_group("pull request", "commit the change on a branch, push it and open (or update) "
                                      "a pull request; see docs/pull-requests.md")
    group.add_argument("--pull-request", action="store_true",
                       help="after writing: one commit of the changed files on a branch, pushed with a lease, and "
                            "a pull request whose title and body are the report (its URL on stdout)")
    group.add_argument("--branch", metavar="TEMPLATE", help=f"the branch (default {default_branch})")
    group.add_argument("--base", metavar="BRANCH", help="the branch to merge into (default: the remote's default branch)")
    group.add_argument("--remote", metavar="NAME", help="the remote to push to (default origin)")
    group.add_argument("--forge", choices=FORGES, help="the forge's API (default: told by the remote's host); "
                       "Forgejo is gitea")
    group.add_argument("--forge-api", metavar="URL", help="the forge's API URL (self-hosted; default from the remote's host)")
    group.add_argument("--forge-repo", metavar="OWNER/NAME", help="the repository on the forge (default: from the remote's URL)")
    group.add_argument("--label", action="append", metavar="LABEL", help="add a label (repeatable)")
    group.add_argument("--reviewer", action="append", metavar="USER",
                       help="request a review (repeatable; ORG/TEAM for a team on GitHub and Gitea)")


__all__ = ["OPTION_DEFAULTS", "UPDATE_BRANCH", "add_options", "settings_from_args"]


def settings_from_args(args: Any) -> Settings | None:
    """The pull-request settings of the options; None without ``--pull-request``.  SettingsError for misuse."""
    given = [f"--{name.replace('_', '-')}" for name, default in OPTION_DEFAULTS.items()
             if name != "pull_request" and getattr(args, name, default) not in (None, [], default)]
    if not args.pull_request:
        if given:
            raise SettingsError(given[0], "goes with --pull-request")
        return None
    return Settings(branch=args.branch, base=args.base, remote=args.remote or "origin",
                    forge=forge_name(args.forge, "--forge") if args.forge else None, forge_api=args.forge_api,
                    forge_repo=args.forge_repo, labels=tuple(args.label or ()), reviewers=tuple(args.reviewer or ()))
