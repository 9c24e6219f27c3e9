"""One small adapter per forge behind one interface: find, open and update a pull request.

Each adapter (:mod:`.github`, :mod:`.gitlab`, :mod:`.gitea` — Forgejo serves Gitea's
API — and :mod:`.bitbucket`, Bitbucket Cloud) turns the five operations of
:class:`Forge` into its forge's documented REST calls through the one HTTP client
(:mod:`.http`).  :func:`detect` tells the forge from a remote's host and :func:`open_forge`
builds the adapter with the API URL and the forge's documented auth header.
"""

from __future__ import annotations

from typing import Any

from krm_merge.change.forges.base import Forge
from krm_merge.change.forges.bitbucket import Bitbucket
from krm_merge.change.forges.gitea import Gitea
from krm_merge.change.forges.github import GitHub
from krm_merge.change.forges.gitlab import GitLab
from krm_merge.change.redact import Redactor
from krm_merge.change.remote import RepoLocation
from krm_merge.change.secrets import Token
from krm_merge.records import Record

class Target(Record):
    """Which forge, where its API is (empty: not known, given none), which repository on it."""

    forge: str
    api: str
    repo: str


_KNOWN_HOSTS = {"github.com": "github", "gitlab.com": "gitlab", "bitbucket.org": "bitbucket",
                "gitea.com": "gitea", "codeberg.org": "gitea"}
_HOST_PREFIXES = (("gitlab.", "gitlab"), ("gitea.", "gitea"), ("forgejo.", "gitea"), ("github.", "github"),
                  ("bitbucket.", "bitbucket"))


def detect(location: RepoLocation) -> str | None:
    """The forge a remote's host is, when the host says so (``github.com``, ``gitlab.example.com``, ...)."""
    host = location.host.lower()
    if host in _KNOWN_HOSTS:
        return _KNOWN_HOSTS[host]
    for prefix, forge in _HOST_PREFIXES:
        if host.startswith(prefix):
            return forge
    return None


def default_api(forge: str, host: str) -> str:
    """The API URL of ``forge`` served at ``host`` (GitHub Enterprise, self-hosted GitLab/Gitea/Forgejo)."""
    if forge == "github":
        return "https://api.github.com" if host.lower() == "github.com" else f"https://{host}/api/v3"
    if forge == "bitbucket":
        return "https://api.bitbucket.org/2.0"
    return f"https://{host}/api/v4" if forge == "gitlab" else f"https://{host}/api/v1"



def open_forge(target: Target, token: Token, redactor: Redactor, **client: Any) -> Forge:
    """The adapter of ``target.forge`` for ``target.repo`` at ``target.api``, authenticated with ``token``.

    ``client`` goes to the HTTP client (a test's clock).  GitLab's CI job token travels in
    ``JOB-TOKEN``, every other GitLab token in ``PRIVATE-TOKEN``.
    """
    if target.forge == "github":
        return GitHub(target.api, target.repo, token.value, redactor, **client)
    if target.forge == "gitlab":
        return GitLab(target.api, target.repo, token.value, redactor, job_token=token.source == "CI_JOB_TOKEN",
                      **client)
    if target.forge == "gitea":
        return Gitea(target.api, target.repo, token.value, redactor, **client)
    return Bitbucket(target.api, target.repo, token.value, redactor, **client)
