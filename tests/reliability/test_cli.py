"""The console script under hostile input: one-line errors, exit codes, no tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import RL_HEAD, check_output, run_cli

STDIN_CASES = {
    "empty": b"",
    "whitespace": b" \n\t\n",
    "not utf-8": b"\xff\xfe\x00k\x00i\x00n\x00d",
    "latin-1": RL_HEAD.encode() + b"items:\n- a: caf\xe9\n",
    "nul bytes": RL_HEAD.encode() + b"items: []\x00\n",
    "utf-16 bom": "\ufeffapiVersion: v1".encode("utf-16"),
    "utf-8 bom": b"\xef\xbb\xbf" + RL_HEAD.encode() + b"items: []\n",
    "binary": bytes(range(256)) * 4,
    "json array": b"[1, 2, 3]",
    "yaml stream": RL_HEAD.encode() + b"items: []\n---\n" + RL_HEAD.encode(),
    "only comments": b"# nothing\n# here\n",
    "tab indent": RL_HEAD.encode() + b"items:\n\t- a: 1\n",
    "crlf": RL_HEAD.replace("\n", "\r\n").encode() + b"items: []\r\n",
    "huge line": RL_HEAD.encode() + b"items: [" + b"1," * 500_000 + b"1]\n",
}


@pytest.mark.parametrize("name", list(STDIN_CASES))
def test_function_mode_on_hostile_stdin(name: str) -> None:
    proc = run_cli([], stdin=STDIN_CASES[name])
    out = check_output(proc.stdout.decode("utf-8"), proc.returncode, proc.stderr.decode("utf-8", "replace"))
    assert proc.returncode == 1  # none of these carries a functionConfig
    assert out.errors


@pytest.mark.parametrize("args", [
    ["run"], ["run", "/nonexistent"], ["run", "--fn-config", "/nonexistent", "."], ["run", ".", "--", "novalue"],
    ["run", ".", "--fn-config", "/dev/null", "--", "a=b"], ["update"], ["update", "/nonexistent", "--origin", "/x",
    "--upstream", "/y"], ["promote", "/nonexistent", "--pipeline", "a/b", "--environment", "e", "--value", "v"],
    ["promote", ".", "--pipeline", "a/b/c/d", "--environment", "e", "--value", "v"], ["diff"],
    ["diff", "/nonexistent", "/nonexistent"], ["bogus"], ["--bogus"],
])
def test_subcommand_errors_are_one_line(args: list[str], tmp_path: Path) -> None:
    proc = run_cli([a if a != "." else str(tmp_path) for a in args])
    err = proc.stderr.decode()
    assert proc.returncode in (1, 2), (proc.returncode, err)
    assert "Traceback" not in err
    error_lines = [line for line in err.splitlines() if "error" in line]
    assert error_lines and all(line.startswith("krm-merge") for line in error_lines), err


def test_run_on_a_package_of_hostile_files(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "binary.yaml").write_bytes(b"\xff\xfe\x00")
    proc = run_cli(["run", str(pkg), "--", "mode=reorder-merge"])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "binary.yaml" in err and "Traceback" not in err, err
    (pkg / "binary.yaml").write_text("a: [\n")
    proc = run_cli(["run", str(pkg), "--", "mode=reorder-merge"])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "binary.yaml" in err and "Traceback" not in err, err
    (pkg / "binary.yaml").write_text("- just\n- a list\n")
    proc = run_cli(["run", str(pkg), "--", "mode=reorder-merge"])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "binary.yaml" in err and "Traceback" not in err, err
