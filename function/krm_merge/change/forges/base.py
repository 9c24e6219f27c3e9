"""What every forge adapter shares: the pull-request record, the interface, the description's bound."""

from __future__ import annotations

import json
from typing import Protocol

from krm_merge.change.errors import ChangeError
from krm_merge.krm.display import escape_controls
from krm_merge.records import Record

MAX_BODY = 60_000
"""Characters of a pull request's description kept (GitHub's limit is 65,536; the others' are larger)."""
MAX_NUMBER = 2**53 - 1
"""The largest pull request number taken from a forge (JSON's largest exact integer; forges count from 1)."""
MAX_URL = 2048
"""Characters of a pull request's web URL taken from a forge."""
SHOWN = 80  # characters of a forge's value quoted in a message


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


def answer_number(data: object, path: str, forge: str, what: str) -> int:
    """The pull request's number at ``path``: a JSON integer from 1 to :data:`MAX_NUMBER`, nothing else.

    ``"12abc"``, ``12.0``, ``1e999`` (a float, infinite), ``true`` (a bool is an int to
    Python) and a number past the bound are each a ``pull request`` error naming the field
    and showing the value (escaped, cut).
    """
    value = answer_field(data, path, forge, what)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_NUMBER:
        return value
    raise ChangeError("pull request", f"{what}: {forge}'s answer has {path} {_shown(value)}, not a pull request "
                      f"number (a whole number from 1 to {MAX_NUMBER})")


def answer_text(data: object, path: str, forge: str, what: str, *, limit: int = MAX_URL) -> str:
    """The string at ``path`` (a web URL), at most ``limit`` characters; a ``pull request`` error naming the field."""
    value = answer_field(data, path, forge, what)
    if isinstance(value, str) and 0 < len(value) <= limit:
        return value
    raise ChangeError("pull request", f"{what}: {forge}'s answer has {path} {_shown(value)}, not a string of 1 to "
                      f"{limit} characters")


def text_or_empty(value: object) -> str:
    """A title or description of a forge's answer: the string, or empty for anything else (absent, null, a number)."""
    return value if isinstance(value, str) else ""


def _shown(value: object) -> str:
    """A value of a forge's answer as a message quotes it: JSON, terminal controls escaped, cut."""
    text = escape_controls(json.dumps(value)[:SHOWN + 1])
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def head_or_base(data: object, side: str) -> str | None:
    """The branch name at ``data[side].ref`` (GitHub's and Gitea's ``head``/``base``), or None."""
    part = data.get(side) if isinstance(data, dict) else None
    ref = part.get("ref") if isinstance(part, dict) else None
    return ref if isinstance(ref, str) else None
