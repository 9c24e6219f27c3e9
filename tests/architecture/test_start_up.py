"""The light paths load only what they use: no mode but the one that runs, no ruamel/pathlib where they were not.

Imports moved to module tops (tests/architecture/test_lazy_imports.py) must not
drag the heavy modules into a path that never used them; the registry keeps each
mode's and command's module out until it is used.  A small ``update`` from git
(issue 24: most of its time is start-up) creates no dataclass and loads neither
argparse, nor the help text, nor the schema registry, nor the modules only a no-op skips.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.update.world import World, cm, kptfile

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
"""
PATCH = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"
RESOURCE_LIST = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data:
    x: "1"
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: fc
  data:
    mode: promote
    pipeline: default/web
    environment: prod
    value: "2"
    allowNoMatch: "true"
"""
# Runs the command line in-process (no os._exit), then prints the modules it loaded and the
# dataclasses defined by krm-merge's loaded modules (each costs ~0.5 ms to create).
_PROBE = ("import json, sys\nfrom krm_merge.cli import main\ncode = main(json.loads(sys.argv[1]))\n"
          "sys.stdout.flush()\n"
          "made = sorted(f'{name}.{v.__qualname__}' for name, m in list(sys.modules.items())\n"
          "              if name.startswith('krm_merge') for v in vars(m).values()\n"
          "              if isinstance(v, type) and v.__module__ == name and '__dataclass_fields__' in vars(v))\n"
          "sys.stderr.write('\\nMODULES ' + json.dumps([code, sorted(sys.modules), made]))\n")


def _probe(args: list[str], cwd: Path, stdin: str = "", env: dict[str, str] | None = None,
           ) -> tuple[int, set[str], set[str]]:
    """Exit code, every module loaded and the dataclasses krm-merge's modules defined, of one run."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], input=stdin, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert "MODULES " in proc.stderr, proc.stderr
    code, modules, made = json.loads(proc.stderr.rpartition("MODULES ")[2])
    return code, set(modules), set(made)


def _loaded(args: list[str], cwd: Path, stdin: str = "") -> tuple[int, set[str]]:
    code, modules, _ = _probe(args, cwd, stdin)
    return code, modules


def _ours(modules: set[str], prefix: str) -> set[str]:
    return {m for m in modules if m.startswith(prefix)}


@pytest.fixture()
def pkg(tmp_path: Path) -> Path:
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    return tmp_path


@pytest.mark.parametrize("config", [
    ["mode=reorder-merge", f"patch={PATCH}"],
    ["mode=promote", "pipeline=default/web", "environment=prod", "value=2", "allowNoMatch=true"],
])
def test_a_small_dry_run_loads_neither_ruamel_nor_pathlib(pkg: Path, config: list[str]) -> None:
    code, modules = _loaded(["run", str(pkg), "--dry-run", "--", *config], pkg)
    assert code == 0
    assert not _ours(modules, "ruamel") and "pathlib" not in modules
    mode = "krm_merge.modes." + config[0].removeprefix("mode=").replace("-", "_")
    assert _ours(modules, "krm_merge.modes.") == {mode}
    # pull_request: the options and step of a promote run's pullRequest block (its git and forge side,
    # krm_merge.change.publish, loads only when a pull request is opened); base: every command's parser
    assert _ours(modules, "krm_merge.commands.") <= {"krm_merge.commands.run", "krm_merge.commands.pull_request",
                                                     "krm_merge.commands.base"}
    assert not _ours(modules, "krm_merge.change.") - {"krm_merge.change.settings", "krm_merge.change.errors"}
    assert "urllib.request" not in modules


def test_the_function_path_loads_only_the_mode_that_runs_and_no_command(tmp_path: Path) -> None:
    code, modules = _loaded([], tmp_path, RESOURCE_LIST)
    assert code == 0
    assert _ours(modules, "krm_merge.modes.") == {"krm_merge.modes.promote"}
    assert not _ours(modules, "krm_merge.commands") and "pathlib" not in modules and "argparse" not in modules


def test_version_loads_no_mode_no_runner_and_no_yaml(tmp_path: Path) -> None:
    code, modules = _loaded(["--version"], tmp_path)
    assert code == 0
    # interrupts: the signal handler installed by the command line's first line (it imports only signal);
    # records: the registry's ModeEntry is a typed record
    assert _ours(modules, "krm_merge.") <= {"krm_merge.cli", "krm_merge.registry", "krm_merge.errors",
                                            "krm_merge.interrupts", "krm_merge.records"}
    assert not _ours(modules, "ruamel") and "yaml" not in modules


# What only --help, a schema lookup, or a no-op's skipped work loads (each was on this path before
# issue 24, or is kept off it by a lazy import listed in test_lazy_imports.ALLOWED).
_NOT_ON_A_SMALL_UPDATE = {"argparse", "textwrap", "krm_merge.usage", "gzip", "krm_merge.schema.registry",
                          "krm_merge.schema.builtin", "krm_merge.schema.crd", "krm_merge.kptfile.merge",
                          "krm_merge.merge3.textfile",
                          "ruamel", "yaml", "difflib",
                          # the fleet form (update ROOT... --ref) and its worker pool: never on a single update
                          "krm_merge.commands.fleet", "krm_merge.fleet", "multiprocessing", "concurrent.futures",
                          # --pull-request's step, its words and the promote pipeline's reader: only with the option
                          "krm_merge.commands.pull_request", "krm_merge.promote", "krm_merge.promote.pipeline"}


@pytest.fixture()
def world(tmp_path: Path) -> World:
    """An upstream at v1 and v2 (one resource changed), a kpt-fetched local copy at v1 with a local edit."""
    world = World(tmp_path)
    world.commit({"Kptfile": kptfile("pkg"), "a.yaml": cm("a", "1"), "b.yaml": cm("b", "1")}, tag="v1")
    world.get("v1")
    world.edit_local({"a.yaml": cm("a", "1", '  mine: "yes"\n')})
    world.commit({"b.yaml": cm("b", "2")}, tag="v2")
    return world


def test_a_small_git_update_creates_no_dataclass_and_skips_the_help_and_the_schemas(world: World) -> None:
    code, modules, made = _probe(["update", f"{world.our_pkg}@v2"], world.tmp, env=world.env)
    assert code == 0
    assert 'a: "2"' in (world.our_pkg / "b.yaml").read_text()  # it did update (upstream's change)
    assert 'mine: "yes"' in (world.our_pkg / "a.yaml").read_text()  # and merged (local's edit kept)
    assert not made, f"dataclasses created on the update path: {made}"
    assert "dataclasses" not in modules and "inspect" not in modules
    loaded = {m for m in modules if m.split(".")[0] in {"ruamel", "yaml"}} | (modules & _NOT_ON_A_SMALL_UPDATE)
    assert not loaded, f"loaded by a small update: {sorted(loaded)}"


def test_a_no_op_update_loads_no_merge_no_archive_reader_and_no_hash(world: World) -> None:
    assert _probe(["update", f"{world.our_pkg}@v2"], world.tmp, env=world.env)[0] == 0
    code, modules, made = _probe(["update", f"{world.our_pkg}@v2"], world.tmp, env=world.env)
    assert code == 0
    assert not made and "dataclasses" not in modules
    # nor tempfile (random) and shutil (bz2, lzma): git's stderr is read through a pipe, git found without shutil
    assert not modules & {"krm_merge.update.planner", "tarfile", "hashlib", "tempfile", "random", "shutil",
                          *_NOT_ON_A_SMALL_UPDATE}
