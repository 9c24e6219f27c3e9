"""tools/gen_schema.py on a small hand-made schema folder."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).parents[2] / "tools" / "gen_schema.py"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_schema", TOOL)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_schema"] = module
    spec.loader.exec_module(module)
    return module


DEFS = {
    "io.k8s.api.demo.v1.Thing": {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "demo.io", "kind": "Thing", "version": "v1"}],
        "properties": {
            "apiVersion": {"type": ["string", "null"]},
            "metadata": {"$ref": "/api/_definitions.json#/$defs/io.k8s.api.demo.v1.Meta"},
            "items": {
                "type": ["array", "null"],
                "items": {"$ref": "#/$defs/io.k8s.api.demo.v1.Item"},
                "x-kubernetes-patch-strategy": "merge",
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
            "labels": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
            "raw": {"type": "object"},
            "size": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "strategy": {"$ref": "#/$defs/io.k8s.api.demo.v1.Item", "x-kubernetes-patch-strategy": "retainKeys"},
        },
    },
    "io.k8s.api.demo.v1.Meta": {"type": "object", "properties": {"name": {"type": "string"}}},
    "io.k8s.api.demo.v1.Item": {"type": ["object", "null"], "properties": {"name": {"type": "string"}}},
    "io.k8s.api.demo.v1.Json": {},
}


def make_source(tmp_path: Path, defs: dict) -> Path:
    folder = tmp_path / "kubernetes-json-schema" / "v1.99.0-local"
    folder.mkdir(parents=True)
    (folder / "_definitions.json").write_text(json.dumps({"$defs": defs}))
    (tmp_path / "kubernetes-json-schema" / "v1.9.0-local").mkdir()  # no _definitions.json
    return folder


def test_compact_table_shape(gen, tmp_path):
    folder = make_source(tmp_path, DEFS)
    assert gen.newest_schema_dir(tmp_path) == folder
    table = gen.build_table(folder, "9.9.9")
    assert table["kubernetes_version"] == "v1.99.0"
    assert table["gvks"] == {"demo.io/v1|Thing": "io.k8s.api.demo.v1.Thing"}
    fields = table["defs"]["io.k8s.api.demo.v1.Thing"]["p"]
    assert fields["apiVersion"] == 0
    assert fields["metadata"] == "io.k8s.api.demo.v1.Meta"
    assert fields["items"] == {
        "a": "io.k8s.api.demo.v1.Item", "ps": "merge", "mk": "name", "lt": "map", "lk": ["name"],
    }
    assert fields["labels"] == {"m": 0}
    assert fields["raw"] == {"m": 1}
    assert fields["size"] == 0
    assert fields["strategy"] == {"r": "io.k8s.api.demo.v1.Item", "ps": "retainKeys"}
    assert table["defs"]["io.k8s.api.demo.v1.Json"] == 1


def test_written_table_is_deterministic(gen, tmp_path):
    folder = make_source(tmp_path, DEFS)
    table = gen.build_table(folder, "9.9.9")
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    gen.write_table(table, first)
    gen.write_table(table, second)
    assert first.read_bytes() == second.read_bytes()
    assert json.loads(gzip.decompress(first.read_bytes())) == table


def test_dangling_reference_is_an_error(gen, tmp_path):
    defs = dict(DEFS)
    defs["io.k8s.api.demo.v1.Meta"] = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}}
    folder = make_source(tmp_path, defs)
    with pytest.raises(gen.GenerationError, match="Nope"):
        gen.build_table(folder, "9.9.9")
