"""Gitea and Forgejo (Forgejo serves Gitea's API): pull requests through the REST API v1.

Gitea's pull-request API follows GitHub's (the same paths, bodies and answers for what
krm-merge uses), so the adapter is GitHub's with three differences: the auth header is
``Authorization: token TOKEN``, the list of open pull requests is paged
(``?state=open&page=N&limit=50``) and filtered here (the API filters by state only), and an
edit answers 201.  Calls: ``GET /repos/{owner}/{repo}/pulls``, ``POST /repos/{owner}/{repo}/pulls``,
``PATCH /repos/{owner}/{repo}/pulls/{index}``, ``POST /repos/{owner}/{repo}/issues/{index}/labels``
(label names), ``POST /repos/{owner}/{repo}/pulls/{index}/requested_reviewers`` (``org/team``
asks a team).
"""

from __future__ import annotations

from typing import Any

from krm_merge.change.forges.base import PullRequest, head_or_base
from krm_merge.change.forges.github import GitHub
from krm_merge.change.forges.http import JsonClient
from krm_merge.change.redact import Redactor

PAGE = 50
MAX_PAGES = 40  # 2,000 open pull requests looked through at most


class Gitea(GitHub):
    """The :class:`~krm_merge.change.forges.base.Forge` of one Gitea or Forgejo repository (``owner/name``)."""

    name = "gitea"

    def _client(self, api: str, token: str, redactor: Redactor, **client: Any) -> JsonClient:
        return JsonClient(api, {"Authorization": f"token {token}"}, redactor, forge=self.name, **client)

    def find_open(self, head: str, base: str) -> PullRequest | None:
        """The open pull request ``head`` → ``base``, looked for page by page."""
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
