"""Test a KRM function the kpt-functions-catalog way: example packages run through real kpt.

An *example* is a directory ``EXAMPLES/<name>/`` holding a package plus
``.expected/``:

* ``config.yaml`` — ``testType: eval`` (others are skipped), ``args``
  (``key: value`` pairs passed as ``-- key=value``), ``fnConfig`` (a file of
  the package used as ``--fn-config``), ``exitCode`` (default 0), ``skip``;
* ``diff.patch`` — the expected ``git diff`` after the run (absent: no change);
* ``results.yaml`` (optional) — the expected results, either kpt's
  ``FunctionResultList`` file or ``{results: [...]}``; compared as data.

Each example runs twice in a fresh git repository through
``kpt fn eval --exec`` and, for functions built with :func:`krm_merge.sdk.run`, standalone
(``fn DIR [--fn-config F] [-- k=v]``).  The first run's exit code, diff and
results must match the expectation; the second run must exit the same way and
change nothing (idempotency).  In a test module::

    import sys
    from pathlib import Path
    from krm_merge.testing import catalog_tests

    HERE = Path(__file__).parent
    test_catalog = catalog_tests([sys.executable, HERE / "my_function.py"], HERE / "examples")

``pytest --krm-update-expected`` (or ``KPT_E2E_UPDATE_EXPECTED=true``)
rewrites ``diff.patch`` and an existing ``results.yaml`` from the first run.
The plugin is registered through the ``pytest11`` entry point when krm-merge is
installed; it adds that option and the ``krm_catalog`` marker.  Needs ``kpt``
and ``git`` on ``PATH`` (the tests are skipped without them, and fail on CI
— ``CI=true`` — instead).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge import gitexec
from krm_merge.yaml.load import load_data

__all__ = [
    "Example",
    "Run",
    "Runner",
    "catalog_tests",
    "check_example",
    "discover",
    "kpt_image_runner",
    "kpt_runner",
    "standalone_runner",
]

MODES = ("kpt", "standalone")
_UPDATE_ENV = "KPT_E2E_UPDATE_EXPECTED"
_TIMEOUT = 300


@dataclass
class Example:
    """One example directory and its ``.expected/config.yaml``."""

    name: str
    path: Path
    test_type: str = "eval"
    args: dict[str, str] = field(default_factory=dict)
    fn_config: str | None = None
    exit_code: int = 0
    skip: bool = False

    @property
    def expected(self) -> Path:
        """The ``.expected`` directory."""
        return self.path / ".expected"


def discover(examples: str | os.PathLike[str]) -> list[Example]:
    """Every ``<examples>/<name>/`` with a ``.expected/config.yaml``, by name."""
    out = []
    for config in sorted(Path(examples).glob("*/.expected/config.yaml")):
        raw = load_data(config.read_text(), str(config)) or {}
        out.append(
            Example(
                name=config.parent.parent.name,
                path=config.parent.parent,
                test_type=str(raw.get("testType", "eval")),
                args={str(k): str(v) for k, v in (raw.get("args") or {}).items()},
                fn_config=raw.get("fnConfig"),
                exit_code=int(raw.get("exitCode", 0)),
                skip=bool(raw.get("skip", False)),
            )
        )
    return out


# -- running -------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    # The scratch profile: the example's repository is a throw-away one, so no config of the user's (a diff
    # driver, a pager, a hook) may change the diff compared.
    git = gitexec.Git(gitexec.SCRATCH, "git not found on PATH", home=str(repo))
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    return git.run(args, f"git {args[0]} in {repo}", cwd=str(repo), env=identity).decode("utf-8", "replace")


def _prepare(example: Example, tmp: Path) -> Path:
    """The example (without ``.expected``) copied into a fresh git repository."""
    pkg = tmp / example.name
    shutil.copytree(example.path, pkg, ignore=shutil.ignore_patterns(".expected"))
    _git(pkg, "init", "-q")
    _git(pkg, "add", "--all")
    _git(pkg, "commit", "-q", "-m", "start", "--allow-empty")
    return pkg


def _diff_after(pkg: Path) -> str:
    """The change the run made, as ``git diff`` prints it (then committed)."""
    _git(pkg, "add", "--all")
    out = _git(pkg, "diff", "--cached")
    _git(pkg, "commit", "-q", "-m", "run", "--allow-empty")
    return out


@dataclass
class Run:
    """One run of the function on a package: the process and the results it reported."""

    process: subprocess.CompletedProcess[str]
    results: list[dict[str, Any]] | None


Runner = Callable[[Example, Path, Path], Run]
"""Runs the function on the package copy (second argument), with a scratch directory (third)."""


def _function_args(example: Example, pkg: Path) -> list[str]:
    out = ["--fn-config", str(pkg / example.fn_config)] if example.fn_config else []
    if example.args:
        out += ["--", *(f"{k}={v}" for k, v in example.args.items())]
    return out


def kpt_runner(function: Sequence[str | os.PathLike[str]]) -> Runner:
    """Runs ``kpt fn eval PKG --exec FUNCTION`` and reads kpt's results file."""
    return _kpt(["--exec", shlex.join(str(part) for part in function)], None)


def kpt_image_runner(image: str, *, env: Mapping[str, str] | None = None) -> Runner:
    """Runs ``kpt fn eval PKG --image IMAGE --image-pull-policy never`` (a locally built image).

    ``env`` is the environment of kpt (``KPT_FN_RUNTIME=podman`` for podman).
    """
    return _kpt(["--image", image, "--image-pull-policy", "never"], env)


def _kpt(function_flags: list[str], env: Mapping[str, str] | None) -> Runner:
    def run(example: Example, pkg: Path, scratch: Path) -> Run:
        results_dir = Path(tempfile.mkdtemp(prefix="results-", dir=scratch))
        cmd = ["kpt", "fn", "eval", str(pkg), *function_flags, "--truncate-output=false",
               "--results-dir", str(results_dir), *_function_args(example, pkg)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT,
                              env=dict(env) if env is not None else None)
        return Run(done, _results_of(results_dir / "results.yaml"))

    return run


def standalone_runner(function: Sequence[str | os.PathLike[str]]) -> Runner:
    """Runs ``FUNCTION PKG [--fn-config F] [--results FILE] [-- k=v]`` (see :func:`krm_merge.sdk.run`)."""

    def run(example: Example, pkg: Path, scratch: Path) -> Run:
        results_file = Path(tempfile.mkstemp(prefix="results-", suffix=".yaml", dir=scratch)[1])
        args = _function_args(example, pkg)
        cut = args.index("--") if "--" in args else len(args)
        cmd = [*(str(p) for p in function), str(pkg), *args[:cut], "--results", str(results_file), *args[cut:]]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT)
        return Run(done, _results_of(results_file))

    return run


def _results_of(path: Path) -> list[dict[str, Any]] | None:
    """The results in a kpt ``FunctionResultList`` or ``{results: [...]}`` file (``None``: no file)."""
    if not path.exists() or not path.read_text().strip():
        return None
    data = load_data(path.read_text(), str(path)) or {}
    if data.get("kind") == "FunctionResultList":
        return [r for item in data.get("items") or [] for r in item.get("results") or []]
    return list(data.get("results") or [])


def check_example(example: Example, tmp: Path, run: Runner, *, update: bool = False) -> None:
    """Run twice: exit code, diff and results must match; the second run must change nothing.

    ``update`` rewrites ``diff.patch`` and an existing ``results.yaml`` from
    the first run instead of comparing them.
    """
    pkg = _prepare(example, tmp)
    diff_file, results_file = example.expected / "diff.patch", example.expected / "results.yaml"
    first = run(example, pkg, tmp)
    _check_exit(example, first, "first run")
    diff = _diff_after(pkg)
    if update:
        _update(diff_file, diff)
        if results_file.exists():
            results_file.write_text(yaml.safe_dump({"results": first.results or []}, sort_keys=False))
    expected_diff = diff_file.read_text() if diff_file.exists() else ""
    assert diff == expected_diff, f"the first run's diff differs from {diff_file}:\n{diff}"
    _check_results(results_file, first, "first run")
    second = run(example, pkg, tmp)
    _check_exit(example, second, "second run")
    assert _diff_after(pkg) == "", "the second run changed the package again (not idempotent)"


def _check_exit(example: Example, run: Run, what: str) -> None:
    done = run.process
    assert done.returncode == example.exit_code, (
        f"{what}: exit code {done.returncode}, expected {example.exit_code}\n"
        f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    )
    assert "Traceback (most recent call last)" not in done.stderr, f"{what}: a traceback:\n{done.stderr}"


def _check_results(results_file: Path, run: Run, what: str) -> None:
    if not results_file.exists():
        return
    expected = _results_of(results_file) or []
    assert run.results == expected, (
        f"{what}: results differ from {results_file}:\n{yaml.safe_dump(run.results, sort_keys=False)}"
    )


def _update(path: Path, diff: str) -> None:
    if diff:
        path.write_text(diff)
    elif path.exists():
        path.unlink()


# -- pytest ----------------------------------------------------------------------------------


def _require(binary: str) -> None:
    if shutil.which(binary) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{binary} is required on CI but was not found on PATH")
        pytest.skip(f"{binary} not found on PATH")


def catalog_tests(
    function: Sequence[str | os.PathLike[str]],
    examples: str | os.PathLike[str] = "examples",
    *,
    modes: Sequence[str] = MODES,
    standalone: Sequence[str | os.PathLike[str]] | None = None,
) -> Callable[..., None]:
    """A pytest test function running every example of ``examples`` through ``function``.

    ``function`` is the command that runs the function (``[sys.executable,
    "fn.py"]``, or an installed console script); ``modes`` picks
    ``"kpt"`` (``kpt fn eval --exec``) and ``"standalone"`` (the command with
    the package directory as argument — ``standalone`` gives a different
    command prefix for that, such as ``["my-fn", "run"]``).  Assign the result
    to a module-level name starting with ``test``.
    """
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise ValueError(f"unknown mode {unknown[0]!r}; valid: {', '.join(MODES)}")
    runners: dict[str, Runner] = {
        "kpt": kpt_runner(function),
        "standalone": standalone_runner(standalone if standalone is not None else function),
    }
    found = discover(examples)
    params = [
        pytest.param(example, mode, id=f"{example.name}-{mode}", marks=_marks(example))
        for example in found
        for mode in modes
    ]
    if not params:
        params = [pytest.param(None, None, id="no-examples",
                               marks=pytest.mark.skip(reason=f"no examples under {examples}"))]

    @pytest.mark.krm_catalog
    @pytest.mark.parametrize(("example", "mode"), params)
    def test_catalog_example(example: Example, mode: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        _require("git")
        if mode == "kpt":
            _require("kpt")
        check_example(example, tmp_path, runners[mode], update=_update_requested(request.config))

    return test_catalog_example


def _marks(example: Example) -> list[Any]:
    if example.skip:
        return [pytest.mark.skip(reason="skip: true in .expected/config.yaml")]
    if example.test_type != "eval":
        return [pytest.mark.skip(reason=f"testType {example.test_type} is not run (only eval)")]
    return []


def _update_requested(config: pytest.Config) -> bool:
    try:
        flag = bool(config.getoption("krm_update_expected"))
    except ValueError:  # the plugin is not registered (krm-merge not installed as a package)
        flag = False
    return flag or os.environ.get(_UPDATE_ENV) == "true"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Plugin hook: ``--krm-update-expected``."""
    parser.getgroup("krm-merge").addoption(
        "--krm-update-expected", action="store_true", dest="krm_update_expected",
        help="rewrite examples' .expected/diff.patch and results.yaml from the first run",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Plugin hook: registers the ``krm_catalog`` marker."""
    config.addinivalue_line("markers", "krm_catalog: a catalog-style example run through the real kpt")
