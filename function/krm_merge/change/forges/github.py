"""GitHub (and GitHub Enterprise Server): pull requests through the REST API.

Calls (the ``pulls`` and ``issues`` operations of github/rest-api-description):
``GET /repos/{owner}/{repo}/pulls?head=owner:branch&base=…&state=open``,
``POST /repos/{owner}/{repo}/pulls``, ``PATCH /repos/{owner}/{repo}/pulls/{number}``,
``POST /repos/{owner}/{repo}/issues/{number}/labels``,
``POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers`` (``org/team`` asks a team).
Auth: ``Authorization: Bearer TOKEN``, the API version pinned by ``X-GitHub-Api-Version``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from krm_merge.change.forges.base import (PullRequest, answer_number, answer_text, description, head_or_base,
                                          text_or_empty)
from krm_merge.change.forges.http import JsonClient
from krm_merge.change.redact import Redactor

API_VERSION = "2022-11-28"


class GitHub:
    """The :class:`~krm_merge.change.forges.base.Forge` of one GitHub repository (``owner/name``)."""

    name = "github"

    def __init__(self, api: str, repo: str, token: str, redactor: Redactor, **client: Any) -> None:
        self.owner, _, self.repo = repo.partition("/")
        self.notes: list[str] = []
        self.http = self._client(api, token, redactor, **client)
        self.base = f"/repos/{quote(self.owner, safe='')}/{quote(self.repo, safe='')}"

    def _client(self, api: str, token: str, redactor: Redactor, **client: Any) -> JsonClient:
        return JsonClient(api, {"Authorization": f"Bearer {token}"}, redactor, forge=self.name,
                          headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION},
                          **client)

    def find_open(self, head: str, base: str) -> PullRequest | None:
        """The open pull request ``owner:head`` → ``base`` (GitHub filters by both)."""
        found = self.http.call("GET", f"{self.base}/pulls", what="finding the open pull request",
                               query={"state": "open", "head": f"{self.owner}:{head}", "base": base,
                                      "per_page": 100}).data
        for data in found if isinstance(found, list) else []:
            if head_or_base(data, "head") == head and head_or_base(data, "base") == base:
                return self._pull(data, "finding the open pull request")
        return None

    def create(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """``POST /pulls``."""
        what = "opening the pull request"
        data = self.http.call("POST", f"{self.base}/pulls", what=what,
                              body={"title": title, "head": head, "base": base, "body": description(body)}).data
        return self._pull(data, what)

    def update(self, pr: PullRequest, title: str, body: str) -> PullRequest:
        """``PATCH /pulls/{number}``."""
        what = f"updating pull request #{pr.number}"
        data = self.http.call("PATCH", f"{self.base}/pulls/{pr.number}", what=what,
                              body={"title": title, "body": description(body)}).data
        return self._pull(data, what)

    def add_labels(self, pr: PullRequest, labels: tuple[str, ...]) -> None:
        """``POST /issues/{number}/labels`` (a pull request is an issue)."""
        if labels:
            self.http.call("POST", f"{self.base}/issues/{pr.number}/labels", what=f"labelling #{pr.number}",
                           body={"labels": list(labels)})

    def request_reviewers(self, pr: PullRequest, reviewers: tuple[str, ...]) -> None:
        """``POST /pulls/{number}/requested_reviewers``: users, and ``org/team`` as team slugs."""
        if not reviewers:
            return
        users = [r for r in reviewers if "/" not in r]
        teams = [r.split("/", 1)[1] for r in reviewers if "/" in r]
        body: dict[str, Any] = {"reviewers": users}
        if teams:
            body["team_reviewers"] = teams
        self.http.call("POST", f"{self.base}/pulls/{pr.number}/requested_reviewers",
                       what=f"requesting reviews of #{pr.number}", body=body)

    def _pull(self, data: Any, what: str) -> PullRequest:
        number = answer_number(data, "number", self.name, what)
        url = answer_text(data, "html_url", self.name, what)
        return PullRequest(number, url, text_or_empty(data.get("title")), text_or_empty(data.get("body")))

