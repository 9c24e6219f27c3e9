"""``krm-merge diff`` command."""

from __future__ import annotations

import io
from pathlib import Path

import yaml

from krm_merge.commands.diff import main

ORIGINAL = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
"""
MODIFIED = ORIGINAL.replace('[{name: A, value: "1"}, {name: B, value: "2"}]', '[{name: C, value: "3"}, {name: A, value: "1"}]')


def run(tmp_path: Path, *args: str, files: dict[str, str]) -> tuple[int, str, str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out, err = io.StringIO(), io.StringIO()
    code = main([str(tmp_path / a) if a in files else a for a in args], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_two_way_patch_uses_the_builtin_schema(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": ORIGINAL, "m.yaml": MODIFIED})
    assert (code, err) == (0, "")
    container = yaml.safe_load(out)["spec"]["template"]["spec"]["containers"][0]
    assert container == {
        "$setElementOrder/env": [{"name": "C"}, {"name": "A"}],
        "env": [{"name": "C", "value": "3"}, {"name": "B", "$patch": "delete"}],
        "name": "app",
    }
    assert out.index("$setElementOrder/env") < out.index("env:")  # sorted keys


def test_three_way_patch(tmp_path: Path) -> None:
    files = {"o.yaml": ORIGINAL, "m.yaml": MODIFIED, "c.yaml": MODIFIED}
    code, out, _ = run(tmp_path, "o.yaml", "m.yaml", "--current", "c.yaml", files=files)
    assert code == 0
    env_patch = yaml.safe_load(out)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env_patch == [{"$patch": "delete", "name": "B"}]


def test_conflict_is_one_line_and_exit_1(tmp_path: Path) -> None:
    current = ORIGINAL.replace("image: nginx", "image: nginx:live")
    modified = ORIGINAL.replace("image: nginx", "image: nginx:new")
    files = {"o.yaml": ORIGINAL, "m.yaml": modified, "c.yaml": current}
    code, out, err = run(tmp_path, "o.yaml", "m.yaml", "--current", "c.yaml", files=files)
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "conflicts" in err and "containers[name=app].image" in err
    code, out, _ = run(tmp_path, "o.yaml", "m.yaml", "--current", "c.yaml", "--overwrite", files=files)
    assert code == 0 and "nginx:new" in out


def test_identical_objects_give_an_empty_patch(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": ORIGINAL, "m.yaml": ORIGINAL})
    assert (code, out) == (0, "{}\n")


def test_unknown_kind_is_schemaless(tmp_path: Path) -> None:
    original = "apiVersion: x/v1\nkind: Thing\nspec: {items: [a, b]}\n"
    modified = "apiVersion: x/v1\nkind: Thing\nspec: {items: [b]}\n"
    code, out, _ = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": original, "m.yaml": modified})
    assert code == 0 and yaml.safe_load(out) == {"spec": {"items": ["b"]}}


def test_bad_inputs_fail_with_one_line(tmp_path: Path) -> None:
    code, _, err = run(tmp_path, "o.yaml", "missing.yaml", files={"o.yaml": ORIGINAL})
    assert code == 1 and "missing.yaml" in err and err.count("\n") == 1
    code, _, err = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": ORIGINAL, "m.yaml": "a: [\n"})
    assert code == 1 and err.count("\n") == 1
    code, _, err = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": ORIGINAL, "m.yaml": "- 1\n"})
    assert code == 1 and "mapping" in err
    code, _, err = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": "a: 1\n---\nb: 2\n", "m.yaml": ORIGINAL})
    assert code == 1 and "one YAML object" in err


def test_schema_errors_are_reported_without_traceback(tmp_path: Path) -> None:
    original = ORIGINAL.replace("image: nginx", "image: nginx\n        bogus: {a: 1}")
    modified = ORIGINAL.replace("image: nginx", "image: nginx\n        bogus: {a: 2}")
    code, _, err = run(tmp_path, "o.yaml", "m.yaml", files={"o.yaml": original, "m.yaml": modified})
    assert code == 1
    assert "unable to find api field" in err and "Traceback" not in err


def test_usage_error_exit_2(tmp_path: Path) -> None:
    err = io.StringIO()
    assert main([], stdout=io.StringIO(), stderr=err) == 2
