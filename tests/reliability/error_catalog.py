"""One real input per error class; the error table of docs/errors.md is printed from these runs.

``python -m tests.reliability.error_catalog`` prints the table rows;
test_error_catalog.py checks that every message in the doc is still what the
function really says.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from .harness import RL_HEAD, check_function, configmap, resource_list, run_command, typed
from .strategies import PIPELINE

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: shop\n"
DEP_PATH = "  annotations:\n    internal.config.kubernetes.io/path: apps/web.yaml\n    config.kubernetes.io/path: apps/web.yaml\n"


@dataclass(frozen=True)
class Case:
    error_class: str
    where: str
    run: Callable[[], str]  # returns the one-line message as reported


def _fn(text: str) -> str:
    out = check_function(text)
    assert out.code == 1, out.text
    r = next(r for r in out.results if r.get("severity") == "error")
    parts = [r["message"]]
    ref = r.get("resourceRef")
    if ref:
        ns = f"{ref['namespace']}/" if ref.get("namespace") else ""
        parts.append(f"resource `{ref['kind']}/{ns}{ref['name']}`")
    if r.get("field"):
        parts.append(f"field `{r['field']['path']}`")
    if r.get("file"):
        parts.append(f"file `{r['file']['path']}`" + (f" index {r['file']['index']}" if "index" in r["file"] else ""))
    return " · ".join(parts)


def _patch(patch: dict | str, items: list[str] | None = None) -> str:
    text = patch if isinstance(patch, str) else yaml.safe_dump(patch, sort_keys=False)
    return _fn(resource_list(items or [CM + DEP_PATH + "data:\n  a: b\n"], configmap({"mode": "reorder-merge",
                                                                                        "patch": text})))


def _cmd(module: str, argv: Callable[[Path], list[str]], setup: Callable[[Path], None]) -> str:
    import importlib

    tmp = Path(tempfile.mkdtemp(prefix="krm-cat-"))
    try:
        setup(tmp)
        code, _, err = run_command(importlib.import_module(f"krm_merge.commands.{module}").main, argv(tmp))
        assert code == 1, err
        line = next(line for line in err.splitlines() if "error" in line)
        return line.replace(str(tmp), "<dir>")
    finally:
        shutil.rmtree(tmp)


def _pkg(files: dict[str, str]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    return setup


CASES = [
    Case("input: empty", "reader", lambda: _fn(" ")),
    Case("input: not YAML", "reader", lambda: _fn(RL_HEAD + "items: [\n")),
    Case("input: not a ResourceList", "reader", lambda: _fn("apiVersion: v1\nkind: Pod\n")),
    Case("input: item not an object", "reader", lambda: _fn(RL_HEAD + "items:\n- just a string\n")),
    Case("input: parsers disagree", "reader (general)", lambda: _fn(
        "apiVersion: v1\nkind: List\nitems:\n- a:\n    &ame: web\n#  a column-0 comment sends the list to the general reader\n")),
    Case("input: alias bomb", "yaml/load", lambda: _patch(CM + "data:\n  x: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"  x{i}: &a{i} [" + ",".join(["*a" if i == 1 else f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 8)))),
    Case("input: nested too deeply", "yaml/load", lambda: _fn(resource_list(
        [CM + "data: " + "[" * 5000 + "]" * 5000 + "\n"], configmap({"mode": "reorder-merge", "patch": CM + "data:\n  a: b\n"})))),
    Case("config: none", "config", lambda: _fn(resource_list([CM]))),
    Case("config: unknown mode", "config", lambda: _fn(resource_list([CM], configmap({"mode": "merge"})))),
    Case("config: unknown key", "config", lambda: _fn(resource_list([CM], configmap({"mode": "promote", "vaule": "1"})))),
    Case("config: wrong type", "config", lambda: _fn(resource_list([CM], typed("ReorderMerge", {"patches": 5})))),
    Case("config: bad choice", "config", lambda: _fn(resource_list([CM], configmap(
        {"mode": "resource-merge", "conflicts": "maybe"})))),
    Case("config: patch not YAML", "reorder-merge", lambda: _patch("a: [\n")),
    Case("reorder-merge: no target", "reorder-merge", lambda: _patch({"apiVersion": "v1", "kind": "ConfigMap",
                                                                       "metadata": {"name": "nope"}})),
    Case("reorder-merge: bad directive", "smp", lambda: _patch({"apiVersion": "v1", "kind": "ConfigMap",
                                                                 "metadata": {"name": "web", "namespace": "shop"},
                                                                 "data": {"$patch": "bogus"}})),
    Case("pipeline-merge: no Kptfile", "pipeline-merge", lambda: _fn(resource_list([CM], configmap(
        {"mode": "pipeline-merge"})))),
    Case("resource-merge: nothing to merge", "resource-merge", lambda: _fn(resource_list([CM], configmap(
        {"mode": "resource-merge"})))),
    Case("promote: unknown environment", "promote", lambda: _fn(resource_list([PIPELINE, CM], configmap(
        {"mode": "promote", "pipeline": "default/podinfo", "environment": "qa", "value": "1"})))),
    Case("promote: no marked field", "promote", lambda: _fn(resource_list([PIPELINE, CM], configmap(
        {"mode": "promote", "pipeline": "default/podinfo", "environment": "prod", "value": "1"})))),
    Case("run: not a directory", "commands/run", lambda: _cmd("run", lambda t: [str(t / "nope"), "--", "mode=promote"],
                                                              _pkg({}))),
    # promote skips such a file with a warning (as the promote command does); other modes refuse it.
    Case("run: file not UTF-8", "krm/package", lambda: _cmd("run", lambda t: [str(t), "--", "mode=reorder-merge"],
                                                            lambda t: (t / "bad.yaml").write_bytes(b"a: \xff\n"))),
    Case("run: file not YAML", "krm/package", lambda: _cmd("run", lambda t: [str(t), "--", "mode=promote"],
                                                           _pkg({"apps/bad.yaml": "a: b\n---\nc: [\n"}))),
    Case("run: several files not YAML", "krm/package", lambda: _cmd(
        "run", lambda t: [str(t), "--", "mode=promote"],
        _pkg({"apps/bad.yaml": "a: b\n---\nc: [\n", "values.yaml": "replicas: {{ .Values.replicas }}\n"}))),
    # A patch moving the item by kpt's path annotation (one written in a file is replaced by the reader, as kpt's is).
    Case("run: path leaves the package", "krm/package", lambda: _cmd(
        "run", lambda t: [str(t), "--", "mode=reorder-merge", "patch=" + CM + "  annotations:\n"
                          "    config.kubernetes.io/path: ../x.yaml\n    internal.config.kubernetes.io/path: ../x.yaml\n"],
        _pkg({"cm.yaml": CM}))),
    Case("run: bad argument", "commands/run", lambda: _cmd("run", lambda t: [str(t), "--", "novalue"], _pkg({}))),
    Case("promote command: unknown environment", "commands/promote", lambda: _cmd(
        "promote", lambda t: [str(t), "--pipeline", "default/podinfo", "--environment", "qa", "--value", "1"],
        _pkg({"pipeline.yaml": PIPELINE}))),
    Case("update: not a package", "commands/update", lambda: _cmd(
        "update", lambda t: [str(t / "l"), "--origin", str(t / "o"), "--upstream", str(t / "u")], _pkg({}))),
    Case("update: report folder missing", "outcomes/render", lambda: _cmd(
        "update", lambda t: [str(t / "l"), "--origin", str(t / "o"), "--upstream", str(t / "u"),
                             "--report", "json", str(t / "missing" / "r.json")], _pkg({}))),
]


def table_rows() -> list[str]:
    rows = []
    for case in CASES:
        message = case.run().replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {case.error_class} | {case.where} | {message} |")
    return rows


if __name__ == "__main__":
    print("\n".join(table_rows()))
