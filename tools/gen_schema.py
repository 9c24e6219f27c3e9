#!/usr/bin/env python3
"""Generate the built-in Kubernetes patch-metadata table.

Build-time only.  Reads the OpenAPI-derived JSON schemas bundled by the PyPI
package ``kubernetes-validate`` (``pip install kubernetes-validate``), picks the
newest Kubernetes release it carries, and writes a compact, gzipped JSON table
to ``function/krm_merge/schema/k8s_patchmeta.json.gz``.

The table keeps only what merging needs (see ``docs/schema.md``):

* ``gvks``: ``"<apiVersion>|<kind>"`` -> root definition name;
* ``defs``: definition name -> node, where a node is
  ``{"p": {field: spec}}`` (an object with known fields),
  ``{"m": spec}`` (a map whose values have schema ``spec``),
  ``0`` (a primitive) or ``1`` (arbitrary: nothing known, nothing an error);
* a field ``spec`` is ``0`` (primitive), ``1`` (arbitrary), a definition name
  (a ``$ref``), or a dict with ``r`` (ref), ``a`` (array items spec),
  ``m`` (map values spec), ``p`` (inline properties), ``k`` (0/1 as above)
  plus the merge extensions ``ps`` (x-kubernetes-patch-strategy),
  ``mk`` (x-kubernetes-patch-merge-key), ``lt`` (x-kubernetes-list-type) and
  ``lk`` (x-kubernetes-list-map-keys).

Usage::

    python tools/gen_schema.py [--source DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "function" / "krm_merge" / "schema" / "k8s_patchmeta.json.gz"
FORMAT_VERSION = 1

PRIMITIVE = 0
ARBITRARY = 1

_EXTENSIONS = {
    "x-kubernetes-patch-strategy": "ps",
    "x-kubernetes-patch-merge-key": "mk",
    "x-kubernetes-list-type": "lt",
    "x-kubernetes-list-map-keys": "lk",
}
_REF_PREFIX = re.compile(r"^.*#/\$defs/")
_PRIMITIVE_TYPES = {"string", "integer", "number", "boolean"}


class GenerationError(Exception):
    """The source schemas have a shape this generator does not understand."""


def newest_schema_dir(package_dir: Path) -> Path:
    """The ``vX.Y.Z-local`` folder of the newest Kubernetes release bundled."""
    candidates: list[tuple[tuple[int, ...], Path]] = []
    for child in (package_dir / "kubernetes-json-schema").iterdir():
        match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)-local", child.name)
        if match and (child / "_definitions.json").is_file():
            candidates.append((tuple(int(g) for g in match.groups()), child))
    if not candidates:
        raise GenerationError(f"no vX.Y.Z-local schema folder under {package_dir}")
    return max(candidates)[1]


def _types(schema: dict[str, Any]) -> set[str]:
    raw = schema.get("type")
    if raw is None:
        return set()
    listed = raw if isinstance(raw, list) else [raw]
    return {t for t in listed if t != "null"}


def _ref_name(ref: str) -> str:
    return _REF_PREFIX.sub("", ref)


def _shape(schema: dict[str, Any], where: str) -> Any:
    """Compact shape of a (sub)schema, without extensions."""
    if "$ref" in schema:
        return _ref_name(schema["$ref"])
    if "oneOf" in schema or "anyOf" in schema:
        # IntOrString / Quantity: a union of primitives in this rendering,
        # a single primitive (format int-or-string) in the OpenAPI v2 source.
        branches = schema.get("oneOf", []) + schema.get("anyOf", [])
        if all(_types(b) <= _PRIMITIVE_TYPES for b in branches):
            return PRIMITIVE
        return ARBITRARY
    types = _types(schema)
    if len(types) > 1:
        raise GenerationError(f"{where}: several types {sorted(types)}")
    if not types:
        return {"p": _properties(schema, where)} if "properties" in schema else ARBITRARY
    (kind,) = types
    if kind == "array":
        return {"a": _field(schema.get("items", {}), where + "[]")}
    if kind == "object":
        if "properties" in schema:
            return {"p": _properties(schema, where)}
        extra = schema.get("additionalProperties")
        # OpenAPI v2 parses an object without properties as a map whose
        # values are arbitrary unless additionalProperties says otherwise.
        value = _field(extra, where + ".*") if isinstance(extra, dict) else ARBITRARY
        return {"m": value}
    return PRIMITIVE


def _field(schema: dict[str, Any], where: str) -> Any:
    """Compact spec of one field: its shape plus the merge extensions."""
    shape = _shape(schema, where)
    extensions = {short: schema[long] for long, short in _EXTENSIONS.items() if long in schema}
    if not extensions:
        return shape
    spec: dict[str, Any] = {}
    if isinstance(shape, str):
        spec["r"] = shape
    elif isinstance(shape, int):
        spec["k"] = shape
    else:
        spec.update(shape)
    if "lk" in extensions:
        extensions["lk"] = list(extensions["lk"])
    spec.update(extensions)
    return spec


def _properties(schema: dict[str, Any], where: str) -> dict[str, Any]:
    return {
        name: _field(prop, f"{where}.{name}")
        for name, prop in sorted(schema.get("properties", {}).items())
    }


def _definition(name: str, schema: dict[str, Any]) -> Any:
    shape = _shape(schema, name)
    if isinstance(shape, str):
        raise GenerationError(f"{name}: a definition that is only a $ref")
    return shape


def _gvk_key(gvk: dict[str, str]) -> str:
    group, version = gvk.get("group", ""), gvk["version"]
    api_version = f"{group}/{version}" if group else version
    return f"{api_version}|{gvk['kind']}"


def build_table(schema_dir: Path, validate_version: str) -> dict[str, Any]:
    """Build the compact table from one ``vX.Y.Z-local`` folder."""
    raw = json.loads((schema_dir / "_definitions.json").read_text())
    definitions: dict[str, dict[str, Any]] = raw["$defs"]
    defs = {name: _definition(name, schema) for name, schema in sorted(definitions.items())}
    gvks: dict[str, str] = {}
    for name, schema in sorted(definitions.items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            key = _gvk_key(gvk)
            if gvks.setdefault(key, name) != name:
                raise GenerationError(f"{key}: defined by {gvks[key]} and {name}")
    _check_refs(defs)
    return {
        "format": FORMAT_VERSION,
        "kubernetes_version": schema_dir.name.removesuffix("-local"),
        "source": f"PyPI kubernetes-validate {validate_version}, {schema_dir.name}/_definitions.json",
        "gvks": gvks,
        "defs": defs,
    }


def _check_refs(defs: dict[str, Any]) -> None:
    """Fail early on a dangling reference rather than at lookup time."""

    def walk(spec: Any, where: str) -> None:
        if isinstance(spec, str):
            if spec not in defs:
                raise GenerationError(f"{where}: unknown reference {spec}")
        elif isinstance(spec, dict):
            if "r" in spec:
                walk(spec["r"], where)
            for key in ("a", "m"):
                if key in spec:
                    walk(spec[key], where)
            for name, sub in spec.get("p", {}).items():
                walk(sub, f"{where}.{name}")

    for name, node in defs.items():
        walk(node, name)


def write_table(table: dict[str, Any], out: Path) -> int:
    """Write the table gzipped (deterministic bytes: no timestamp); returns its size."""
    payload = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
    data = gzip.compress(payload, compresslevel=9, mtime=0)
    out.write_bytes(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a kubernetes-validate vX.Y.Z-local folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        import kubernetes_validate  # type: ignore[import-untyped,unused-ignore]
        from kubernetes_validate.version import __version__ as validate_version  # type: ignore

        package_dir = Path(kubernetes_validate.__file__).parent
    except ImportError:
        if args.source is None:
            print("install kubernetes-validate or pass --source", file=sys.stderr)
            return 2
        validate_version = "unknown"
        package_dir = args.source.parent.parent
    schema_dir = args.source or newest_schema_dir(package_dir)
    try:
        table = build_table(schema_dir, validate_version)
    except GenerationError as err:
        print(f"gen_schema: {err}", file=sys.stderr)
        return 1
    size = write_table(table, args.out)
    print(
        f"{args.out}: Kubernetes {table['kubernetes_version']}, {len(table['gvks'])} kinds, "
        f"{len(table['defs'])} definitions, {size} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
