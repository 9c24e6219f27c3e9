"""What every forge adapter shares: the pull-request record, the interface, the description's bound."""

from __future__ import annotations

from typing import Protocol

from krm_merge.change.errors import ChangeError
from krm_merge.records import Record

MAX_BODY = 60_000
"""Characters of a pull request's description kept (GitHub's limit is 65,536; the others' are larger)."""


class PullRequest(Record):
    """An open pull (merge) request: its number on the forge, its web URL, title and body as the forge has them."""

    number: int
    url: str
    title: str
    body: str


class Forge(Protocol):
    """The operations ``--pull-request`` needs of a forge, for one repository."""

    name: str
    notes: list[str]  # what the adapter could not do as asked (e.g. labels on Bitbucket), said as warnings

    def find_open(self, head: str, base: str) -> PullRequest | None:
        """The open pull request from branch ``head`` into ``base``, or None."""

    def create(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """Open a pull request from ``head`` into ``base``."""

    def update(self, pr: PullRequest, title: str, body: str) -> PullRequest:
        """Give ``pr`` this title and body."""

    def add_labels(self, pr: PullRequest, labels: tuple[str, ...]) -> None:
        """Add ``labels`` to ``pr`` (labels it has already stay)."""

    def request_reviewers(self, pr: PullRequest, reviewers: tuple[str, ...]) -> None:
        """Ask ``reviewers`` (user names; ``org/team`` for a team where the forge has them) to review ``pr``."""


TRUNCATED = "*(report truncated here: the whole report is in the commit message and in `--report`)*"


def description(body: str) -> str:
    """``body`` cut to :data:`MAX_BODY` characters at a line end, with a note saying where the rest is."""
    note = TRUNCATED
    if len(body) <= MAX_BODY:
        return body
    cut = body.rfind("\n", 0, MAX_BODY - len(note) - 2)
    return body[: cut if cut > 0 else MAX_BODY - len(note) - 2] + "\n\n" + note


def answer_field(data: object, path: str, forge: str, what: str) -> object:
    """``data[a][b]...`` for ``path`` ``a.b``; a ``pull request`` error naming the field when the answer lacks it."""
    value = data
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise ChangeError("pull request", f"{what}: {forge}'s answer has no {path}")
        value = value[key]
    return value


def head_or_base(data: object, side: str) -> str | None:
    """The branch name at ``data[side].ref`` (GitHub's and Gitea's ``head``/``base``), or None."""
    part = data.get(side) if isinstance(data, dict) else None
    ref = part.get("ref") if isinstance(part, dict) else None
    return ref if isinstance(ref, str) else None
