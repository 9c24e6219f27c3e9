"""Patch a YAML file with a strategic merge patch, keeping its comments: ``patch_file.py FILE PATCH``.

The recipe of docs/api.md, as a command: FILE holds one Kubernetes object, PATCH one strategic
merge patch (as ``kubectl patch --type strategic`` takes it); FILE is rewritten in place, only
the values and entries the patch changes edited.
"""

from __future__ import annotations

import sys
from pathlib import Path

from krm_merge import smp
from krm_merge.sdk import KubeObject, load_yaml


def patch_file(path: Path, patch: dict) -> None:
    """Apply a strategic merge patch to the object in ``path``, keeping its comments and layout."""
    obj = KubeObject.from_text(path.read_text())
    obj.set_data(smp.apply(obj.data, patch))
    path.write_text(obj.text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: patch_file.py FILE PATCH")
    patch_file(Path(sys.argv[1]), load_yaml(Path(sys.argv[2]).read_text()))
