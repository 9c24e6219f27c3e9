"""Ctrl-C and SIGTERM at any instant of a real ``update`` (from git, and from directories),
``promote`` or ``run`` (issue #34.3).

Each trial starts the command on a fresh copy of a package and sends SIGINT
or SIGTERM after a random delay (a third of them in the first 50 ms, the rest
anywhere in the command's run).  Whether krm-merge's handler was installed
when the signal left is read from ``/proc/PID/status`` (``SigCgt``: the
interpreter never catches SIGTERM itself), so the test asserts on what
happened, not on when:

* handled by krm-merge: exit 128+signal, one line saying ``interrupted``,
  no traceback, and the package matches what the line says ("nothing
  written": the old package, nothing printed as changed; "the write was
  finished": the new one); or the command had finished (exit 0, the new
  package); no file of krm-merge's own left behind;
* not installed yet (the interpreter's own start-up, before krm-merge's first
  line; docs/reliability.md): the package is untouched.
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import require_binary

from .harness import KRM_MERGE
from .killing import Case, build_cases, strays, tree

FILES = 300
TRIALS = 6  # per command and signal
EARLY = 0.05  # seconds: a third of the trials land in the first instants of the process


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    return {case.name: case for case in build_cases(tmp_path_factory.mktemp("signals"), FILES)}


GIT_FILES = 60
CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n}\ndata:\n  a: "{value}"\n'


@pytest.fixture(scope="module")
def git_update(tmp_path_factory: pytest.TempPathFactory) -> tuple[Case, dict[str, str]]:
    """``update PKG@v2`` of a package fetched at v1 from a local git repository; its environment."""
    require_binary("git")
    from tests.update.world import World, kptfile

    world = World(tmp_path_factory.mktemp("git-signals"))
    v1 = world.commit({f"cm{n}.yaml": CM.format(n=n, value=1) for n in range(GIT_FILES)}, tag="v1")
    world.commit({f"cm{n}.yaml": CM.format(n=n, value=2) for n in range(GIT_FILES)}, tag="v2")
    pristine = world.tmp / "pristine"
    shutil.copytree(world.up / "pkg", pristine)
    for n in range(GIT_FILES):
        (pristine / f"cm{n}.yaml").write_text(CM.format(n=n, value=1))
    git = f"    repo: file://{world.up}\n    directory: /pkg\n    ref: v1\n"
    (pristine / "Kptfile").write_text(kptfile("local", (
        f"upstream:\n  type: git\n  git:\n{git}  updateStrategy: resource-merge\n"
        f"upstreamLock:\n  type: git\n  git:\n{git}    commit: {v1}\n")))
    copy = world.tmp / "timed"
    shutil.copytree(pristine, copy)
    start = time.monotonic()
    done = subprocess.run([KRM_MERGE, "update", f"{copy}@v2"], env=world.env, capture_output=True, text=True, timeout=300)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    case = Case("git-update", pristine, [KRM_MERGE, "update", "{pkg}@v2"], tree(pristine), tree(copy), seconds)
    return case, world.env


def _handler_installed(pid: int) -> bool:
    """Whether the process catches SIGTERM now: only krm-merge's handler does (Python leaves it alone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # gone already: it ran to its end
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def _trial(case: Case, pkg: Path, rng: random.Random, signo: int, env: dict[str, str] | None = None) -> str:
    shutil.rmtree(pkg, ignore_errors=True)
    shutil.copytree(case.pristine, pkg)
    delay = rng.uniform(0, EARLY) if rng.random() < 1 / 3 else rng.uniform(0, 1.1 * case.seconds)
    argv = [a.replace("{pkg}", str(pkg)) for a in case.argv]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(delay)
    handled = _handler_installed(proc.pid)
    proc.send_signal(signo)
    out, err = proc.communicate(timeout=600)
    state = tree(pkg)
    where = f"{case.name} {signal.Signals(signo).name} at {delay:.3f}s: exit {proc.returncode}, stderr {err[-2000:]!r}"
    if not handled:
        assert proc.returncode in (-signo, 1, 128 + signo), where  # the interpreter's own start-up
        assert state == case.before, where
        return "before krm-merge's first line"
    assert "Traceback" not in err, where
    assert not strays(state), (where, strays(state)[:5])
    if proc.returncode == 0:  # it had finished its work: the signal came with the exit
        assert state == case.after, where
        return "finished"
    assert proc.returncode == 128 + signo, where
    said = [line for line in err.splitlines() if ": interrupted (" in line]
    assert len(said) == 1, where
    if said[0].endswith("nothing written"):
        assert state == case.before, where
        assert out == "" and "[info]" not in err, f"{where}: changes printed as done: {out[:300]!r}"
    else:
        assert said[0].endswith("after the commit point: the write was finished"), where
        assert state == case.after, where
    return said[0].split(": ", 1)[1]


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["update", "promote", "run"])
def test_a_signal_at_any_instant_says_what_it_interrupted(
        cases: dict[str, Case], tmp_path: Path, command: str, signo: int) -> None:
    rng = random.Random(f"{command}-{signo}")
    seen = [_trial(cases[command], tmp_path / "pkg", rng, signo) for _ in range(TRIALS)]
    assert any(s.startswith("interrupted") for s in seen), seen  # at least one landed while krm-merge ran


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_any_instant_of_an_update_from_git_says_what_it_interrupted(
        git_update: tuple[Case, dict[str, str]], tmp_path: Path, signo: int) -> None:
    case, env = git_update
    rng = random.Random(f"git-{signo}")
    seen = [_trial(case, tmp_path / "pkg", rng, signo, env) for _ in range(TRIALS)]
    assert any(s.startswith("interrupted") for s in seen), seen


def test_no_signal_is_taken_between_the_commit_point_and_the_finished_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal's write (the commit point) and the finish share one held-back stretch: a signal let through
    between them would end the run saying "nothing written" while the journal rolls the write forward."""
    from krm_merge import interrupts, txn

    events: list[str] = []
    held = interrupts.held_back

    class recording(held):  # type: ignore[misc,valid-type]
        def __enter__(self) -> None:
            events.append("hold")
            super().__enter__()

        def __exit__(self, *exc: object) -> None:
            events.append("let through")
            super().__exit__(*exc)

    journal, finish = txn._write_journal, txn._finish
    monkeypatch.setattr(interrupts, "held_back", recording)
    monkeypatch.setattr(txn, "_write_journal", lambda *a: (events.append("journal"), journal(*a))[1])
    monkeypatch.setattr(txn, "_finish", lambda *a: (events.append("finish"), finish(*a))[1])
    (tmp_path / "a.yaml").write_text("a: 1\n")
    txn.commit(tmp_path, [txn.Change("a.yaml", b"a: 2\n", b"a: 1\n")])
    assert (tmp_path / "a.yaml").read_text() == "a: 2\n"
    between = events[events.index("journal"):events.index("finish")]
    assert "let through" not in between, events


def test_a_signal_landing_in_a_finalizer_is_neither_printed_nor_lost(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Python runs a signal handler inside a finalizer too (CI saw one in importlib's module-lock weakref
    callback), and drops what it raises there after printing "Exception ignored" with a traceback.  The
    handler keeps that signal instead: nothing printed, and the next package write stops before it writes."""
    import weakref

    from krm_merge import interrupts, txn

    hook = sys.unraisablehook
    handler = interrupts.Handler()
    assert handler.install()
    try:
        class Finalized:
            pass

        obj = Finalized()
        ref = weakref.ref(obj, lambda _: handler(signal.SIGTERM, None))
        del obj  # the callback runs here; the Interrupted it raises never reaches this frame
        assert ref() is None and handler.signo == signal.SIGTERM and handler.swallowed
        (tmp_path / "a.yaml").write_text("a: 1\n")
        with pytest.raises(interrupts.Interrupted) as stopped:
            txn.commit(tmp_path, [txn.Change("a.yaml", b"a: 2\n", b"a: 1\n")])
        assert stopped.value.signo == signal.SIGTERM and not stopped.value.written
        assert (tmp_path / "a.yaml").read_text() == "a: 1\n" and sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]
    finally:
        handler.restore()
    assert "Traceback" not in capsys.readouterr().err
    assert sys.unraisablehook is hook  # restore() puts the previous hook back
