"""The bounded loader's messages: kpt's line for YAML errors, a line for every reader."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from krm_merge.yaml import load

CONFLICT = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n"
    "<<<<<<< HEAD\n  x: \"1\"\n=======\n  x: \"2\"\n>>>>>>> other\n"
)
CASES = {
    "conflict markers": CONFLICT,
    "mapping in a value": "a:\n- b\nc: d: e\n",
    "unclosed flow": "a: 1\nb: [1, 2\nc: 3\n",
}


def _line(message: str) -> int:
    m = re.search(r"\bline (\d+)", message)
    assert m, message
    return int(m.group(1))


def test_a_conflict_marker_is_placed_on_its_line() -> None:
    with pytest.raises(load.YamlError) as err:
        load.load_data(CONFLICT, "cm.yaml")
    assert "cm.yaml is not valid YAML at line 6, column 1: could not find expected ':'" in err.value.message


@pytest.mark.parametrize("reader", [load.load_data, load.load_rt, load.load_strings, load.compose_all])
def test_every_reader_gives_the_same_line(reader: object) -> None:
    with pytest.raises(load.YamlError) as err:
        reader(CONFLICT, "cm.yaml")  # type: ignore[operator]
    assert _line(err.value.message) == 6


def test_diff_on_bad_yaml_names_the_line(tmp_path: Path) -> None:
    from krm_merge.commands import diff

    (tmp_path / "a.yaml").write_text(CONFLICT)
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    import io

    err = io.StringIO()
    assert diff.main([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")], io.StringIO(), err) == 1
    assert "line 6" in err.getvalue() and "a.yaml" in err.getvalue()


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("kpt") is None, reason="needs kpt")
@pytest.mark.parametrize("name", ["conflict markers", "mapping in a value"])
def test_the_line_is_kpts(name: str, tmp_path: Path) -> None:
    """Scanner errors: the same line as ``kpt fn source``. (For parser errors go-yaml
    prints its 0-based line, one less than the real one; krm-merge keeps the real line.)"""
    (tmp_path / "f.yaml").write_text(CASES[name])
    kpt = subprocess.run(["kpt", "fn", "source", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert kpt.returncode != 0
    with pytest.raises(load.YamlError) as err:
        load.load_data(CASES[name], "f.yaml")
    assert _line(err.value.message) == _line(kpt.stderr), (err.value.message, kpt.stderr)


DEEP = {  # each nests 3,000 levels; the level that breaks the bound starts on the line given
    "flow sequences": ("a: 1\nd: " + "[" * 3000 + "]" * 3000 + "\n", 2),
    "flow mappings": ("a: 1\nd: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", 2),
    "block mappings": ("".join(" " * i + "a:\n" for i in range(3000)) + " " * 3000 + "b\n", 1000),
    "block sequences": ("d:\n" + "".join("  " * (i + 1) + "-\n" for i in range(3000)), 1000),
}


@pytest.mark.parametrize("reader", [load.load_data, load.load_strings, load.compose_all])
@pytest.mark.parametrize("shape", sorted(DEEP))
def test_too_deep_input_gets_the_bounds_message_whichever_libyaml(shape: str, reader: object) -> None:
    # libyaml 0.2.6 (PyYAML 6.0.4) refuses such input itself before the bound's own count does,
    # 0.2.5 (PyYAML <= 6.0.3) does not: CI runs this with both (tools/check-deps.sh).
    text, line = DEEP[shape]
    with pytest.raises(load.YamlError) as err:
        reader(text, "deep.yaml")  # type: ignore[operator]
    message = err.value.message
    assert re.fullmatch(r"deep\.yaml is nested deeper than 1000 levels at line \d+, column \d+", message), message
    assert abs(_line(message) - line) <= 1, message  # libyaml 0.2.6 stops a block level early
