"""Every case of the promotion conformance suite, byte for byte, through both entry points.

* the KRM function: the input tree becomes a ResourceList (one item per document, kpt's
  path annotations where the text allows), ``run_function`` runs, the items are written
  back per file and compared with ``expected/``;
* the command: ``krm-merge promote DIR ...`` edits a copy of ``input/`` in place.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from krm_merge.commands import promote as promote_command
from krm_merge.krm.resourcelist import read_resource_list
from krm_merge.runner import run_function

from .harness import Case, has_content, annotate, copy_tree, load_cases, read_tree, resource_list, split_file

CASES = load_cases()


def test_all_cases_present() -> None:
    # The copied suite must not silently shrink.
    assert len(CASES) == 17


def _run_function_on_tree(case: Case) -> tuple[dict[str, bytes], list[dict], int]:
    tree = read_tree(case.input)
    files = {}
    items: list[str] = []
    slots: list[tuple[str, int, str | None]] = []  # (file, doc index, injected annotations)
    for rel, data in tree.items():
        split = split_file(data)
        files[rel] = split
        for n, doc in enumerate(split.docs):
            if has_content(doc):
                annotated, block = annotate(doc, rel, n)
                items.append(annotated)
                slots.append((rel, n, block))
    results: list[dict] = []
    code = 0
    for config in case.runs():
        out, code = run_function(resource_list(items, config))
        parsed = yaml.safe_load(out)
        results.extend(parsed.get("results") or [])
        if code != 0:
            break
        items = [obj.text for obj in read_resource_list(out).items]
        assert len(items) == len(slots), "promote must neither add nor remove items"
    docs = {rel: list(split.docs) for rel, split in files.items()}
    for (rel, n, block), text in zip(slots, items):
        if block is not None:
            assert block in text, "the function must keep the path annotations untouched"
            text = text.replace(block, "", 1)
        docs[rel][n] = text
    return {rel: files[rel].join(docs[rel]) for rel in files}, results, code


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_function(case: Case) -> None:
    out, results, code = _run_function_on_tree(case)
    errors = [r for r in results if r["severity"] == "error"]
    if case.error:
        assert code == 1
        assert any(case.error in r["message"] for r in errors), results
        assert out == read_tree(case.input)
        return
    assert code == 0, errors
    assert not errors
    expected = read_tree(case.expected)
    for rel, want in expected.items():
        assert out[rel] == want, rel
    changed = set(case.spec["expect"].get("changedFiles") or [])
    infos = [r for r in results if r["severity"] == "info"]
    assert {r["file"]["path"] for r in infos if r.get("file")} <= changed
    assert len(infos) >= len(changed)
    for info in infos:
        assert info["field"]["proposedValue"] is not None


def _command_args(config: dict[str, str]) -> list[str]:
    args = []
    for key, flag in (("pipeline", "--pipeline"), ("imagePolicy", "--image-policy"),
                      ("environment", "--environment"), ("fromEnvironment", "--from-environment"),
                      ("value", "--value")):
        if key in config:
            args += [flag, config[key]]
    if config.get("allowNoMatch") == "true":
        args.append("--allow-no-match")
    return args


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_command(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = copy_tree(case.input, tmp_path / "pkg")
    codes = []
    for config in case.runs():
        root = work / config["pathTemplate"] if "pathTemplate" in config else work
        codes.append(promote_command.main([str(root), *_command_args(config)]))
    captured = capsys.readouterr()
    if case.error:
        assert codes == [1]
        assert case.error in captured.err
        assert read_tree(work) == read_tree(case.input)
        return
    assert set(codes) == {0}, captured.err
    assert read_tree(work) == read_tree(case.expected)
    scope = case.runs()[0].get("pathTemplate")
    for rel in case.spec["expect"].get("changedFiles") or []:
        # The command names files relative to the directory it was given.
        shown = rel[len(scope) + 1 :] if scope else rel
        assert f"krm-merge promote: set: {shown}:" in captured.err


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_krm_merge_run(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``krm-merge run DIR -- mode=promote ...``: kpt-like source/sink around the function."""
    from krm_merge.commands import run as run_command

    work = copy_tree(case.input, tmp_path / "pkg")
    codes = [run_command.main([str(work), "--", "mode=promote", *(f"{k}={v}" for k, v in config.items())])
             for config in case.runs()]
    captured = capsys.readouterr()
    if case.error:
        assert codes == [1] and case.error in captured.out + captured.err
        assert read_tree(work) == read_tree(case.input)
        return
    assert set(codes) == {0}, captured.out + captured.err
    expected = read_tree(case.expected)
    # A kpt package holds only *.yaml/*.yml (and the Kptfile): the extension-less
    # `Kustomization` file Flux also scans is not a package resource, so it stays as it was.
    for rel, data in read_tree(case.input).items():
        if not rel.endswith((".yaml", ".yml")):
            expected[rel] = data
    assert read_tree(work) == expected
