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
    table = gen.build_table(gen.releases_in(tmp_path), "9.9.9")
    assert table["kubernetes_version"] == "v1.99.0"
    assert table["gvks"] == {"demo.io/v1|Thing": "io.k8s.api.demo.v1.Thing"}
    assert table["served"] == {}
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
    make_source(tmp_path, DEFS)
    table = gen.build_table(gen.releases_in(tmp_path), "9.9.9")
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    gen.write_table(table, first)
    gen.write_table(table, second)
    assert first.read_bytes() == second.read_bytes()
    assert json.loads(gzip.decompress(first.read_bytes())) == table


def test_dangling_reference_is_an_error(gen, tmp_path):
    defs = dict(DEFS)
    defs["io.k8s.api.demo.v1.Meta"] = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}}
    make_source(tmp_path, defs)
    with pytest.raises(gen.GenerationError, match="Nope"):
        gen.build_table(gen.releases_in(tmp_path), "9.9.9")


# An older release, in the pre-1.25 rendering (`definitions`, `#/definitions/` refs):
# it still serves demo.io/v1beta1 Thing, whose spec is its own definition but whose
# items are the shared Item type, and a Meta the newest release changed.
OLD_DEFS = {
    "io.k8s.api.demo.v1beta1.Thing": {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "demo.io", "kind": "Thing", "version": "v1beta1"}],
        "properties": {
            "metadata": {"$ref": "#/definitions/io.k8s.api.demo.v1.Meta"},
            "spec": {"$ref": "#/definitions/io.k8s.api.demo.v1beta1.Spec"},
        },
    },
    "io.k8s.api.demo.v1beta1.Spec": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"$ref": "#/definitions/io.k8s.api.demo.v1.Item"},
                "x-kubernetes-patch-strategy": "merge",
                "x-kubernetes-patch-merge-key": "name",
            },
        },
    },
    "io.k8s.api.demo.v1.Meta": {"type": "object", "properties": {"oldName": {"type": "string"}}},
    "io.k8s.api.demo.v1.Item": {"type": "object", "properties": {"oldField": {"type": "string"}}},
    "io.k8s.api.demo.v1.Thing": DEFS["io.k8s.api.demo.v1.Thing"],
    "io.k8s.api.demo.v1beta1.Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
}


def _old_release(root: Path) -> None:
    folder = root / "kubernetes-json-schema" / "v1.20.0-local"
    folder.mkdir(parents=True)
    (folder / "_definitions.json").write_text(json.dumps({"definitions": OLD_DEFS}))


def test_kinds_only_older_releases_served_are_added_with_todays_shared_types(gen, tmp_path):
    make_source(tmp_path / "new", DEFS)
    _old_release(tmp_path / "old")
    releases = gen.releases_in(tmp_path / "new") + gen.releases_in(tmp_path / "old")
    table = gen.build_table(releases, "note")
    assert table["kubernetes_version"] == "v1.99.0"
    assert table["oldest_kubernetes_version"] == "v1.20.0"
    assert table["gvks"]["demo.io/v1beta1|Thing"] == "io.k8s.api.demo.v1beta1.Thing"
    assert table["served"] == {"demo.io/v1beta1|Thing": "v1.20.0"}
    defs = table["defs"]
    assert defs["io.k8s.api.demo.v1beta1.Spec"]["p"]["items"] == {
        "a": "io.k8s.api.demo.v1.Item", "ps": "merge", "mk": "name",
    }
    # Shared definitions are the newest release's; definitions nothing needs are left out.
    assert defs["io.k8s.api.demo.v1.Meta"] == {"p": {"name": 0}}
    assert defs["io.k8s.api.demo.v1.Item"] == {"p": {"name": 0}}
    assert "io.k8s.api.demo.v1beta1.Unused" not in defs


def test_wheels_and_sdists_are_read_in_place(gen, tmp_path):
    import tarfile
    import zipfile

    make_source(tmp_path / "new", DEFS)
    _old_release(tmp_path / "old")
    wheel = tmp_path / "kv-2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(
            tmp_path / "new/kubernetes-json-schema/v1.99.0-local/_definitions.json",
            "kubernetes_validate/kubernetes-json-schema/v1.99.0-local/_definitions.json",
        )
    sdist = tmp_path / "kv-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        archive.add(
            tmp_path / "old/kubernetes-json-schema/v1.20.0-local/_definitions.json",
            "kv-1.0/src/kubernetes_validate/kubernetes-json-schema/v1.20.0-local/_definitions.json",
        )
    out = tmp_path / "table.json.gz"
    assert gen.main([str(wheel), str(sdist), "--out", str(out)]) == 0
    table = json.loads(gzip.decompress(out.read_bytes()))
    assert set(table["gvks"]) == {"demo.io/v1|Thing", "demo.io/v1beta1|Thing"}
    assert "kv-1.0.tar.gz (v1.20.0..v1.20.0)" in table["source"]
    assert "kv-2.0-py3-none-any.whl (v1.99.0..v1.99.0)" in table["source"]
