"""Flux ``$imagepolicy`` setters: one image reference, four marker forms.

For a policy ``ns:name`` and the reference ``registry/repo:tag@digest`` the markers
``ns:name``, ``ns:name:name``, ``ns:name:tag`` and ``ns:name:digest`` get the full
reference, the repository, the tag and the digest, as image-automation-controller does.
"""

from __future__ import annotations


from krm_merge.promote.errors import PromoteError
from krm_merge.records import Record


class ImageRef(Record):
    """An image reference split into repository name, tag and digest."""

    name: str
    tag: str
    digest: str

    @classmethod
    def parse(cls, text: str) -> "ImageRef":
        """Split ``[registry[:port]/]repo[:tag][@digest]``; the repository is kept as written."""
        rest, at, digest = text.partition("@")
        slash = rest.rfind("/")
        colon = rest.rfind(":")
        has_tag = colon > slash
        name, tag = (rest[:colon], rest[colon + 1 :]) if has_tag else (rest, "")
        if not name or (has_tag and not tag) or (at and not digest) or any(c.isspace() for c in text):
            raise PromoteError(f"not an image reference: {text!r}")
        return cls(name, tag, digest)

    @property
    def full(self) -> str:
        """``name:tag`` or ``name:tag@digest`` (``name@digest`` without a tag)."""
        ref = self.name + (f":{self.tag}" if self.tag else "")
        return ref + (f"@{self.digest}" if self.digest else "")


def normalize_policy(text: str) -> str:
    """``ns/name`` or ``ns:name`` -> ``ns:name``."""
    for sep in (":", "/"):
        namespace, found, name = text.partition(sep)
        if found and namespace and name and ":" not in name and "/" not in name:
            return f"{namespace}:{name}"
    raise PromoteError(f"imagePolicy must be namespace:name, got {text!r}")


def image_policy_setters(policy: str, reference: str) -> dict[str, str | None]:
    """Setter map for every marker form of ``policy``; None where the reference lacks the part."""
    ref = ImageRef.parse(reference)
    base = normalize_policy(policy)
    return {
        base: ref.full,
        f"{base}:name": ref.name,
        f"{base}:tag": ref.tag or None,
        f"{base}:digest": ref.digest or None,
    }
