"""A dry run refuses what the real run refuses (issue #34.1), through the real command line.

Every refusal of the writer is checked by ``ChangeSet.validate``, which both
``diff`` (``--dry-run``) and ``apply`` call: for each one, the dry run and the
real run must exit with the same code and print the same error line, and
neither may change a file (inside the package or out).  ``resolve`` has no
dry run: its real run must refuse cleanly.  ``sdk-function`` is a function
written with the SDK and run standalone on the package (``fn.py DIR``, the
same directory path as ``krm-merge run``): only a function can move an item
or create one, so the refusals that need that are driven through it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from krm_merge.krm.results import ResourceRef
from krm_merge.update import ledger

from tests import helpers

from .harness import KRM_MERGE

PIPELINE = ("apiVersion: pipelines.weave.works/v1alpha1\nkind: Pipeline\nmetadata:\n  name: app\n  namespace: default\n"
            "spec:\n  environments:\n  - name: staging\n  - name: prod\n")
MARKED = ('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n'
          '  prod: "1.0" # {{"$promotion": "default:app:prod"}}\n')
CONFLICT = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n"
            "  replicas: 5  # krm-merge:conflict upstream=3 origin=2\n")
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  x: \"{value}\"\n"

FUNCTION = '''
import sys
from krm_merge import sdk


def fn(rl):
    action = rl.function_config.get("data.action")
    maps = [item for item in rl.items if item.kind == "ConfigMap"]
    if action == "stamp-path":  # each item gets a value of its own: two links to one file disagree
        for item in maps:
            item.set("data.x", item.path)
    elif action == "move":
        maps[0].set_path(rl.function_config.get("data.to"))
    elif action == "create":
        rl.items.append(sdk.KubeObject.from_data(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}},
            path=rl.function_config.get("data.to")))


sdk.run(fn, name="fn")
'''

PROMOTE = ["promote", "{pkg}", "--set", "default:app:prod=2.0"]
RUN = ["run", "{pkg}", "--", "mode=promote", "pipeline=default/app", "environment=prod", "value=2.0"]


def _marked_package(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "pipeline.yaml").write_text(PIPELINE)
    for name in ("a", "b"):
        (pkg / f"{name}.yaml").write_text(MARKED.format(name=name))
    return pkg


def _link_outside(root: Path, text: str) -> Path:
    """The issue's package (its folder renamed): ``link-outside.yaml -> ../elsewhere/outside.yaml``, beside files
    the command changes."""
    pkg = _marked_package(root)
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "outside.yaml").write_text(text.format(name="outside"))
    (pkg / "link-outside.yaml").symlink_to("../elsewhere/outside.yaml")
    return pkg


def _link_into_git(root: Path, text: str) -> Path:
    pkg = _marked_package(root)
    (pkg / ".git").mkdir()
    (pkg / ".git" / "hooks.yaml").write_text(text.format(name="hooks"))
    (pkg / "link.yaml").symlink_to(".git/hooks.yaml")
    return pkg


def _two_links(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "real.yaml").write_text(CM.format(name="a", value="1"))
    (pkg / "alias.yaml").symlink_to("real.yaml")
    return pkg


def _plain(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "config.yaml").write_text(CM.format(name="a", value="1"))
    (pkg / "notes").write_text("a file, not a folder\n")
    return pkg


def _update_dirs(root: Path, local_extra: dict[str, str], upstream_extra: dict[str, str]) -> Path:
    """origin, upstream (origin plus ``upstream_extra``) and local (origin plus ``local_extra``)."""
    for name, extra in (("origin", {}), ("upstream", upstream_extra), ("local", local_extra)):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n")
        (folder / "a.yaml").write_text(CM.format(name="a", value="1" if name != "upstream" else "2"))
        for rel, text in extra.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    return root / "local"


def _update(local: Path) -> list[str]:
    return ["update", str(local), "--origin", str(local.parent / "origin"), "--upstream", str(local.parent / "upstream")]


# case id: (build the package under a folder, the command line with {pkg}, "fn" for the SDK function, the refusal)
Case = tuple[Callable[[Path], Path], list[str], str]
CASES: dict[str, Case] = {
    "link-outside-promote": (lambda r: _link_outside(r, MARKED), PROMOTE, "outside the package"),
    "link-outside-run": (lambda r: _link_outside(r, MARKED), RUN, "outside the package"),
    "link-into-git-promote": (lambda r: _link_into_git(r, MARKED), PROMOTE, "a symbolic link into .git"),
    "link-into-git-run": (lambda r: _link_into_git(r, MARKED), RUN, "a symbolic link into .git"),
    "two-links-differ-sdk-function": (_two_links, ["fn", "{pkg}", "--", "action=stamp-path"],
                                      "they are the same file (a symbolic link) and the changes differ"),
    "path-leaves-sdk-function": (_plain, ["fn", "{pkg}", "--", "action=move", "to=../escaped.yaml"],
                                 "the path leaves the package"),
    "file-as-folder-sdk-function": (_plain, ["fn", "{pkg}", "--", "action=move", "to=notes/config.yaml"],
                                    "notes is a file, not a folder"),
    "case-clash-sdk-function": (_plain, ["fn", "{pkg}", "--", "action=create", "to=Config.yaml"],
                                "'config.yaml' differs only in case"),
    "nfd-clash-sdk-function": (_plain, ["fn", "{pkg}", "--", "action=create", "to=config.yaml".replace(
        "config", "co\u0301nfig")], None),  # not a clash: a different name (ó is not o); see the NFC case
    "nfc-clash-update": (lambda r: _update_dirs(r, {"caf\u00e9.yaml": CM.format(name="mine", value="1")},
                                                {"cafe\u0301.yaml": CM.format(name="theirs", value="1")}),
                         ["update"], "differs only in case or Unicode normalisation"),
    "case-clash-update": (lambda r: _update_dirs(r, {"cm.yaml": CM.format(name="mine", value="1")},
                                                 {"CM.yaml": CM.format(name="theirs", value="1")}),
                          ["update"], "'cm.yaml' differs only in case"),
    "file-as-folder-update": (lambda r: _update_dirs(r, {"sub": "mine\n"}, {"sub/x.yaml": CM.format(name="x", value="1")}),
                              ["update"], "sub is a file, not a folder"),
}


def _argv(case: Case, pkg: Path, fn: Path) -> list[str]:
    build, argv, _ = case
    if argv == ["update"]:
        return [KRM_MERGE, *_update(pkg)]
    head = [sys.executable, str(fn)] if argv[0] == "fn" else [KRM_MERGE, argv[0]]
    return head + [str(pkg) if a == "{pkg}" else a for a in argv[1:]]


def _with_dry_run(argv: list[str]) -> list[str]:
    cut = argv.index("--") if "--" in argv else len(argv)
    return argv[:cut] + ["--dry-run"] + argv[cut:]


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error" in line]


@pytest.mark.parametrize("name", sorted(name for name, case in CASES.items() if case[2] is not None))
def test_the_dry_run_refuses_what_the_real_run_refuses(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    fn = tmp_path / "fn.py"
    fn.write_text(FUNCTION)
    pkg = case[0](tmp_path / "work")
    everything = helpers.read_tree(tmp_path / "work")
    real = _argv(case, pkg, fn)
    dry = subprocess.run(_with_dry_run(real), capture_output=True, text=True, timeout=300)
    assert helpers.read_tree(tmp_path / "work") == everything
    done = subprocess.run(real, capture_output=True, text=True, timeout=300)
    assert helpers.read_tree(tmp_path / "work") == everything, "the real run changed a file"
    for proc in (dry, done):
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 1 and case[2] in proc.stderr, (name, proc.returncode, proc.stderr)
    assert _errors(dry.stderr) == _errors(done.stderr)
    assert dry.stdout == done.stdout == "", "nothing is said to be changed"


def test_a_name_that_only_looks_alike_is_not_a_clash(tmp_path: Path) -> None:
    """``có`` (o + combining acute) and ``co`` differ after normalisation too: written, dry run and real."""
    case = CASES["nfd-clash-sdk-function"]
    fn = tmp_path / "fn.py"
    fn.write_text(FUNCTION)
    pkg = case[0](tmp_path / "work")
    real = _argv(case, pkg, fn)
    dry = subprocess.run(_with_dry_run(real), capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0 and "+  name: new" in dry.stdout, dry.stderr
    done = subprocess.run(real, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and (pkg / "co\u0301nfig.yaml").is_file(), done.stderr


@pytest.mark.parametrize("build", [_link_outside, _link_into_git], ids=["link-outside", "link-into-git"])
def test_resolve_refuses_a_link_it_must_not_write_through(build: Callable[[Path, str], Path], tmp_path: Path) -> None:
    """``resolve`` has no dry run; the refusal is the same one, made before anything is written."""
    pkg = build(tmp_path / "work", CONFLICT)
    for name in ("a", "b"):
        (pkg / f"{name}.yaml").write_text(CONFLICT.format(name=name))
    _record_conflicts(pkg)
    everything = helpers.read_tree(tmp_path / "work")
    done = subprocess.run([KRM_MERGE, "resolve", str(pkg), "--take", "upstream"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and "refusing to write 'link" in done.stderr and "Traceback" not in done.stderr
    assert helpers.read_tree(tmp_path / "work") == everything


def _record_conflicts(pkg: Path) -> None:
    """The conflict ledger an update that marked every ``replicas`` of ``pkg`` would leave (``resolve`` decides only
    recorded markers), links included: each file's Deployment, as its text reads through the link."""
    entries = []
    for path in sorted(pkg.glob("*.yaml")):
        text = path.read_text()
        if "krm-merge:conflict" in text:
            name = text.split("name: ", 1)[1].split("\n", 1)[0]
            entries.append(ledger.Entry(ledger.FIELD, path.name, ResourceRef("apps/v1", "Deployment", name),
                                        "spec.replicas", ("spec", "replicas"), 5, 3, 2))
    (pkg / "Kptfile").write_text(helpers.locked_kptfile("pkg"))  # the lock the ledger is bound to
    (pkg / ledger.LEDGER_NAME).write_bytes(ledger.encode(entries, helpers.LOCK_COMMIT))


def test_the_issue_package_dry_run_says_no_file_would_change(tmp_path: Path) -> None:
    """The issue's report: ``run --dry-run`` said "3 files would change" and exited 0."""
    pkg = _link_outside(tmp_path / "work", MARKED)
    argv = [KRM_MERGE, "run", str(pkg), "--dry-run", "--", *RUN[3:]]
    dry = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert dry.returncode == 1 and "would change" not in dry.stderr and dry.stdout == "", dry.stderr
    assert os.readlink(pkg / "link-outside.yaml") == "../elsewhere/outside.yaml"
