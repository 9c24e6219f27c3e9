"""GitLab (gitlab.com and self-managed): merge requests through the REST API v4.

Calls: ``GET /projects/{id}/merge_requests?state=opened&source_branch=…&target_branch=…``,
``POST /projects/{id}/merge_requests``, ``PUT /projects/{id}/merge_requests/{iid}``
(title, description, ``add_labels``, ``reviewer_ids``), ``GET /projects/{id}/merge_requests/{iid}``
and ``GET /users?username=…`` (reviewers are given by user name, the API takes ids).
The project id is its URL-encoded path (``group/subgroup/project``).
Auth: ``PRIVATE-TOKEN`` (a personal, group or project access token), or ``JOB-TOKEN``
when the token is a CI job's ``CI_JOB_TOKEN``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from krm_merge.change.errors import ChangeError
from krm_merge.change.forges.base import PullRequest, answer_number, answer_text, description, text_or_empty
from krm_merge.change.forges.http import JsonClient
from krm_merge.change.redact import Redactor


class GitLab:
    """The :class:`~krm_merge.change.forges.base.Forge` of one GitLab project (its full path)."""

    name = "gitlab"

    def __init__(self, api: str, repo: str, token: str, redactor: Redactor, *, job_token: bool = False,
                 **client: Any) -> None:
        header = "JOB-TOKEN" if job_token else "PRIVATE-TOKEN"
        self.notes: list[str] = []
        self.http = JsonClient(api, {header: token}, redactor, forge=self.name, **client)
        self.base = f"/projects/{quote(repo, safe='')}/merge_requests"

    def find_open(self, head: str, base: str) -> PullRequest | None:
        """The opened merge request ``head`` → ``base``."""
        what = "finding the open merge request"
        found = self.http.call("GET", self.base, what=what, query={
            "state": "opened", "source_branch": head, "target_branch": base}).data
        for data in found if isinstance(found, list) else []:
            if isinstance(data, dict) and data.get("source_branch") == head and data.get("target_branch") == base:
                return self._merge_request(data, what)
        return None

    def create(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """``POST /merge_requests``."""
        what = "opening the merge request"
        data = self.http.call("POST", self.base, what=what, body={
            "source_branch": head, "target_branch": base, "title": title, "description": description(body)}).data
        return self._merge_request(data, what)

    def update(self, pr: PullRequest, title: str, body: str) -> PullRequest:
        """``PUT /merge_requests/{iid}``."""
        what = f"updating merge request !{pr.number}"
        data = self.http.call("PUT", f"{self.base}/{pr.number}", what=what,
                              body={"title": title, "description": description(body)}).data
        return self._merge_request(data, what)

    def add_labels(self, pr: PullRequest, labels: tuple[str, ...]) -> None:
        """``PUT`` with ``add_labels`` (labels it has stay)."""
        if labels:
            self.http.call("PUT", f"{self.base}/{pr.number}", what=f"labelling !{pr.number}",
                           body={"add_labels": list(labels)})

    def request_reviewers(self, pr: PullRequest, reviewers: tuple[str, ...]) -> None:
        """``PUT`` with ``reviewer_ids``: the reviewers it has, plus each user name's id."""
        if not reviewers:
            return
        what = f"requesting reviews of !{pr.number}"
        current = self.http.call("GET", f"{self.base}/{pr.number}", what=what).data
        have = (current.get("reviewers") if isinstance(current, dict) else None) or []
        ids = [r.get("id") for r in (have if isinstance(have, list) else [have]) if isinstance(r, dict)]
        for username in reviewers:
            users = self.http.call("GET", "/users", what=f"looking up reviewer {username}",
                                   query={"username": username}).data
            if not isinstance(users, list) or not users or not isinstance(users[0], dict):
                raise ChangeError("pull request", f"{what}: no GitLab user {username!r}")
            ids.append(users[0].get("id"))
        wanted = [i for i in dict.fromkeys(ids) if isinstance(i, int) and not isinstance(i, bool)]
        self.http.call("PUT", f"{self.base}/{pr.number}", what=what, body={"reviewer_ids": wanted})

    def _merge_request(self, data: Any, what: str) -> PullRequest:
        number = answer_number(data, "iid", self.name, what)
        url = answer_text(data, "web_url", self.name, what)
        return PullRequest(number, url, text_or_empty(data.get("title")), text_or_empty(data.get("description")))
