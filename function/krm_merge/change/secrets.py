"""Where the forge token comes from: the environment, or the Secret a Pipeline names.

Environment (first found wins): ``KRM_MERGE_FORGE_TOKEN``, then the forge's own
variable (``GITHUB_TOKEN``; ``GITLAB_TOKEN``, then ``CI_JOB_TOKEN``; ``GITEA_TOKEN``;
``BITBUCKET_TOKEN``).  A Pipeline's ``secretRef`` is read, when a secrets folder is
given (``--secrets-dir DIR`` or ``KRM_MERGE_SECRETS_DIR``), from
``DIR/<namespace>/<name>/<key>``: the layout of Kubernetes Secrets mounted as volumes
one folder per Secret, so a job running in a cluster mounts the Pipeline's Secret and
nothing else.  It wins over the environment: it is the token the Pipeline asks for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from krm_merge.change.errors import ChangeError
from krm_merge.change.settings import SecretRef
from krm_merge.records import Record

GENERIC_ENV = "KRM_MERGE_FORGE_TOKEN"
SECRETS_DIR_ENV = "KRM_MERGE_SECRETS_DIR"
FORGE_ENV: dict[str, tuple[str, ...]] = {
    "github": ("GITHUB_TOKEN",),
    "gitlab": ("GITLAB_TOKEN", "CI_JOB_TOKEN"),
    "gitea": ("GITEA_TOKEN",),
    "bitbucket": ("BITBUCKET_TOKEN",),
}
MAX_TOKEN_BYTES = 16 * 1024  # a token file larger than this is not a token


class Token(Record):
    """A forge token and where it came from (the source names a variable or a file, never the value)."""

    value: str
    source: str


def token_sources(forge: str) -> tuple[str, ...]:
    """The environment variables read for ``forge``, in order."""
    return (GENERIC_ENV, *FORGE_ENV[forge])


def find_token(forge: str, environ: Mapping[str, str], secret: SecretRef | None = None,
               secrets_dir: str | None = None) -> Token | None:
    """The token to use with ``forge``; None when there is none (the step that needs one says so)."""
    secrets_dir = secrets_dir or environ.get(SECRETS_DIR_ENV) or None
    if secret is not None and secrets_dir:
        return read_secret(secrets_dir, secret)
    for name in token_sources(forge):
        value = environ.get(name, "").strip()
        if value:
            return Token(value, name)
    return None


def read_secret(secrets_dir: str, secret: SecretRef) -> Token:
    """The value of ``secret`` under ``secrets_dir`` (``<namespace>/<name>/<key>``); a ``pull request`` error when missing.

    The names were checked as Kubernetes names (no ``/``, no ``..``), so the path stays in
    the folder; the key file may be a symbolic link, as the kubelet makes them.
    """
    path = os.path.join(secrets_dir, secret.namespace, secret.name, secret.key)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TOKEN_BYTES + 1)
    except OSError as err:
        raise ChangeError("pull request", f"cannot read the token of {secret} at {path}: "
                          f"{err.strerror or err}") from None
    if len(data) > MAX_TOKEN_BYTES:
        raise ChangeError("pull request", f"{path} is larger than {MAX_TOKEN_BYTES} bytes: not a token")
    value = data.decode("utf-8", "replace").strip()
    if not value or any(c in value for c in "\r\n\0"):
        raise ChangeError("pull request", f"{path} ({secret}) must hold one token on one line")
    return Token(value, f"{secret} in {secrets_dir}")
