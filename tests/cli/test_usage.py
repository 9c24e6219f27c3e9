"""``krm-merge --help`` is generated from the commands' parsers and the modes' keys."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from krm_merge import cli
from krm_merge.registry import MODES, load_mode


@pytest.fixture(scope="module")
def help_text() -> str:
    proc = subprocess.run([sys.executable, "-m", "krm_merge", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", cli.SUBCOMMANDS)
def test_every_option_of_every_command_is_shown(name: str, help_text: str) -> None:
    parser = importlib.import_module(f"krm_merge.commands.{name}").parser()
    options = [s for action in parser._actions for s in action.option_strings if s.startswith("--") and s != "--help"]
    assert options, name
    section = help_text.split(f"krm-merge {name} ", 1)[1].split("\n  krm-merge ", 1)[0]
    for option in options:
        assert option in section, (name, option)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_config_key_of_every_mode_is_shown(mode: str, help_text: str) -> None:
    keys = load_mode(MODES[mode]).keys
    assert keys
    flat = " ".join(help_text.split())
    for key in keys:
        assert f" {key}," in flat or f" {key} " in flat or flat.endswith(key), (mode, key)


def test_the_hand_written_usage_is_gone() -> None:
    assert not hasattr(cli, "USAGE")


def test_a_command_help_is_its_parser(capsys: pytest.CaptureFixture[str]) -> None:
    from krm_merge.commands import run

    with pytest.raises(SystemExit):
        run.main(["--help"])
    assert run.parser().format_help() in capsys.readouterr().out


def test_run_hints_at_the_double_dash(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    from krm_merge.commands import run

    with pytest.raises(SystemExit) as exit_:
        run.main([str(tmp_path), "mode=promote", "value=1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "go after `--`" in err and f"krm-merge run {tmp_path} -- mode=promote value=1" in err


def test_the_console_entry_flushes_everything_and_keeps_the_exit_code() -> None:
    """``cli.entry`` skips the interpreter's teardown: nothing written may be lost, no code changed."""
    import subprocess
    import sys

    items = "".join(f"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{n}\n" for n in range(3000))
    resource_list = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
                     + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    mode: nonsense\n")
    done = subprocess.run([sys.executable, "-m", "krm_merge"], input=resource_list, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1
    import yaml

    out = yaml.safe_load(done.stdout)
    assert len(out["items"]) == 3000 and out["results"][0]["severity"] == "error"
    done = subprocess.run([sys.executable, "-m", "krm_merge", "promote", "--no-such-option"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2 and "error: the following arguments are required: dir" in done.stderr
