"""``krm-merge promote DIR``: in-place edits, exit codes, safety of writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from krm_merge.commands.promote import main

M = '# {"$promotion": "default:podinfo:prod"}'
ARGS = ["--pipeline", "default/podinfo", "--environment", "prod", "--value", "6.3.0"]


def write(root: Path, rel: str, text: str | bytes, mode: int = 0o644) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    path.chmod(mode)
    return path


def test_changes_only_the_marked_scalar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = (f"# head\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\n\r\nmetadata:\r\n    name: x\r\n"
                f"data:\r\n    tpl: '{{{{ .Values.x }}}}'\r\n    name: {{{{ .Values.name }}}}\r\n    v: 6.2.0   {M}\r\n    script: |\r\n      a\r\n\r\n"
                f"      b\r\n---\r\n# second\r\nkind: Other\r\n")
    path = write(tmp_path, "a/b/c.yaml", original, 0o640)
    assert main([str(tmp_path), *ARGS]) == 0
    assert path.read_bytes() == original.replace("v: 6.2.0", "v: 6.3.0").encode()
    assert path.stat().st_mode & 0o777 == 0o640
    assert "krm-merge promote: set: a/b/c.yaml:11: data.v: '6.2.0' -> '6.3.0'" in capsys.readouterr().err
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_unmarked_and_other_files_untouched(tmp_path: Path) -> None:
    marked = write(tmp_path, "m.yml", f"v: 1 {M}\n")
    plain = write(tmp_path, "p.yaml", "v: 1\n")
    other = write(tmp_path, "notes.txt", f"v: 1 {M}\n")
    before = {p: p.stat().st_mtime_ns for p in (plain, other)}
    assert main([str(tmp_path), *ARGS]) == 0
    assert marked.read_text() == f"v: 6.3.0 {M}\n"
    assert {p: p.stat().st_mtime_ns for p in (plain, other)} == before
    assert other.read_text() == f"v: 1 {M}\n"


def test_no_match_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "a.yaml", 'v: 1 # {"$promotion": "default:podinfo:dev"}\n')
    assert main([str(tmp_path), *ARGS]) == 1
    assert "no field found" in capsys.readouterr().err
    assert main([str(tmp_path), *ARGS, "--allow-no-match"]) == 0


def test_already_current_exits_zero_without_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "a.yaml", f"v: 6.3.0 {M}\n")
    mtime = path.stat().st_mtime_ns
    assert main([str(tmp_path), *ARGS]) == 0
    assert path.stat().st_mtime_ns == mtime
    assert "already at" in capsys.readouterr().err


def test_invalid_marked_yaml_is_an_error_naming_file_and_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.yaml", f"v: 1 {M}\n\tw: 2\n")
    good = write(tmp_path, "good.yaml", f"v: 1 {M}\n")
    assert main([str(tmp_path), *ARGS]) == 1
    err = capsys.readouterr().err
    assert "error: bad.yaml:2: not valid YAML" in err and "--skip-unreadable" in err and "nothing written" in err
    assert bad.read_text() == f"v: 1 {M}\n\tw: 2\n"
    assert good.read_text() == f"v: 1 {M}\n"


def test_skip_unreadable_reports_and_leaves_bad_files_alone(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.yaml", f"v: 1 {M}\nw: [\n")
    binary = write(tmp_path, "bin.yaml", b"\xff\xfe" + f"v: 1 {M}\n".encode())
    good = write(tmp_path, "good.yaml", f"v: 1 {M}\n")
    assert main([str(tmp_path), *ARGS, "--skip-unreadable"]) == 0
    err = capsys.readouterr().err
    assert "warning: bad.yaml:" in err and "not valid YAML" in err and "bin.yaml: not UTF-8" in err
    assert bad.read_text() == f"v: 1 {M}\nw: [\n"
    assert binary.read_bytes().startswith(b"\xff\xfe")
    assert good.read_text() == f"v: 6.3.0 {M}\n"


def test_error_anywhere_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write(tmp_path, "a.yaml", f"v: 1 {M}\n")
    write(tmp_path, "z.yaml", f"tags: [a, b] {M}\n")
    assert main([str(tmp_path), *ARGS]) == 1
    err = capsys.readouterr().err
    assert "z.yaml:1" in err and "flow sequence" in err and "nothing written" in err
    assert first.read_text() == f"v: 1 {M}\n"


def test_dry_run_prints_diff_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "a.yaml", f"v: 1 {M}\n")
    assert main([str(tmp_path), *ARGS, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"-v: 1 {M}" in out and f"+v: 6.3.0 {M}" in out
    assert path.read_text() == f"v: 1 {M}\n"


def test_symlinks_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = write(tmp_path, "outside/real.yaml", f"v: 1 {M}\n")
    root = tmp_path / "pkg"
    root.mkdir()
    os.symlink(outside, root / "link.yaml")
    os.symlink(tmp_path / "outside", root / "linkdir")
    os.symlink(tmp_path / "missing.yaml", root / "dangling.yaml")
    assert main([str(root), *ARGS]) == 1
    assert "symbolic link" in capsys.readouterr().err
    assert outside.read_text() == f"v: 1 {M}\n"


def test_from_environment_finds_pipeline_in_dir(tmp_path: Path) -> None:
    write(tmp_path, "pipelines/podinfo.yaml",
          "apiVersion: pipelines.weave.works/v1alpha1\nkind: Pipeline\nmetadata:\n  name: podinfo\n"
          "  namespace: default\nspec:\n  environments:\n  - name: staging\n  - name: prod\n")
    path = write(tmp_path, "apps/prod.yaml", f"v: 1 {M}\n")
    assert main([str(tmp_path), "--pipeline", "default/podinfo", "--from-environment", "staging",
                 "--value", "2.0.0"]) == 0
    assert path.read_text() == f"v: 2.0.0 {M}\n"
    assert main([str(tmp_path), "--pipeline", "default/podinfo", "--from-environment", "prod",
                 "--value", "2.0.0"]) == 1


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path), "--environment", "prod", "--value", "1"])
    assert info.value.code == 2
    assert main([str(tmp_path / "missing"), *ARGS]) == 1
    assert main([str(tmp_path), "--pipeline", "default/podinfo", "--value", "1"]) == 1
    assert "give --environment or --from-environment" in capsys.readouterr().err


def test_value_with_unicode_and_newline(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", f"v: 1 {M}\n")
    assert main([str(tmp_path), "--pipeline", "default/podinfo", "--environment", "prod",
                 "--value", "ünï\n---\nkind: Secret"]) == 0
    assert path.read_text(encoding="utf-8") == f'v: "ünï\\n---\\nkind: Secret" {M}\n'


def test_console_script(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", f"v: 1 {M}\n")
    exe = Path(sys.executable).parent / "krm-merge"
    done = subprocess.run([str(exe), "promote", str(tmp_path), *ARGS], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == f"v: 6.3.0 {M}\n"


def test_deeply_nested_file_is_an_error_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "deep.yaml", f"v: 1 {M}\nd: " + "[" * 5000 + "]" * 5000 + "\n")
    assert main([str(tmp_path), *ARGS]) == 1
    err = capsys.readouterr().err
    assert "nested deeper than" in err and "Traceback" not in err


def test_duplicate_keys_of_a_marked_document_are_warned_with_the_files_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = f"kind: A\nv: 1\n---\nkind: B\ndata:\n  v: 6.2.0 {M}\n  a: 1\n  a: 2\n---\nkind: C\nb: 1\nb: 2\n"
    path = write(tmp_path, "multi.yaml", text)
    assert main([str(tmp_path), *ARGS]) == 0
    assert path.read_text() == text.replace("v: 6.2.0", "v: 6.3.0")
    err = capsys.readouterr().err
    # Line 8 of the file (the marked document starts on line 4); the unmarked third document is not read.
    assert "warning: multi.yaml: key 'a' appears twice in one mapping (line 8)" in err
    assert "'b'" not in err
