"""Keeping the forge token (and any credential in a URL) out of every message, result and report.

One function does it, :meth:`Redactor.redact`: every text built from something a
git command or a forge said passes through it before it becomes a message.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

MASK = "***"
# `scheme://user:password@host`: git and HTTP libraries print remote URLs, and a remote may carry a token there.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
_MIN_SECRET = 4  # shorter "secrets" would mask ordinary words


class Redactor:
    """The secrets of one run, and the one function that masks them."""

    __slots__ = ("_secrets",)

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: list[str] = []
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Mask ``secret`` from now on, and the forms it travels in (Basic credentials in base64, percent-encoded)."""
        for form in _forms(secret):
            if len(form) >= _MIN_SECRET and form not in self._secrets:
                self._secrets.append(form)
        self._secrets.sort(key=len, reverse=True)  # a longer form first: it may contain a shorter one

    def redact(self, text: str) -> str:
        """``text`` with every secret and every URL's user information replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)


def _forms(secret: str) -> list[str]:
    secret = secret.strip()
    if not secret:
        return []
    forms = [secret, base64.b64encode(secret.encode()).decode()]
    if ":" in secret:  # user:password of HTTP Basic: each half alone is a secret too (the password surely)
        forms.append(secret.split(":", 1)[1])
    quoted = re.sub(r"[^A-Za-z0-9_.~-]", lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), secret)
    forms.append(quoted)
    return forms


def mask_url_credentials(url: str, redactor: Redactor) -> None:
    """A remote URL may carry ``user:token@``: mask the token wherever git or we might print it."""
    if "://" in url and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        userinfo = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[0]
        redactor.add(userinfo.split(":", 1)[1] if ":" in userinfo else userinfo)
