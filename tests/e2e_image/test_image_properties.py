"""The image itself: metadata, user, bytecode, offline and read-only operation, cost."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
import yaml

import krm_merge

from .invocations import UNKNOWN_MODE
from .tools import Completed, Orchestrators, run

pytestmark = pytest.mark.image

# kpt's exact flags (krm-conventions §2.2) plus a read-only root: the
# function must need neither network nor a writable file system.
KPT_RUN_FLAGS = ["--rm", "-i", "--network", "none", "--user", "nobody",
                 "--security-opt=no-new-privileges", "--pull", "never", "--read-only"]

ONE_ITEM_LIST = f"""\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: one
  data:
    k: v
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: function-input
  data:
    mode: {UNKNOWN_MODE}
"""

# Generous bounds: they catch a broken build (no bytecode, a huge base), not noise.
MAX_IMAGE_BYTES = 250_000_000
MAX_COLD_START_S = 5.0  # a hang guard: over ten times the 0.25-0.44 s measured (docs/image.md)

# Run inside the container as nobody: every module of the venv and every
# stdlib module the function imports must have up-to-date bytecode.
BYTECODE_CHECK = """
import importlib.util, pathlib, sys, sysconfig
missing = []
site = pathlib.Path(sysconfig.get_paths()["purelib"])
for src in site.rglob("*.py"):
    if not pathlib.Path(importlib.util.cache_from_source(str(src))).exists():
        missing.append(str(src))
import krm_merge.cli, krm_merge.runner
for mod in list(sys.modules.values()):
    cached = getattr(mod, "__cached__", None)
    if cached and not pathlib.Path(cached).exists():
        missing.append(cached)
print("\\n".join(missing))
sys.exit(1 if missing else 0)
"""


def _inspect(tools: Orchestrators, image: str) -> dict:
    done = run([tools.podman, "image", "inspect", image])
    assert done.returncode == 0, done.describe()
    return json.loads(done.stdout)[0]


def _python_in_image(tools: Orchestrators, image: str, code: str) -> Completed:
    return run([tools.podman, "run", *KPT_RUN_FLAGS, "--entrypoint", "python3", image, "-c", code])


def test_labels_and_entrypoint(image: str, orchestrators: Orchestrators) -> None:
    """OCI labels carry the package version; the entrypoint is the function."""
    info = _inspect(orchestrators, image)
    labels = info["Config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == krm_merge.__version__
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.source"].startswith("https://")
    assert info["Config"]["Entrypoint"][0].endswith("/krm-merge")
    assert "PYTHONDONTWRITEBYTECODE=1" in info["Config"]["Env"]


def test_image_size_is_bounded(image: str, orchestrators: Orchestrators) -> None:
    """A slim base plus two pure-Python-ish dependencies; no build tools in the image."""
    size = _inspect(orchestrators, image)["Size"]
    print(f"image size: {size / 1e6:.1f} MB")
    assert size < MAX_IMAGE_BYTES


def test_nobody_exists(image: str, orchestrators: Orchestrators) -> None:
    """kpt and kustomize run ``--user nobody``; the name must resolve in the image."""
    done = _python_in_image(orchestrators, image, "import os, pwd; print(pwd.getpwuid(os.getuid()).pw_name)")
    assert done.returncode == 0, done.describe()
    assert done.stdout.strip() == "nobody"


def test_bytecode_is_precompiled(image: str, orchestrators: Orchestrators) -> None:
    """nobody cannot write __pycache__, so every imported module ships bytecode."""
    done = _python_in_image(orchestrators, image, BYTECODE_CHECK)
    assert done.returncode == 0, f"modules without bytecode:\n{done.describe()}"


def test_function_protocol_under_kpt_flags(image: str, orchestrators: Orchestrators) -> None:
    """With kpt's flags and a read-only root the function answers with a ResourceList and exit 1 on error."""
    done = run([orchestrators.podman, "run", *KPT_RUN_FLAGS, image], stdin=ONE_ITEM_LIST)
    assert done.returncode == 1, done.describe()
    out = yaml.safe_load(done.stdout)
    assert out["kind"] == "ResourceList", done.stdout
    assert [item["metadata"]["name"] for item in out["items"]] == ["one"]
    errors = [r for r in out["results"] if r.get("severity", "error") == "error"]
    assert errors and UNKNOWN_MODE in errors[0]["message"], done.stdout


def test_help_matches_host(image: str, orchestrators: Orchestrators, host_help: str) -> None:
    """``podman run IMAGE --help`` prints the host's usage text."""
    done = run([orchestrators.podman, "run", *KPT_RUN_FLAGS, image, "--help"])
    assert done.returncode == 0, done.describe()
    assert done.stdout == host_help


def test_cold_start(image: str, orchestrators: Orchestrators) -> None:
    """A container start plus one tiny ResourceList stays well under kpt's budget."""
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        done = run([orchestrators.podman, "run", *KPT_RUN_FLAGS, image], stdin=ONE_ITEM_LIST)
        timings.append(time.perf_counter() - start)
        assert "kind: ResourceList" in done.stdout, done.describe()
    print(f"cold start (podman run, one-item list): best {min(timings):.3f}s of {timings}")
    assert min(timings) < MAX_COLD_START_S


SOURCE_HASHES = """
import hashlib, json, pathlib, krm_merge
root = pathlib.Path(krm_merge.__file__).parent
print(json.dumps({str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                  for p in sorted(root.rglob("*.py"))}))
"""


def test_image_is_built_from_this_source(image: str, orchestrators: Orchestrators) -> None:
    """The image's krm_merge package is this checkout's (otherwise every other failure misleads)."""
    source_root = Path(__file__).resolve().parents[2] / "function" / "krm_merge"
    expected = {str(p.relative_to(source_root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(source_root.rglob("*.py"))}
    done = _python_in_image(orchestrators, image, SOURCE_HASHES)
    assert done.returncode == 0, done.describe()
    shipped = json.loads(done.stdout)
    stale = sorted(name for name in expected.keys() | shipped.keys() if expected.get(name) != shipped.get(name))
    assert not stale, (f"{image} is stale, rebuild it with tools/build-image.sh; "
                       f"files that differ: {stale}")
