"""Run the real ``kubectl patch --local`` as the strategic-merge-patch oracle."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

KUBECTL = shutil.which("kubectl")


@dataclass(frozen=True)
class KubectlResult:
    """kubectl's patched object, or its error message."""

    obj: dict[str, Any] | None
    error: str | None


def kubectl_patch(obj: dict[str, Any], patch: dict[str, Any]) -> KubectlResult:
    """``kubectl patch --local -f OBJ --type strategic --patch-file PATCH -o json``.

    Both documents are written as JSON (kubectl's YAML reader is YAML 1.1).
    No cluster is contacted; an empty kubeconfig keeps the user's out of it.
    """
    assert KUBECTL is not None
    with tempfile.TemporaryDirectory(prefix="smpdiff-") as tmp:
        obj_file = os.path.join(tmp, "obj.json")
        patch_file = os.path.join(tmp, "patch.json")
        with open(obj_file, "w") as stream:
            json.dump(obj, stream)
        with open(patch_file, "w") as stream:
            json.dump(patch, stream)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "KUBECONFIG": os.path.join(tmp, "none")}
        done = subprocess.run(
            [KUBECTL, "patch", "--local", "-f", obj_file, "--type", "strategic",
             "--patch-file", patch_file, "-o", "json"],
            capture_output=True, text=True, env=env, timeout=60,
        )
    if done.returncode != 0:
        return KubectlResult(None, done.stderr.strip().removeprefix("error: "))
    return KubectlResult(json.loads(done.stdout), None)


def _go_json(value: Any) -> Any:
    """``value`` as Go's JSON encoder prints it: an integral float64 prints as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _go_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_json(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """JSON text with sorted keys: equal iff equal as data, types exact, list order kept."""
    return json.dumps(_go_json(value), sort_keys=True)
