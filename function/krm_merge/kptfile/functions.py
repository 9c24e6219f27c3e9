"""Identity of a pipeline function and the choice of how a function list merges.

The design doc's rules (03-pipeline-merge.md), decided per list
(``pipeline.mutators`` and ``pipeline.validators`` separately):

1. every function of the list in all three sources has a ``name`` -> merge by name;
2. else, if no source lists the same function twice -> merge by function
   identity: the image without tag or digest, or the ``exec`` path;
3. otherwise the list is plain: upstream's if upstream changed it, else local's.
"""

from __future__ import annotations

from typing import Any

from krm_merge.merge3.rules import PLAIN_LIST, ListRule, ListStrategy


def image_without_tag(image: str) -> str:
    """Repository part of an image reference.

    ``localhost:5000/fn:v1`` -> ``localhost:5000/fn`` (a registry port is not a
    tag); ``repo@sha256:abc`` -> ``repo``; ``repo:v1@sha256:abc`` -> ``repo``.
    """
    name = image.split("@", 1)[0]
    colon = name.rfind(":")
    if colon > name.rfind("/"):
        name = name[:colon]
    return name


def function_identity(fn: Any) -> tuple[str, ...] | None:
    """``("exec", path)`` or ``("image", repo)``; None when the function has neither."""
    if not isinstance(fn, dict):
        return None
    exec_path = fn.get("exec")
    if exec_path:
        return ("exec", str(exec_path))
    image = fn.get("image")
    if image:
        return ("image", image_without_tag(str(image)))
    return None


def function_name(fn: Any) -> tuple[str, ...] | None:
    """``("name", name)`` or None."""
    if isinstance(fn, dict) and fn.get("name"):
        return ("name", str(fn["name"]))
    return None


BY_NAME = ListRule(ListStrategy.ASSOCIATIVE, key_fn=function_name)
BY_IDENTITY = ListRule(ListStrategy.ASSOCIATIVE, key_fn=function_identity)


def choose_function_rule(versions: list[Any]) -> ListRule:
    """Rule for one function list given its local, origin and upstream versions."""
    lists = [v for v in versions if isinstance(v, list)]
    functions = [fn for v in lists for fn in v]
    if all(function_name(fn) is not None for fn in functions):
        return BY_NAME
    for v in lists:
        ids = [function_identity(fn) for fn in v]
        if None in ids or len(set(ids)) != len(ids):
            return PLAIN_LIST
    return BY_IDENTITY
