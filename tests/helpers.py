"""The one tree reader and the one normaliser of the test suite.

Every test that compares a package before and after, or ours with kpt's,
reads it with :func:`read_tree` and drops bookkeeping with :func:`normalise`,
so two suites cannot disagree about what "the same package" means.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import yaml


def read_tree(root: Path, *, text: bool = False, empty_dirs: bool = False, skip_dirs: Collection[str] = (),
              krm: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """Relative POSIX path -> the file's bytes (``text``: its text), for every file below ``root``.

    ``empty_dirs``: an empty folder appears as ``path/`` with ``b""``.
    ``skip_dirs``: folder names not entered (``.git``).  ``krm``: KRM files
    (``*.yaml``, ``*.yml``, ``Kptfile``) become the list of their non-empty
    documents as data, each passed through ``krm`` (e.g. :func:`normalise`).
    """
    out: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if skip_dirs and any(part in skip_dirs for part in rel.parts[:-1 if path.is_file() else None]):
            continue
        if path.is_dir():
            if empty_dirs and not any(path.iterdir()):
                out[rel.as_posix() + "/"] = b""
        elif path.is_file():
            out[rel.as_posix()] = _content(path, text, krm)
    return out


def _content(path: Path, text: bool, krm: Callable[[Any], Any] | None) -> Any:
    if krm is not None and (path.suffix in (".yaml", ".yml") or path.name == "Kptfile"):
        # PyYAML's own reading, not krm-merge's: an oracle independent of the code under test
        return [krm(doc) for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    return path.read_text() if text or krm is not None else path.read_bytes()


def normalise(data: Any, *, annotations: Collection[str] = ("internal.kpt.dev/upstream-identifier",),
              annotation_prefixes: tuple[str, ...] = (), kptfile_upstream: bool = False) -> Any:
    """A resource without bookkeeping: the named annotations (and prefixes) dropped, an emptied
    ``annotations`` removed; ``kptfile_upstream``: a Kptfile's upstream, upstreamLock and name too."""
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return data
    meta = dict(data["metadata"])
    ann = {k: v for k, v in (meta.get("annotations") or {}).items()
           if k not in annotations and not k.startswith(annotation_prefixes)}
    if ann:
        meta["annotations"] = ann
    else:
        meta.pop("annotations", None)
    out = {**data, "metadata": meta}
    if kptfile_upstream and out.get("kind") == "Kptfile":
        out.pop("upstream", None)
        out.pop("upstreamLock", None)
        meta.pop("name", None)
    return out


def without_nulls(data: Any) -> Any:
    """``data`` without explicit nulls in mappings (kpt's merge drops every null of a resource it writes)."""
    if isinstance(data, dict):
        return {k: without_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [without_nulls(v) for v in data]
    return data


def count_calls(run: Callable[[], Any]) -> int:
    """Every Python and C function call ``run()`` makes: work counted deterministically (a clock is not)."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


LOCK_COMMIT = "c0ffee" * 6 + "c0ff"
"""A made-up commit id for :func:`locked_kptfile` (letters in it: forty digits would read as a YAML integer)."""


def locked_kptfile(name: str = "local") -> str:
    """A Kptfile recording an ``upstreamLock`` commit (:data:`LOCK_COMMIT`), as ``kpt pkg get`` leaves one.

    The conflict ledger is bound to its package's lock, and a package without
    one keeps none: an update with ``--origin``/``--upstream`` folders that
    leaves markers needs it in local (the folders have no Kptfile, so the
    update keeps local's).
    """
    return (f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\nupstreamLock:\n  type: git\n  git:\n"
            f"    repo: https://example.com/pkgs\n    directory: /{name}\n    ref: v1\n    commit: {LOCK_COMMIT}\n")
