"""kpt runs the image (``fn eval --image``, Kptfile ``image:``) and the exec
(``exec:`` + ``--allow-exec``) and both behave the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.config import MODES

from .invocations import UNKNOWN_MODE, PackageOutcome, kpt_messages, run_on_package
from .packages import write_kpt_package, write_resources
from .tools import Orchestrators, kpt_env, run

pytestmark = pytest.mark.image

# Every mode the CLI knows plus one it cannot know; for each, whatever the
# host function does (change files, or report a config error), the image
# must do exactly the same.
MODE_NAMES = [*MODES, UNKNOWN_MODE]


def _render(tools: Orchestrators, pkg: Path, step: dict[str, object], host_bin: Path,
            *extra: str) -> PackageOutcome:
    write_kpt_package(pkg, step)
    argv = [tools.kpt, "fn", "render", str(pkg), "--image-pull-policy", "never", *extra]
    return run_on_package(tools, pkg, argv, host_bin)


def _eval(tools: Orchestrators, pkg: Path, function: list[str], mode: str, host_bin: Path) -> PackageOutcome:
    write_resources(pkg)
    argv = [tools.kpt, "fn", "eval", str(pkg), *function, "--", f"mode={mode}"]
    return run_on_package(tools, pkg, argv, host_bin)


def _assert_same(image_run: PackageOutcome, exec_run: PackageOutcome, image: str,
                 exec_name: str, kptfile_swap: tuple[str, str] | None = None) -> None:
    context = f"IMAGE:\n{image_run.done.describe()}\n\nEXEC:\n{exec_run.done.describe()}"
    assert image_run.done.returncode == exec_run.done.returncode, context
    exec_files = exec_run.files
    if kptfile_swap is not None:
        old, new = kptfile_swap
        exec_files = {name: text.replace(old, new) for name, text in exec_files.items()}
    assert image_run.files == exec_files, context
    assert kpt_messages(image_run.done.stderr, image) == kpt_messages(exec_run.done.stderr, exec_name), context


def test_eval_image_reports_config_errors(image: str, orchestrators: Orchestrators,
                                          host_function: Path, tmp_path: Path) -> None:
    """An unknown mode makes the container exit 1 with an error result; nothing changes."""
    outcome = _eval(orchestrators, tmp_path / "pkg", ["--image", image, "--image-pull-policy", "never"],
                    UNKNOWN_MODE, host_function.parent)
    output = outcome.done.stdout + outcome.done.stderr
    assert outcome.done.returncode == 1, outcome.done.describe()
    assert f'[FAIL] "{image}"' in output, outcome.done.describe()
    assert "[error]" in output and UNKNOWN_MODE in output, outcome.done.describe()
    assert outcome.diff == "", outcome.done.describe()


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_eval_image_matches_exec(mode: str, image: str, orchestrators: Orchestrators,
                                 host_function: Path, tmp_path: Path) -> None:
    """``kpt fn eval --image`` and ``--exec krm-merge`` give identical packages and results."""
    host_bin = host_function.parent
    by_image = _eval(orchestrators, tmp_path / "image" / "pkg", ["--image", image, "--image-pull-policy", "never"],
                     mode, host_bin)
    by_exec = _eval(orchestrators, tmp_path / "exec" / "pkg", ["--exec", "krm-merge"], mode, host_bin)
    _assert_same(by_image, by_exec, image, "krm-merge")


def test_render_image_pipeline_reports_config_errors(image: str, orchestrators: Orchestrators,
                                                     host_function: Path, tmp_path: Path) -> None:
    """A Kptfile ``image:`` step runs in podman; its error result fails the render."""
    outcome = _render(orchestrators, tmp_path / "pkg", {"image": image, "configMap": {"mode": UNKNOWN_MODE}},
                      host_function.parent)
    output = outcome.done.stdout + outcome.done.stderr
    assert outcome.done.returncode == 1, outcome.done.describe()
    assert f'[FAIL] "{image}"' in output, outcome.done.describe()
    assert UNKNOWN_MODE in output, outcome.done.describe()
    assert outcome.diff == "", outcome.done.describe()


def test_render_exec_pipeline_needs_allow_exec(orchestrators: Orchestrators, host_function: Path,
                                               tmp_path: Path) -> None:
    """Without ``--allow-exec`` kpt refuses the ``exec:`` step and never runs it."""
    outcome = _render(orchestrators, tmp_path / "pkg", {"exec": "krm-merge", "configMap": {"mode": UNKNOWN_MODE}},
                      host_function.parent)
    assert outcome.done.returncode != 0
    assert "--allow-exec" in outcome.done.stderr, outcome.done.describe()
    assert UNKNOWN_MODE not in outcome.done.stdout + outcome.done.stderr


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_render_image_matches_exec(mode: str, image: str, orchestrators: Orchestrators,
                                   host_function: Path, tmp_path: Path) -> None:
    """A Kptfile ``image:`` step and an ``exec: krm-merge`` step (``--allow-exec``) agree."""
    host_bin = host_function.parent
    config = {"configMap": {"mode": mode}}
    by_image = _render(orchestrators, tmp_path / "image" / "pkg", {"image": image, **config}, host_bin)
    by_exec = _render(orchestrators, tmp_path / "exec" / "pkg", {"exec": "krm-merge", **config}, host_bin, "--allow-exec")
    _assert_same(by_image, by_exec, image, "krm-merge",
                 kptfile_swap=("exec: krm-merge", f"image: {image}"))


def test_fn_doc_prints_usage(image: str, orchestrators: Orchestrators, host_help: str) -> None:
    """``kpt fn doc --image`` shows the same usage as ``krm-merge --help`` on the host."""
    done = run([orchestrators.kpt, "fn", "doc", "--image", image], env=kpt_env())
    assert done.returncode == 0, done.describe()
    # kpt prints the captured text with a newline of its own.
    assert done.stdout.rstrip("\n") == host_help.rstrip("\n"), (
        "the image's --help differs from the host's (is the image stale? rebuild with "
        f"tools/build-image.sh)\n{done.describe()}")
