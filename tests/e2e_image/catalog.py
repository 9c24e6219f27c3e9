"""The kpt-functions-catalog example test convention, run against the image.

An example is ``examples/<name>/`` with ``.expected/config.yaml`` (test
config), optional ``.expected/diff.patch`` (expected ``git diff`` of the
package after the run; absent = no change) and optional
``.expected/results.yaml`` (expected kpt ``FunctionResultList``). Like the
catalog's runner, the package is copied to a temporary git repository, the
kpt command runs twice (the second run must not change anything further),
and exit code, diff, results and, when given, stdout/stderr are compared.

Deliberate differences from the catalog runner, because this suite tests the
image: ``eval`` always uses ``--image`` with the image under test (an
``execPath`` is ignored), and for ``render`` every Kptfile ``image:`` whose
name contains ``krm-merge`` is made to resolve to the image under test by
tagging it in podman under that name.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .tools import (Completed, Orchestrators, diff_since, kpt_env, run,
                    snapshot_package)

EXPECTED_DIR = ".expected"
_TIMING = re.compile(r" in \d+(\.\d+)?(ns|µs|us|ms|s|m\d+(\.\d+)?s)")


class ExampleConfigError(ValueError):
    """An example's .expected/config.yaml is malformed."""


@dataclass(frozen=True)
class ExampleConfig:
    """Fields of the catalog's .expected/config.yaml that this runner honours."""

    test_type: str = "render"
    exit_code: int = 0
    args: dict[str, str] = field(default_factory=dict)
    fn_config: str | None = None
    image: str | None = None
    network: bool = False
    allow_exec: bool = False
    allow_network: bool = False
    include_meta_resources: bool = False
    skip: bool = False
    runtimes: tuple[str, ...] = ()
    std_out: str | None = None
    std_err: str | None = None
    std_err_regex: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Example:
    """One example package with its expectations."""

    name: str
    path: Path
    config: ExampleConfig
    expected_diff: str
    expected_results: str | None


def discover_examples(examples_root: Path) -> list[Example]:
    """Every ``examples/*/`` that has ``.expected/config.yaml``, sorted by name."""
    found = []
    for config_file in sorted(examples_root.glob(f"*/{EXPECTED_DIR}/config.yaml")):
        found.append(load_example(config_file.parent.parent))
    return found


def load_example(path: Path) -> Example:
    """Read an example's expectations."""
    expected = path / EXPECTED_DIR
    config = parse_config(expected / "config.yaml")
    diff_file = expected / "diff.patch"
    results_file = expected / "results.yaml"
    return Example(
        name=path.name,
        path=path,
        config=config,
        expected_diff=diff_file.read_text().strip() if diff_file.exists() else "",
        expected_results=results_file.read_text().strip() if results_file.exists() else None,
    )


def parse_config(config_file: Path) -> ExampleConfig:
    """Parse .expected/config.yaml into an ExampleConfig."""
    raw = yaml.safe_load(config_file.read_text()) or {}
    if not isinstance(raw, dict):
        raise ExampleConfigError(f"{config_file}: expected a mapping")
    test_type = str(raw.get("testType", "render"))
    if test_type not in ("render", "eval"):
        raise ExampleConfigError(f"{config_file}: testType must be render or eval, got {test_type!r}")
    env_list = raw.get("env") or []
    return ExampleConfig(
        test_type=test_type,
        exit_code=int(raw.get("exitCode", 0)),
        args={str(k): _arg_text(v) for k, v in (raw.get("args") or {}).items()},
        fn_config=raw.get("fnConfig"),
        image=raw.get("image"),
        network=bool(raw.get("network", False)),
        allow_exec=bool(raw.get("allowExec", False)),
        allow_network=bool(raw.get("allowNetwork", False)),
        include_meta_resources=bool(raw.get("includeMetaResources", False)),
        skip=bool(raw.get("skip", False)),
        runtimes=tuple(str(r) for r in raw.get("runtimes") or ()),
        std_out=raw.get("stdOut"),
        std_err=raw.get("stdErr"),
        std_err_regex=raw.get("stdErrRegEx"),
        env=dict(_split_env(item, config_file) for item in env_list),
    )


def _arg_text(value: Any) -> str:
    # YAML may have parsed `replicas: 3` or `on: true`; kpt receives text.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _split_env(item: str, config_file: Path) -> tuple[str, str]:
    key, sep, value = str(item).partition("=")
    if not sep:
        raise ExampleConfigError(f"{config_file}: env entry {item!r} is not KEY=VALUE")
    return key, value


def kptfile_function_images(pkg: Path) -> set[str]:
    """Images named in any Kptfile pipeline under ``pkg`` that refer to krm-merge."""
    images: set[str] = set()
    for kptfile in pkg.rglob("Kptfile"):
        if EXPECTED_DIR in kptfile.parts:
            continue
        doc = yaml.safe_load(kptfile.read_text()) or {}
        pipeline = doc.get("pipeline") or {}
        for step in [*(pipeline.get("mutators") or []), *(pipeline.get("validators") or [])]:
            ref = step.get("image") if isinstance(step, dict) else None
            if ref and "krm-merge" in ref:
                images.add(ref)
    return images


@dataclass
class ExampleRun:
    """State of one example run in a temporary git repository."""

    example: Example
    tools: Orchestrators
    image: str
    workdir: Path
    host_bin: Path
    pkg: Path = field(init=False)
    results_dir: Path = field(init=False)
    initial_commit: str = field(init=False)

    def prepare(self) -> None:
        """Copy the example (including .expected, as the catalog does) and commit it."""
        self.pkg = self.workdir / self.example.name
        shutil.copytree(self.example.path, self.pkg, symlinks=True)
        self.results_dir = self.workdir / "results"
        self.results_dir.mkdir()
        self.initial_commit = snapshot_package(self.tools, self.pkg)

    def command(self) -> list[str]:
        """The kpt command line for this example."""
        cfg = self.example.config
        if cfg.test_type == "eval":
            argv = [self.tools.kpt, "fn", "eval", str(self.pkg), "--image", self.image,
                    "--image-pull-policy", "never"]
            if cfg.network:
                argv.append("--network")
            if cfg.fn_config:
                argv += ["--fn-config", str(self.pkg / cfg.fn_config)]
            if cfg.include_meta_resources:
                argv.append("--include-meta-resources")
        else:
            argv = [self.tools.kpt, "fn", "render", str(self.pkg), "--image-pull-policy", "never"]
            if cfg.allow_exec:
                argv.append("--allow-exec")
            if cfg.allow_network:
                argv.append("--allow-network")
        if self.example.expected_results is not None:
            argv += ["--results-dir", str(self.results_dir)]
        if cfg.test_type == "eval" and cfg.args:
            argv.append("--")
            argv += [f"{k}={v}" for k, v in cfg.args.items()]
        return argv

    def execute(self) -> Completed:
        """Run the kpt command once (krm-merge from the host venv first on PATH for exec)."""
        env = kpt_env(self.example.config.env, path_prefix=[self.host_bin])
        return run(self.command(), cwd=self.pkg, env=env)

    def actual_diff(self) -> str:
        """``git diff`` of the package since the initial commit."""
        return diff_since(self.tools, self.pkg, self.initial_commit)

    def actual_results(self) -> str:
        """The single results file kpt wrote, trimmed, with the image normalised."""
        files = sorted(self.results_dir.iterdir())
        if len(files) != 1:
            raise AssertionError(f"expected one results file in {self.results_dir}, got {files}")
        return self.normalise(files[0].read_text()).strip()

    def normalise(self, text: str) -> str:
        """Make timing and the local image name comparable with the expectations."""
        text = _TIMING.sub(" in 0s", text)
        if self.example.config.image:
            text = text.replace(self.image, self.example.config.image)
        return text.replace(str(self.pkg), self.example.name)


def check_outcome(run_state: ExampleRun, done: Completed, attempt: int) -> None:
    """Assert the catalog expectations after one kpt run."""
    example = run_state.example
    cfg = example.config
    context = f"example {example.name}, run {attempt}\n{done.describe()}"
    assert done.returncode == cfg.exit_code, f"exit code {done.returncode} != {cfg.exit_code}\n{context}"
    if cfg.std_out is not None:
        assert run_state.normalise(done.stdout).strip() == cfg.std_out.strip(), f"stdout differs\n{context}"
    if cfg.std_err is not None:
        assert run_state.normalise(done.stderr).strip() == cfg.std_err.strip(), f"stderr differs\n{context}"
    if cfg.std_err_regex is not None:
        assert re.search(cfg.std_err_regex, done.stderr), f"stderr does not match {cfg.std_err_regex!r}\n{context}"
    if example.expected_results is not None:
        actual = run_state.actual_results()
        expected = run_state.normalise(example.expected_results).strip()
        assert actual == expected, f"results.yaml differs\n--- actual\n{actual}\n{context}"
    diff = run_state.actual_diff()
    assert diff == example.expected_diff, (
        f"package diff differs from .expected/diff.patch\n--- actual\n{diff}\n"
        f"--- expected\n{example.expected_diff}\n{context}")
