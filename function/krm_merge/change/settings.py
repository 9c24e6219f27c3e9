"""What ``--pull-request`` is asked to do: the branch, the base, the remote, the forge, labels, reviewers.

The same settings come from the command line (``--branch``, ``--base``, ...), from the
promote functionConfig's ``pullRequest`` block, and, when promoting by pipeline, from
the Pipeline's pull-request promotion (its url, base branch, provider type and
``secretRef``).  The command line wins over the Pipeline.  This module only reads and
checks them (no git, no network), so the promote mode can parse its config with it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from krm_merge.errors import KrmMergeError
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORGES = ("github", "gitlab", "gitea", "bitbucket")
FORGE_ALIASES = {"forgejo": "gitea", "gitea": "gitea", "github": "github", "gitlab": "gitlab",
                 "bitbucket": "bitbucket", "bitbucket-cloud": "bitbucket"}
CONFIG_KEYS = ("branch", "base", "remote", "forge", "forgeApi", "forgeRepo", "labels", "reviewers")
"""The keys of the promote functionConfig's ``pullRequest`` block (the command's options, camel-cased)."""

PROMOTE_BRANCH = "krm-merge/promote/{promotion}"
"""A promotion's branch: ``{promotion}`` is ``<namespace>-<pipeline>-<environment>`` of a pipeline promotion
(``<namespace>-<policy>`` of an image policy, ``<image>-<directory>`` of a kustomize image), several
promotions' joined by ``+``."""
UPDATE_BRANCH = "krm-merge/update/{package}"
"""An update's branch (``update --pull-request``), where ``resolve --pull-request`` decides its conflicts."""

PLACEHOLDER = re.compile(r"\{([A-Za-z.-]+)\}")
# Characters git refuses in a branch name (git check-ref-format) and a few it allows that confuse
# shells and forges; a value put into a branch name keeps letters, digits and ._-/ only.
_UNSAFE_IN_BRANCH = re.compile(r"[^A-Za-z0-9._/-]+")
SECRET_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")  # a Kubernetes object name (DNS-1123 subdomain)
SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")  # a Secret's data key


class SettingsError(KrmMergeError):
    """A pull-request setting is wrong; ``field`` names it (an option, a config key or a Pipeline field)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, field=field)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class Settings(Record):
    """The pull-request settings of one run (None: not given, the default applies)."""

    branch: str | None = None  # a template: {namespace}, {pipeline}, {environment}, {value}, {package}, {ref}
    base: str | None = None
    remote: str = "origin"
    forge: str | None = None
    forge_api: str | None = None
    forge_repo: str | None = None
    labels: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()


class Target(Record):
    """Where and how one run's change goes up for review, built once by the command from its options.

    ``branch_template`` is the command's default branch (``settings.branch`` wins), ``placeholders``
    the values its ``{name}``s take; ``pipeline``: a Pipeline's pull-request promotion (promote by
    pipeline); ``secrets_dir``: where a Pipeline's ``secretRef`` token is read.
    """

    settings: Settings
    package_dir: str
    branch_template: str
    placeholders: Mapping[str, str]
    pipeline: PipelinePullRequest | None = None
    secrets_dir: str | None = None


class SecretRef(Record):
    """Where a Pipeline keeps its forge token: a Secret in the Pipeline's namespace, and the key in it."""

    namespace: str
    name: str
    key: str = "token"

    def __str__(self) -> str:
        return f"Secret {self.namespace}/{self.name} (key {self.key})"


class PipelinePullRequest(Record):
    """A Pipeline's pull-request promotion: the repository URL, base branch, provider type, token's Secret."""

    where: str  # the field it was read from, for messages
    url: str | None
    base: str | None
    forge: str | None
    secret: SecretRef | None


def forge_name(value: str, where: str) -> str:
    """A forge name (``forgejo`` is ``gitea``'s API); SettingsError naming ``where`` otherwise."""
    found = FORGE_ALIASES.get(value.strip().lower())
    if found is None:
        raise SettingsError(where, f"unknown forge {value!r}; one of {', '.join(FORGES)} (forgejo: gitea)")
    return found


def settings_from_config(block: Any, where: str) -> Settings:
    """The ``pullRequest`` block of a functionConfig; SettingsError naming the key that is wrong."""
    if not isinstance(block, Mapping):
        raise SettingsError(where, "must be a mapping of pull-request settings "
                          f"({', '.join(CONFIG_KEYS)})")
    for key in block:
        if key not in CONFIG_KEYS:
            raise SettingsError(f"{where}.{key}", f"unknown key; valid keys: {', '.join(CONFIG_KEYS)}")

    def text(key: str) -> str | None:
        return _text(block, key, where)

    def names(key: str) -> tuple[str, ...]:
        value = block.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise SettingsError(f"{where}.{key}", "must be a list of names")
        return tuple(value)

    forge = text("forge")
    return Settings(branch=text("branch"), base=text("base"), remote=text("remote") or "origin",
                    forge=forge_name(forge, f"{where}.forge") if forge else None, forge_api=text("forgeApi"),
                    forge_repo=text("forgeRepo"), labels=names("labels"), reviewers=names("reviewers"))


def pipeline_pull_request(found: tuple[str, Mapping[str, Any], str], namespace: str) -> PipelinePullRequest:
    """A Pipeline's pull-request promotion block (from :func:`krm_merge.promote.pipeline.pull_request_promotion`).

    Both shapes are read: pipeline-controller's released API (``strategy.pull-request: {type,
    url, baseBranch}`` with ``secretRef: {name}`` beside it or inside it) and the RFC's
    (``pull-request: {url, branch, secretRef}``, ``secretRef`` a name).  The Pipeline is
    repository content: its values are checked here, and its URL is only compared with the
    remote's, never used to decide where the token goes.
    """
    where, block, secret_at = found

    def text(key: str) -> str | None:
        return _text(block, key, where)

    forge = text("type")
    secret = block.get("secretRef")
    ref = None
    if isinstance(secret, Mapping):
        name, key = secret.get("name"), secret.get("key", "token")
        if not isinstance(name, str) or not SECRET_NAME.match(name):
            raise SettingsError(f"{secret_at}.name", f"must be a Secret's name, got {name!r}")
        if not isinstance(key, str) or not SECRET_KEY.match(key):
            raise SettingsError(f"{secret_at}.key", f"must be a Secret's key, got {key!r}")
        ref = SecretRef(namespace, name, key)
    elif isinstance(secret, str) and secret:
        if not SECRET_NAME.match(secret):
            raise SettingsError(secret_at, f"must be a Secret's name, got {secret!r}")
        ref = SecretRef(namespace, secret)
    elif secret is not None:
        raise SettingsError(secret_at, "must be a Secret's name or {name: ...}")
    if not SECRET_NAME.match(namespace):
        raise SettingsError("metadata.namespace", f"the Pipeline's namespace {namespace!r} cannot hold a Secret")
    return PipelinePullRequest(where, text("url"), text("baseBranch") or text("branch"),
                               forge_name(forge, f"{where}.type") if forge else None, ref)


def _text(block: Mapping[str, Any], key: str, where: str) -> str | None:
    """``block[key]`` as a string, None when absent or empty; SettingsError naming ``where.key`` otherwise."""
    value = block.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SettingsError(f"{where}.{key}", "must be a string")
    return value


def branch_value(value: str) -> str:
    """A value made safe to stand in a branch name: runs of other characters become one ``-``."""
    cleaned = _UNSAFE_IN_BRANCH.sub("-", value).replace("..", "-")
    return cleaned.strip("-./") or "-"


def render_branch(template: str, values: Mapping[str, str], where: str = "--branch") -> str:
    """The branch name ``template`` gives: each ``{name}`` replaced by its value made safe (:func:`branch_value`)."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise SettingsError(where, f"unknown placeholder {{{name}}}; known here: "
                              + ", ".join(f"{{{k}}}" for k in values))
        return branch_value(values[name])

    return PLACEHOLDER.sub(one, template)


class PushTarget(Record):
    """``--push``, read once from the command line: the package's folder, the remote and base branch it goes to
    (None: the remote's default branch), and the pushes in all before giving up (None:
    :data:`krm_merge.change.race.ATTEMPTS`)."""

    root: str
    remote: str = "origin"
    base: str | None = None
    attempts: int | None = None
