"""Gitea and Forgejo (Forgejo serves Gitea's API): pull requests through the REST API v1.

Calls: ``GET /repos/{owner}/{repo}/pulls?state=open`` (paged; head and base compared here),
``POST /repos/{owner}/{repo}/pulls``, ``PATCH /repos/{owner}/{repo}/pulls/{index}``,
``POST /repos/{owner}/{repo}/issues/{index}/labels`` (label names) and
``POST /repos/{owner}/{repo}/pulls/{index}/requested_reviewers`` (``org/team`` asks a team).
Auth: ``Authorization: token TOKEN``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from krm_merge.change.forges.base import PullRequest, answer_field, description, head_or_base
from krm_merge.change.forges.http import JsonClient
from krm_merge.change.redact import Redactor

PAGE = 50
MAX_PAGES = 40  # 2,000 open pull requests looked through at most


class Gitea:
    """The :class:`~krm_merge.change.forges.base.Forge` of one Gitea or Forgejo repository (``owner/name``)."""

    name = "gitea"

    def __init__(self, api: str, repo: str, token: str, redactor: Redactor, **client: Any) -> None:
        owner, _, name = repo.partition("/")
        self.notes: list[str] = []
        self.http = JsonClient(api, {"Authorization": f"token {token}"}, redactor, forge=self.name, **client)
        self.base = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    def find_open(self, head: str, base: str) -> PullRequest | None:
        """The open pull request ``head`` → ``base`` (the list is filtered here: the API filters by state only)."""
        what = "finding the open pull request"
        for page in range(1, MAX_PAGES + 1):
            found = self.http.call("GET", f"{self.base}/pulls", what=what,
                                   query={"state": "open", "page": page, "limit": PAGE}).data
            found = found if isinstance(found, list) else []
            for data in found:
                if head_or_base(data, "head") == head and head_or_base(data, "base") == base:
                    return self._pull(data, what)
            if len(found) < PAGE:
                break
        return None

    def create(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """``POST /pulls``."""
        what = "opening the pull request"
        data = self.http.call("POST", f"{self.base}/pulls", what=what,
                              body={"head": head, "base": base, "title": title, "body": description(body)}).data
        return self._pull(data, what)

    def update(self, pr: PullRequest, title: str, body: str) -> PullRequest:
        """``PATCH /pulls/{index}``."""
        what = f"updating pull request #{pr.number}"
        data = self.http.call("PATCH", f"{self.base}/pulls/{pr.number}", what=what,
                              body={"title": title, "body": description(body)}).data
        return self._pull(data, what)

    def add_labels(self, pr: PullRequest, labels: tuple[str, ...]) -> None:
        """``POST /issues/{index}/labels`` with label names."""
        if labels:
            self.http.call("POST", f"{self.base}/issues/{pr.number}/labels", what=f"labelling #{pr.number}",
                           body={"labels": list(labels)})

    def request_reviewers(self, pr: PullRequest, reviewers: tuple[str, ...]) -> None:
        """``POST /pulls/{index}/requested_reviewers``: users, and ``org/team`` as team names."""
        if not reviewers:
            return
        body: dict[str, Any] = {"reviewers": [r for r in reviewers if "/" not in r]}
        teams = [r.split("/", 1)[1] for r in reviewers if "/" in r]
        if teams:
            body["team_reviewers"] = teams
        self.http.call("POST", f"{self.base}/pulls/{pr.number}/requested_reviewers",
                       what=f"requesting reviews of #{pr.number}", body=body)

    def _pull(self, data: Any, what: str) -> PullRequest:
        number = answer_field(data, "number", self.name, what)
        url = answer_field(data, "html_url", self.name, what)
        return PullRequest(int(number), str(url), str(data.get("title") or ""), str(data.get("body") or ""))

