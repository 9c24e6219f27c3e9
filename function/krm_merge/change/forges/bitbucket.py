"""Bitbucket Cloud: pull requests through the REST API 2.0.

Calls: ``GET /repositories/{workspace}/{repo_slug}/pullrequests?state=OPEN`` (following its
``next`` pages; head and base compared here), ``POST …/pullrequests``,
``PUT …/pullrequests/{id}`` and ``GET …/pullrequests/{id}`` (to keep the reviewers it has).
Bitbucket Cloud pull requests have no labels: ``--label`` is reported as not applied.
Reviewers are accounts by UUID (``{…}``) or Atlassian account id, as Bitbucket's API takes
no user names.  Auth: ``Authorization: Bearer TOKEN`` (an access token), or HTTP Basic when
the token is ``user:app-password``.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from krm_merge.change.forges.base import PullRequest, answer_number, answer_text, description, text_or_empty
from krm_merge.change.forges.http import JsonClient
from krm_merge.change.redact import Redactor

MAX_PAGES = 40


class Bitbucket:
    """The :class:`~krm_merge.change.forges.base.Forge` of one Bitbucket Cloud repository (``workspace/slug``)."""

    name = "bitbucket"

    def __init__(self, api: str, repo: str, token: str, redactor: Redactor, **client: Any) -> None:
        workspace, _, slug = repo.partition("/")
        self.notes: list[str] = []
        auth = (f"Basic {base64.b64encode(token.encode()).decode()}" if ":" in token else f"Bearer {token}")
        self.http = JsonClient(api, {"Authorization": auth}, redactor, forge=self.name, **client)
        self.base = f"/repositories/{quote(workspace, safe='')}/{quote(slug, safe='')}/pullrequests"

    def find_open(self, head: str, base: str) -> PullRequest | None:
        """The open pull request ``head`` → ``base``."""
        what = "finding the open pull request"
        query: dict[str, str] | None  # the next page's link carries its own query
        path, query = self.base, {"state": "OPEN"}
        for _ in range(MAX_PAGES):
            found = self.http.call("GET", path, what=what, query=query).data
            values = found.get("values") if isinstance(found, dict) else None
            for data in values if isinstance(values, list) else []:
                if _branch(data, "source") == head and _branch(data, "destination") == base:
                    return self._pull(data, what)
            following = found.get("next") if isinstance(found, dict) else None
            # only a page of the same API: the token goes nowhere else
            if not isinstance(following, str) or not following.startswith(self.http.base_url + self.base):
                break
            path, query = following[len(self.http.base_url):], None
        return None

    def create(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """``POST /pullrequests``."""
        what = "opening the pull request"
        data = self.http.call("POST", self.base, what=what, body={
            "type": "pullrequest", "title": title, "description": description(body),
            "source": {"branch": {"name": head}}, "destination": {"branch": {"name": base}}}).data
        return self._pull(data, what)

    def update(self, pr: PullRequest, title: str, body: str) -> PullRequest:
        """``PUT /pullrequests/{id}``."""
        what = f"updating pull request #{pr.number}"
        data = self.http.call("PUT", f"{self.base}/{pr.number}", what=what,
                              body={"type": "pullrequest", "title": title, "description": description(body)}).data
        return self._pull(data, what)

    def add_labels(self, pr: PullRequest, labels: tuple[str, ...]) -> None:
        """Bitbucket Cloud has no pull-request labels: noted, not applied."""
        if labels:
            self.notes.append(f"Bitbucket Cloud pull requests have no labels; not applied: {', '.join(labels)}")

    def request_reviewers(self, pr: PullRequest, reviewers: tuple[str, ...]) -> None:
        """``PUT`` with ``reviewers``: those it has, plus each ``{uuid}`` or account id."""
        if not reviewers:
            return
        what = f"requesting reviews of #{pr.number}"
        current = self.http.call("GET", f"{self.base}/{pr.number}", what=what).data
        listed = current.get("reviewers") if isinstance(current, dict) else None
        have = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
        found = (_account(_first_text(r.get("uuid"), r.get("account_id"))) for r in have)
        wanted = [account for account in found if account is not None]
        for reviewer in reviewers:
            account = _account(reviewer)
            if account is not None and account not in wanted:
                wanted.append(account)
        self.http.call("PUT", f"{self.base}/{pr.number}", what=what, body={"type": "pullrequest", "reviewers": wanted})

    def _pull(self, data: Any, what: str) -> PullRequest:
        number = answer_number(data, "id", self.name, what)
        url = answer_text(data, "links.html.href", self.name, what)
        return PullRequest(number, url, text_or_empty(data.get("title")), _description(data))


def _account(reviewer: str) -> dict[str, str] | None:
    """A reviewer as the API takes it: ``{uuid}`` by UUID, anything else as an Atlassian account id; None for ''."""
    if not reviewer:
        return None
    return {"type": "user", "uuid": reviewer} if reviewer.startswith("{") else {"type": "user", "account_id": reviewer}


def _first_text(*values: Any) -> str:
    """The first non-empty string of a forge's values (a reviewer's uuid, else account id), or ''."""
    return next((v for v in values if isinstance(v, str) and v), "")


def _branch(data: Any, side: str) -> str | None:
    part = data.get(side) if isinstance(data, dict) else None
    branch = part.get("branch") if isinstance(part, dict) else None
    return branch.get("name") if isinstance(branch, dict) else None


def _description(data: Any) -> str:
    text = data.get("description")
    if text is None and isinstance(data.get("summary"), dict):
        text = data["summary"].get("raw")
    return text_or_empty(text)
