"""Nothing lost: untouched bytes stay, comments and unknown fields survive, runs are idempotent.

* Every shipped example, through ``krm-merge run`` on a copy: a document whose
  data did not change keeps its exact bytes; a changed document keeps every
  comment it had; a second run changes nothing.
* Every document of tests/krm/corpus, targeted by a patch that adds one field
  while the others ride along: untouched items are byte-identical, the target
  keeps every comment and every field, and re-running the output is a no-op.
* An object full of fields no schema knows goes through every mode unchanged
  apart from the mode's own edit.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from krm_merge.krm.package import split_documents
from tests import helpers

from .harness import ROOT, check_function, comment_texts, configmap, load_output, resource_list, run_command

EXAMPLES = sorted(p.parent.parent for p in (ROOT / "examples").glob("*/.expected/config.yaml"))
KRM_CORPUS = ROOT / "tests" / "krm" / "corpus"


def _docs(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    return [d for d in split_documents(text)[1] if d.strip()]


def _snapshot(root: Path) -> dict[str, bytes]:
    return helpers.read_tree(root)


def _run_example(example: Path, pkg: Path) -> int:
    from krm_merge.commands import run

    config = yaml.safe_load((example / ".expected" / "config.yaml").read_text())
    argv = [str(pkg)]
    if config.get("fnConfig"):
        argv += ["--fn-config", str(pkg / config["fnConfig"])]
    if config.get("args"):
        argv += ["--", *(f"{k}={v}" for k, v in config["args"].items())]
    code, _, _ = run_command(run.main, argv)
    assert code == int(config.get("exitCode", 0))
    return code


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_keeps_untouched_bytes_and_comments(example: Path, tmp_path: Path) -> None:
    pkg = tmp_path / example.name
    shutil.copytree(example, pkg, ignore=shutil.ignore_patterns(".expected"))
    before = _snapshot(pkg)
    _run_example(example, pkg)
    after = _snapshot(pkg)
    if (example / ".expected" / "diff.patch").exists():
        assert after != before, "the example's run changed nothing"
    assert set(after) >= {k for k in before if not k.endswith((".yaml", ".yml", "Kptfile"))}
    for rel, old in before.items():
        if rel not in after or after[rel] == old or not rel.endswith((".yaml", ".yml", "Kptfile")):
            continue
        old_texts = [d for d in split_documents(old.decode().replace("\r\n", "\n"))[1] if d.strip()]
        new_texts = [d for d in split_documents(after[rel].decode().replace("\r\n", "\n"))[1] if d.strip()]
        for o, n in zip(old_texts, new_texts):
            if yaml.safe_load(o) == yaml.safe_load(n):
                assert o == n, f"{rel}: a document whose data did not change was rewritten"
            else:
                lost = Counter(comment_texts(o)) - Counter(comment_texts(n))
                assert not lost, f"{rel}: comments lost: {sorted(lost)}"
    # Idempotent: the second run changes nothing.
    _run_example(example, pkg)
    assert _snapshot(pkg) == after


def _corpus_docs() -> list[tuple[str, str]]:
    out = []
    for path in sorted(KRM_CORPUS.iterdir()):
        for n, doc in enumerate(_docs(path)):
            if isinstance(yaml.safe_load(doc), dict) and doc.strip() != "...":
                out.append((f"{path.name}#{n}", doc.replace("\n...\n", "\n")))
    return out


CORPUS_DOCS = _corpus_docs()


@pytest.mark.parametrize("index", range(len(CORPUS_DOCS)), ids=[n for n, _ in CORPUS_DOCS])
def test_corpus_document_keeps_comments_fields_and_neighbours(index: int) -> None:
    docs = [d for _, d in CORPUS_DOCS]
    target = load_output(docs[index])
    meta = target.get("metadata") or {}
    patch = {"apiVersion": target["apiVersion"], "kind": target["kind"],
             "metadata": {"name": meta.get("name"), **({"namespace": meta["namespace"]} if "namespace" in meta else {}),
                          "labels": {"reliability.krm-merge.dev/touched": "yes"}}}
    text = resource_list(docs, configmap({"mode": "reorder-merge", "patch": yaml.safe_dump(patch)}))
    out = check_function(text)
    assert out.code == 0, out.errors
    blocks = _item_blocks(out.text)
    inputs = _item_blocks(text)
    for n, (old, new) in enumerate(zip(inputs, blocks)):
        if n != index:
            assert old == new, f"untouched item {CORPUS_DOCS[n][0]} changed"
    old, new = inputs[index], blocks[index]
    assert Counter(comment_texts(old)) == Counter(comment_texts(new)), new
    expected = load_output(docs[index])
    expected.setdefault("metadata", {}).setdefault("labels", {})["reliability.krm-merge.dev/touched"] = "yes"
    assert out.items[index] == expected
    again = check_function(out.text)
    assert again.text == out.text, "a second run changed the output"


def _item_blocks(text: str) -> list[str]:
    body = text.split("\nitems:\n", 1)[1].split("\nfunctionConfig:", 1)[0]
    blocks, current = [], []
    for line in body.split("\n"):
        if line.startswith("- ") or line == "-":
            if current:
                blocks.append("\n".join(current))
            current = [line]
        else:
            current.append(line)
    blocks.append("\n".join(current))
    return blocks


UNKNOWN = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: web
  annotations:
    internal.config.kubernetes.io/path: local/widget.yaml
    config.kubernetes.io/path: local/widget.yaml
x-vendor: {a: 1, b: [x, y]} # vendor extension
spec:
  # a field no schema knows
  unknownList:
  - {id: 1, v: a}
  - {id: 2, v: b}
  weird-key.with/slashes: "kept"
  version: "1.0" # {"$promotion": "default:podinfo:prod"}
status: {observedGeneration: 3}
"""


@pytest.mark.parametrize("mode", ["reorder-merge", "promote", "resource-merge"])
def test_unknown_fields_survive_every_mode(mode: str) -> None:
    from .strategies import PIPELINE

    items = [UNKNOWN]
    if mode == "reorder-merge":
        fc = configmap({"mode": mode, "patch": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: web\n"
                                              "spec:\n  added: 1\n"})
    elif mode == "promote":
        items.append(PIPELINE)
        fc = configmap({"mode": mode, "pipeline": "default/podinfo", "environment": "prod", "value": "2.0"})
    else:
        items += [UNKNOWN.replace("local/", "origin/"), UNKNOWN.replace("local/", "upstream/").replace(
            "status: {observedGeneration: 3}", "status: {observedGeneration: 3}\nadded: upstream")]
        fc = configmap({"mode": mode})
    out = check_function(resource_list(items, fc))
    assert out.code == 0, out.errors
    got = out.items[0]
    before = load_output(UNKNOWN)
    for key in ("x-vendor", "status"):
        assert got[key] == before[key]
    for key in ("unknownList", "weird-key.with/slashes"):
        assert got["spec"][key] == before["spec"][key]
    block = _item_blocks(out.text)[0]
    lost = Counter(comment_texts(UNKNOWN)) - Counter(comment_texts(block))
    assert not lost, block
