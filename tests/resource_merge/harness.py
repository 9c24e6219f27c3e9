"""Runs resource-merge on three in-memory package copies and normalises the result.

Package cases are ``{relative path: file content}`` maps.  Normalisation
removes what only kpt adds (``# kpt-merge`` comments are comments, so they
vanish when parsing; the ``internal.kpt.dev/upstream-identifier`` annotation;
Kptfile ``upstream``/``upstreamLock``) so our output can be compared with kpt's.
"""

from __future__ import annotations

from typing import Any

from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.package import split_documents
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.modes import resource_merge
from tests import helpers

MINIMAL_KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: example\n"
IGNORED_ANNOTATIONS = ("internal.kpt.dev/upstream-identifier",)


def is_krm_file(path: str) -> bool:
    return path.endswith((".yaml", ".yml")) or path.rsplit("/", 1)[-1] == "Kptfile"


def items_of(prefix: str, files: dict[str, str]) -> list[KubeObject]:
    """Items of one copy, with kpt's path/index annotations under ``prefix/``."""
    files = dict(files)
    files.setdefault("Kptfile", MINIMAL_KPTFILE)
    out = []
    for path, text in sorted(files.items()):
        if not is_krm_file(path):
            continue
        _, docs = split_documents(text)
        index = 0
        for doc in docs:
            if not doc.strip() or all(not l.strip() or l.lstrip().startswith("#") for l in doc.splitlines()):
                continue
            out.append(KubeObject.from_text(doc, path=f"{prefix}/{path}", index=index))
            index += 1
    return out


def run_mode(case: dict[str, Any], **config: Any) -> tuple[ResourceList, dict[str, list[Any]]]:
    """Run resource-merge on a case; returns the ResourceList and local files as data."""
    rl = ResourceList()
    rl.items = items_of("local", case["local"]) + items_of("origin", case["original"]) + items_of("upstream", case["updated"])
    resource_merge.run(rl, resource_merge.Config(**config))
    return rl, local_files(rl)


def local_files(rl: ResourceList) -> dict[str, list[Any]]:
    """Local items grouped by file (relative path), as normalised data in index order."""
    by_file: dict[str, list[tuple[int, Any]]] = {}
    for obj in rl.items:
        path = obj.path or ""
        if not path.startswith("local/"):
            continue
        by_file.setdefault(path[len("local/"):], []).append((obj.index, normalise(obj.data)))
    return {p: [d for _, d in sorted(docs, key=lambda t: t[0])] for p, docs in by_file.items()}


def expected_files(files: dict[str, str]) -> dict[str, list[Any]]:
    """kpt's observed/expected files as normalised data (KRM files only)."""
    out = {}
    for path, text in files.items():
        if is_krm_file(path):
            out[path] = [normalise(d) for d in yamlio.load_all_data(text) if d is not None]
    return out


def normalise(data: Any) -> Any:
    """Drop bookkeeping: reader/kpt annotations, Kptfile upstream info."""
    return helpers.normalise(
        data, annotations=(*IGNORED_ANNOTATIONS, "config.kubernetes.io/path", "config.kubernetes.io/index"),
        annotation_prefixes=("internal.config.kubernetes.io/",), kptfile_upstream=True,
    )
