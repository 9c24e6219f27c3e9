"""Where the forge token comes from: the environment, or the Secret a Pipeline names.

Environment (first found wins): ``KRM_MERGE_FORGE_TOKEN``, then the forge's own
variable (``GITHUB_TOKEN``; ``GITLAB_TOKEN``, then ``CI_JOB_TOKEN``; ``GITEA_TOKEN``;
``BITBUCKET_TOKEN``).  A Pipeline's ``secretRef`` is read, when a secrets folder is
given (``--secrets-dir DIR`` or ``KRM_MERGE_SECRETS_DIR``), from
``DIR/<namespace>/<name>/<key>``: the layout of Kubernetes Secrets mounted as volumes
one folder per Secret, so a job running in a cluster mounts the Pipeline's Secret and
nothing else.  It wins over the environment: it is the token the Pipeline asks for.

A token is one line of printable ASCII (:func:`checked`): it travels in an HTTP header,
where a newline would end the header (and Python's HTTP client would print the refused
value, token and all, in its traceback) and a non-ASCII character has no one encoding.
One that holds anything else is refused where it is found, before anything is sent,
written or pushed, by an error naming where it came from but none of its characters.
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
# Blanks around a token are dropped (a file's last newline, a pasted space); Python's own strip() would
# also drop the C0 separators and Unicode spaces, which a token must not be taken with.
_BLANKS = " \t\r\n"
_CONTROLS = {"\n": "a newline", "\r": "a carriage return", "\0": "NUL", "\t": "a tab", "\x1b": "ESC",
             "\x7f": "DEL"}


class Token(Record):
    """A forge token and where it came from (the source names a variable or a file, never the value)."""

    value: str
    source: str


def token_sources(forge: str | None = None) -> tuple[str, ...]:
    """The environment variables read for ``forge``, in order (no forge: every forge's)."""
    if forge is None:
        return (GENERIC_ENV, *(name for names in FORGE_ENV.values() for name in names))
    return (GENERIC_ENV, *FORGE_ENV[forge])


def find_token(forge: str, environ: Mapping[str, str], secret: SecretRef | None = None,
               secrets_dir: str | None = None) -> Token | None:
    """The token to use with ``forge``; None when there is none (the step that needs one says so)."""
    secrets_dir = secrets_dir or environ.get(SECRETS_DIR_ENV) or None
    if secret is not None and secrets_dir:
        return read_secret(secrets_dir, secret)
    for name in token_sources(forge):
        value = environ.get(name, "").strip(_BLANKS)
        if value:
            return checked(Token(value, name), name)
    return None


def checked(token: Token, where: str) -> Token:
    """``token`` when it is printable ASCII (space to ``~``); else a ``pull request`` error naming ``where``.

    The error says what kind of character it found, never the character itself or any
    other of the token's: the message may be printed where the token must not appear.
    """
    bad = next((c for c in token.value if not " " <= c <= "~"), None)
    if bad is None:
        return token
    named = _CONTROLS.get(bad, f"U+{ord(bad):04X}")
    kind = "a non-ASCII character" if ord(bad) > 0x7F else f"a control character ({named})"
    raise ChangeError("pull request", f"{where} must hold one token on one line of printable ASCII: it holds {kind}; "
                      "nothing was sent, written or pushed")


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
    value = data.decode("utf-8", "replace").strip(_BLANKS)  # bytes that are not UTF-8 become U+FFFD: refused
    if not value:
        raise ChangeError("pull request", f"{path} ({secret}) must hold one token on one line: it is empty")
    return checked(Token(value, f"{secret} in {secrets_dir}"), f"{path} ({secret})")
