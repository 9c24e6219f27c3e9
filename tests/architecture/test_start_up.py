"""The light paths load only what they use: no mode but the one that runs, no ruamel/pathlib where they were not.

Imports moved to module tops (tests/architecture/test_lazy_imports.py) must not
drag the heavy modules into a path that never used them; the registry keeps each
mode's and command's module out until it is used.  A small ``update`` from git
(issue 24: most of its time is start-up) creates no dataclass and loads neither
argparse, nor the help text, nor the schema registry, nor the modules only a no-op skips.
"""

from __future__ import annotations

import ast
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
    # change.stage: the step of a promote run's pullRequest block (its git and forge side, krm_merge.change.publish,
    # loads only when a pull request is opened); base: every command's parser
    assert _ours(modules, "krm_merge.commands.") <= {"krm_merge.commands.run", "krm_merge.commands.base"}
    assert not _ours(modules, "krm_merge.change.") - {"krm_merge.change.settings", "krm_merge.change.errors",
                                                      "krm_merge.change.stage"}
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
                          "krm_merge.change.stage", "krm_merge.promote", "krm_merge.promote.pipeline"}


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


# --- the start-up budgets (issue 45) ------------------------------------------------------------------------
#
# Every module a path loads beyond the interpreter's own start-up (what `python -c pass` has loaded), as
# CPython 3.11 loads them, reviewed: a module added to one of these paths fails its test until it is listed
# here with what it costs, and a module no longer loaded fails until its row goes.  What they cost is measured
# by `python -X importtime` and valgrind's instruction counts; the time of each path against `python -c pass`
# is bench/run.py's `startup` case (never asserted in a unit test).

# Every path: the command line (registry, interrupts), the fast YAML reader, the scalar rules, the typed
# outcomes and their renderer.  re (with enum, functools, collections) is the console script's own first
# import; json (values' JSON-style keys, the renderer's --report json); math (YAML floats); numbers (the
# bounds the user may set, read strictly), display (names escaped in words).
_EVERY_PATH = """
    krm_merge krm_merge.cli krm_merge.errors krm_merge.files krm_merge.interrupts krm_merge.records krm_merge.registry
    krm_merge.numbers krm_merge.krm.display
    krm_merge.krm krm_merge.krm.fastyaml krm_merge.krm.fastyaml.edit krm_merge.krm.fastyaml.nodes
    krm_merge.krm.fastyaml.parse krm_merge.krm.fastyaml.render krm_merge.krm.results krm_merge.krm.values
    krm_merge.krm.yamlio krm_merge.outcomes krm_merge.outcomes.kinds krm_merge.outcomes.render
    krm_merge.outcomes.report krm_merge.outcomes.words krm_merge.yaml krm_merge.yaml.layout krm_merge.yaml.load
    krm_merge.yaml.scalars
    __future__ _bisect _collections _contextvars _functools _json _operator _sre bisect collections collections.abc
    contextlib contextvars copyreg enum errno functools gc importlib importlib._bootstrap
    importlib._bootstrap_external itertools json json.decoder json.encoder json.scanner keyword math operator re
    re._casefix re._compiler re._constants re._parser reprlib types warnings
"""
# A no-op `update PKG@REF`: the Kptfile, the package lock (txn: fcntl, signal, threading, zlib), git's ls-remote
# through subprocess (selectors, locale) started by the one git runner (gitexec: its code moved out of upstream.git
# so that change/ and merge3/ start git the same way, issue 44; it brings no module of its own), the git cache's
# paths (pathlib: urllib.parse, ipaddress, ~17M instructions), the conflict policies (merge3.policy) and the list
# rules' fallback keys (merge3.rules), the package lister.  Not the ledger (update.ledger, with the marker engine
# and the package reader behind it: merge3.conflicts, diff3, krm.package): a package with no ledger and an update
# that writes no marker never load it (issue 45).
NO_OP_UPDATE = _EVERY_PATH + """
    krm_merge.change krm_merge.change.pipeline krm_merge.change.settings krm_merge.commands krm_merge.commands.pull_request_options
    krm_merge.commands.update krm_merge.faces krm_merge.gitexec krm_merge.kptfile krm_merge.kptfile.document
    krm_merge.kptfile.upstream krm_merge.krm.display krm_merge.krm.itemviews krm_merge.krm.kubeobject
    krm_merge.krm.pkgio krm_merge.krm.snapshot krm_merge.krm.splice
    krm_merge.merge3 krm_merge.merge3.policy krm_merge.merge3.rules krm_merge.schema
    krm_merge.schema.base krm_merge.txn krm_merge.update krm_merge.update.git
    krm_merge.update.plan krm_merge.update.report krm_merge.update.result krm_merge.update.tree krm_merge.upstream
    krm_merge.upstream.git krm_merge.upstream.gitread
    _blake2 _locale _posixsubprocess _weakrefset fcntl fnmatch ipaddress locale ntpath pathlib select selectors signal
    subprocess threading unicodedata urllib urllib.parse zlib
"""
# `promote DIR --set ... --dry-run` on a marked file: the command's parser (argparse, gettext, locale), the
# package lock (txn: _blake2 seals its journal), the lister (pkgio: fnmatch, unicodedata), promote's fast path
# (no PyYAML).  The change pipeline (change.pipeline: one small module of its own, importing nothing heavy) runs
# every writing command; --pull-request's stage loads only with the option, and so do --push's stage and its git
# side (change.push_stage, change.race); the race rule (promote.contest: one small module, importing only re)
# comes with the planner that hands it to --push.
PROMOTE = _EVERY_PATH + """
    krm_merge.change krm_merge.change.pipeline krm_merge.change.settings krm_merge.commands krm_merge.commands.base
    krm_merge.commands.promote krm_merge.commands.pull_request_options krm_merge.krm.display krm_merge.krm.pkgio
    krm_merge.promote.contest
    krm_merge.krm.snapshot krm_merge.promote krm_merge.promote.changes krm_merge.promote.engine
    krm_merge.promote.errors krm_merge.promote.event krm_merge.promote.fastpath krm_merge.promote.filemode
    krm_merge.promote.files krm_merge.promote.imagepolicy krm_merge.promote.markers krm_merge.promote.pipeline
    krm_merge.promote.report krm_merge.promote.request krm_merge.promote.scalars krm_merge.promote.units krm_merge.txn
    _blake2 _locale _weakrefset argparse fcntl fnmatch gettext locale signal threading unicodedata zlib
"""
# A function run on stdin (kpt's call), reorder-merge with one patch: the runner and the SDK's core, the
# routing, the mode, the patch engine and the built-in schemas (zlib: the schema table).
FUNCTION = _EVERY_PATH + """
    krm_merge.config krm_merge.faces krm_merge.krm.itemviews krm_merge.krm.kubeobject krm_merge.krm.resourcelist
    krm_merge.krm.rtedit krm_merge.krm.selectors krm_merge.krm.splice krm_merge.modes krm_merge.modes.reorder_merge
    krm_merge.runner krm_merge.schema krm_merge.schema.base krm_merge.schema.builtin krm_merge.schema.crd
    krm_merge.schema.nodes krm_merge.schema.registry krm_merge.sdk krm_merge.sdk._core krm_merge.sdk._main krm_merge.smp
    krm_merge.smp.annotations krm_merge.smp.apply krm_merge.smp.errors krm_merge.smp.meta krm_merge.smp.order
    krm_merge.smp.path krm_merge.smp.values
    _weakrefset copy weakref zlib
"""
# The same in promote mode: its results are printed without PyYAML (krm/yamlio.dump_results; PyYAML costs ~99M
# instructions to import), its functionConfig's values read as written by the fast reader.
FUNCTION_PROMOTE = _EVERY_PATH + """
    krm_merge.change krm_merge.change.settings krm_merge.config krm_merge.krm.itemviews krm_merge.krm.kubeobject
    krm_merge.krm.resourcelist krm_merge.krm.selectors krm_merge.krm.splice krm_merge.modes krm_merge.modes.promote
    krm_merge.promote krm_merge.promote.changes krm_merge.promote.engine krm_merge.promote.errors
    krm_merge.promote.fastpath krm_merge.promote.imagepolicy krm_merge.promote.markers krm_merge.promote.pipeline
    krm_merge.promote.request krm_merge.promote.scalars krm_merge.promote.units krm_merge.runner krm_merge.sdk
    krm_merge.sdk._core krm_merge.sdk._main
"""
# What another interpreter version may load differently is not held to the lists above; these stay off
# every path there too unless a list names them.
_HEAVY = {"typing", "dataclasses", "inspect", "ast", "dis", "tokenize", "traceback", "textwrap", "pathlib", "argparse",
          "gettext", "subprocess", "tempfile", "shutil", "hashlib", "random", "difflib", "tarfile", "datetime", "decimal",
          "urllib.request", "http.client", "ssl", "socket", "email", "logging", "multiprocessing", "concurrent.futures",
          "yaml", "ruamel.yaml"}

_BUDGET_PROBE = ("import sys\nbefore = set(sys.modules)\nfrom krm_merge.cli import main\ncode = main(sys.argv[1:])\n"
                 "sys.stdout.flush()\nsys.stderr.write('\\nMODULES ' + repr([code, sorted(set(sys.modules) - before)]))\n")


def _loaded_beyond_the_interpreter(args: list[str], cwd: Path, stdin: str = "", env: dict[str, str] | None = None,
                                   ) -> set[str]:
    """Every module a run of the command line loads that `python -c pass` has not (in a fresh process)."""
    proc = subprocess.run([sys.executable, "-c", _BUDGET_PROBE, *args], input=stdin, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert "MODULES " in proc.stderr, proc.stderr
    code, modules = ast.literal_eval(proc.stderr.rpartition("MODULES ")[2])
    assert code == 0, proc.stderr
    return set(modules)


def _check_budget(loaded: set[str], budget: str) -> None:
    listed = set(budget.split())
    ours = {m for m in loaded if m.startswith("krm_merge")}
    listed_ours = {m for m in listed if m.startswith("krm_merge")}
    if sys.version_info[:2] == (3, 11):
        ours, listed_ours = loaded, listed
    else:
        assert not (loaded - listed) & _HEAVY, f"heavy modules on the path: {sorted((loaded - listed) & _HEAVY)}"
    added, gone = sorted(ours - listed_ours), sorted(listed_ours - ours)
    assert not added, f"modules added to the path (list each with its cost, or keep it off the path): {added}"
    assert not gone, f"modules the path no longer loads (remove them from its list): {gone}"


def test_a_no_op_update_loads_its_listed_modules(world: World) -> None:
    assert _loaded_beyond_the_interpreter(["update", f"{world.our_pkg}@v2"], world.tmp, env=world.env)
    _check_budget(_loaded_beyond_the_interpreter(["update", f"{world.our_pkg}@v2"], world.tmp, env=world.env),
                  NO_OP_UPDATE)


def test_a_promote_loads_its_listed_modules(tmp_path: Path) -> None:
    marked = DEPLOYMENT.replace("replicas: 1", 'replicas: 1 # {"$promotion": "default:web:prod"}')
    (tmp_path / "deploy.yaml").write_text(marked)
    args = ["promote", str(tmp_path), "--set", "default:web:prod=3", "--dry-run"]
    _check_budget(_loaded_beyond_the_interpreter(args, tmp_path), PROMOTE)


def test_a_function_run_loads_its_listed_modules(tmp_path: Path) -> None:
    resource_list = RESOURCE_LIST.split("functionConfig:")[0] + (
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fc\n  data:\n"
        "    mode: reorder-merge\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata:\n"
        "        name: a\n      data:\n        x: \"2\"\n")
    _check_budget(_loaded_beyond_the_interpreter([], tmp_path, resource_list), FUNCTION)
    _check_budget(_loaded_beyond_the_interpreter([], tmp_path, RESOURCE_LIST), FUNCTION_PROMOTE)
