#!/usr/bin/env python3
"""Generate the built-in Kubernetes patch-metadata table.

Build-time only.  Reads the OpenAPI-derived JSON schemas bundled by the PyPI
package ``kubernetes-validate`` and writes a compact, gzipped JSON table to
``function/krm_merge/schema/k8s_patchmeta.json.gz``.

Every definition comes from the newest Kubernetes release carried.  Kinds that
release no longer serves (``apps/v1beta1 Deployment``, ``extensions/v1beta1
Ingress``, ...) are added from the newest older release that served them, with
the definitions only that release has; definitions they share with the newest
release (``PodSpec``, ``ObjectMeta``) are the newest ones, which is what
``kubectl`` does (its Go types for old group versions embed today's core types).
One ``kubernetes-validate`` release carries about fourteen Kubernetes releases,
so the sources can be several: the installed package, unpacked folders, or
downloaded wheels / sdists read in place::

    pip download --no-deps -d /tmp/kv kubernetes-validate==1.37.0
    pip download --no-deps -d /tmp/kv kubernetes-validate==1.24.1
    python tools/gen_schema.py /tmp/kv/*

The table keeps only what merging needs (see ``docs/schema.md``):

* ``gvks``: ``"<apiVersion>|<kind>"`` -> root definition name (every kind any
  carried release served);
* ``served``: ``"<apiVersion>|<kind>"`` -> the newest release that served it,
  for the kinds the newest release no longer serves;
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

    python tools/gen_schema.py [SOURCE ...] [--source DIR] [--out FILE]

where a SOURCE is a ``kubernetes-validate`` wheel, sdist or package folder.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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
# Newer renderings use `#/$defs/`, releases before 1.25 `#/definitions/`.
_REF_PREFIX = re.compile(r"^.*#/(?:\$defs|definitions)/")
_SCHEMA_DIR = re.compile(r"(?:^|/)kubernetes-json-schema/(v(\d+)\.(\d+)\.(\d+)-local)/_definitions\.json$")
_PRIMITIVE_TYPES = {"string", "integer", "number", "boolean"}


class GenerationError(Exception):
    """The source schemas have a shape this generator does not understand."""


@dataclass(frozen=True)
class Release:
    """One Kubernetes release's ``_definitions.json``, read only when asked."""

    version: tuple[int, int, int]
    origin: str  # the package it came from, for the table's `source`
    read: Callable[[], bytes]

    @property
    def name(self) -> str:
        """``v1.37.0``."""
        return "v{}.{}.{}".format(*self.version)

    def definitions(self) -> dict[str, dict[str, Any]]:
        """The release's definitions by name."""
        raw = json.loads(self.read())
        found = raw.get("$defs", raw.get("definitions"))
        if not isinstance(found, dict):
            raise GenerationError(f"{self.origin} {self.name}: no $defs/definitions")
        return found


def _release(member: str, origin: str, read: Callable[[], bytes]) -> Release | None:
    match = _SCHEMA_DIR.search(member.replace("\\", "/"))
    if match is None:
        return None
    version = (int(match.group(2)), int(match.group(3)), int(match.group(4)))
    return Release(version, origin, read)


def releases_in(source: Path) -> list[Release]:
    """Every ``vX.Y.Z-local`` release in a package folder, a wheel or an sdist."""
    found: list[Release | None] = []
    if source.is_dir():
        for path in sorted(source.rglob("_definitions.json")):
            found.append(_release(path.as_posix(), source.name, path.read_bytes))
    elif zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as wheel:
            names = wheel.namelist()

        def zip_reader(name: str) -> Callable[[], bytes]:
            def read() -> bytes:
                with zipfile.ZipFile(source) as wheel:
                    return wheel.read(name)
            return read

        found.extend(_release(name, source.name, zip_reader(name)) for name in names)
    elif tarfile.is_tarfile(source):
        with tarfile.open(source) as sdist:
            names = sdist.getnames()

        def tar_reader(name: str) -> Callable[[], bytes]:
            def read() -> bytes:
                with tarfile.open(source) as sdist:
                    stream = sdist.extractfile(name)
                    assert stream is not None
                    return stream.read()
            return read

        found.extend(_release(name, source.name, tar_reader(name)) for name in names)
    else:
        raise GenerationError(f"{source}: not a folder, wheel or sdist")
    return [release for release in found if release is not None]


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


def _release_gvks(definitions: dict[str, dict[str, Any]], release: str) -> dict[str, str]:
    gvks: dict[str, str] = {}
    for name, schema in sorted(definitions.items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            key = _gvk_key(gvk)
            if gvks.setdefault(key, name) != name:
                raise GenerationError(f"{release} {key}: defined by {gvks[key]} and {name}")
    return gvks


def _refs(spec: Any) -> Iterable[str]:
    """The definition names a compact spec refers to."""
    if isinstance(spec, str):
        yield spec
    elif isinstance(spec, dict):
        if "r" in spec:
            yield spec["r"]
        for key in ("a", "m"):
            if key in spec:
                yield from _refs(spec[key])
        for sub in spec.get("p", {}).values():
            yield from _refs(sub)


def _add_with_closure(name: str, definitions: dict[str, dict[str, Any]], defs: dict[str, Any]) -> None:
    """Add definition ``name`` and what it refers to, keeping definitions already present.

    A definition already in the table comes from a newer release and wins:
    kubectl's Go types for an old group version embed today's shared types.
    """
    pending = [name]
    while pending:
        current = pending.pop()
        if current in defs:
            continue
        if current not in definitions:
            raise GenerationError(f"unknown reference {current}")
        defs[current] = _definition(current, definitions[current])
        pending.extend(_refs(defs[current]))


def build_table(releases: Iterable[Release], source: str) -> dict[str, Any]:
    """Build the compact table: the newest release, plus the kinds only older ones served."""
    by_version: dict[tuple[int, int, int], Release] = {}
    for release in releases:
        by_version.setdefault(release.version, release)
    if not by_version:
        raise GenerationError("no vX.Y.Z-local release found in the sources")
    ordered = [by_version[v] for v in sorted(by_version, reverse=True)]
    newest = ordered[0]
    definitions = newest.definitions()
    defs = {name: _definition(name, schema) for name, schema in sorted(definitions.items())}
    gvks = _release_gvks(definitions, newest.name)
    served: dict[str, str] = {}
    for release in ordered[1:]:
        definitions = release.definitions()
        for key, name in _release_gvks(definitions, release.name).items():
            if key in gvks:
                continue
            gvks[key] = name
            served[key] = release.name
            _add_with_closure(name, definitions, defs)
    _check_refs(defs)
    return {
        "format": FORMAT_VERSION,
        "kubernetes_version": newest.name,
        "oldest_kubernetes_version": ordered[-1].name,
        "source": source,
        "gvks": gvks,
        "served": served,
        "defs": defs,
    }


def describe_sources(releases: list[Release]) -> str:
    """``PyPI kubernetes-validate-1.37.0 (v1.25.0..v1.37.0), ...`` for the table's ``source``."""
    spans: dict[str, list[str]] = {}
    for release in sorted(releases, key=lambda r: r.version):
        spans.setdefault(release.origin, []).append(release.name)
    parts = [f"{origin} ({names[0]}..{names[-1]})" for origin, names in sorted(spans.items())]
    return "PyPI kubernetes-validate: " + ", ".join(parts) + ", vX.Y.Z-local/_definitions.json"


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
    parser.add_argument("sources", nargs="*", type=Path,
                        help="kubernetes-validate wheels, sdists or package folders")
    parser.add_argument("--source", type=Path, help="one vX.Y.Z-local folder (only that release)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    releases: list[Release] = []
    try:
        if args.source is not None:
            releases.extend(releases_in(args.source))
        for source in args.sources:
            releases.extend(releases_in(source))
        if not releases:
            try:
                import kubernetes_validate  # type: ignore[import-untyped,unused-ignore]
                from kubernetes_validate.version import __version__ as version  # type: ignore
            except ImportError:
                print("install kubernetes-validate or name its wheels/sdists", file=sys.stderr)
                return 2
            package = Path(kubernetes_validate.__file__).parent
            releases = [
                Release(r.version, f"kubernetes-validate-{version}", r.read) for r in releases_in(package)
            ]
        table = build_table(releases, describe_sources(releases))
    except GenerationError as err:
        print(f"gen_schema: {err}", file=sys.stderr)
        return 1
    size = write_table(table, args.out)
    print(
        f"{args.out}: Kubernetes {table['oldest_kubernetes_version']}..{table['kubernetes_version']}, "
        f"{len(table['gvks'])} kinds ({len(table['served'])} no longer served), "
        f"{len(table['defs'])} definitions, {size} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
