"""Helpers shared by the promote tests: conformance cases, ResourceList building, tree I/O."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests import helpers

CASES_DIR = Path(__file__).parent / "cases"
_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$")


@dataclass(frozen=True)
class Case:
    """One conformance case directory (see cases-README.md)."""

    id: str
    root: Path
    spec: dict[str, Any]

    @property
    def input(self) -> Path:
        return self.root / "input"

    @property
    def expected(self) -> Path:
        """The expected tree; the input tree for error cases (nothing may change)."""
        exp = self.root / "expected"
        return exp if exp.is_dir() else self.input

    @property
    def error(self) -> str | None:
        return self.spec["expect"].get("error")

    @property
    def marker_key(self) -> str:
        return self.spec["markerKey"]

    def runs(self) -> list[dict[str, str]]:
        """The promote configurations (ConfigMap data) the case amounts to, in order."""
        scope = (self.spec.get("scope") or {}).get("path")
        extra = {"pathTemplate": scope.lstrip("./")} if scope else {}
        if self.marker_key == "$promotion":
            promo = self.spec["promotion"]
            env_key = "fromEnvironment" if promo["environmentIs"] == "preceding" else "environment"
            pipeline = f"{promo['pipeline']['namespace']}/{promo['pipeline']['name']}"
            return [{"pipeline": pipeline, env_key: promo["environment"], "value": promo["version"], **extra}]
        # $imagepolicy: one run per policy, the value being the full image reference.
        setters = self.spec["setters"]
        return [
            {"imagePolicy": marker, "value": value, "allowNoMatch": "true", **extra}
            for marker, value in setters.items()
            if marker.count(":") == 1
        ]


def load_cases() -> list[Case]:
    """Every case under tests/promote/cases, sorted by id."""
    return [
        Case(d.name, d, yaml.safe_load((d / "case.yaml").read_text()))
        for d in sorted(CASES_DIR.iterdir())
        if (d / "case.yaml").is_file()
    ]


def read_tree(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every file under ``root``."""
    return helpers.read_tree(root)


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a tree and make it writable (the fixtures are read-only in the shared copy)."""
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


# ------------------------------------------------------------------ ResourceList harness


@dataclass
class SplitFile:
    """A file cut into documents (LF text) and the separators before each document."""

    crlf: bool
    separators: list[str]
    docs: list[str]

    def join(self, docs: list[str]) -> bytes:
        text = "".join(sep + doc for sep, doc in zip(self.separators, docs))
        return (text.replace("\n", "\r\n") if self.crlf else text).encode()


def split_file(data: bytes) -> SplitFile:
    """Split on ``---`` lines; CR LF becomes LF (as kpt's reader does), remembered for writing."""
    text = data.decode()
    crlf = "\r\n" in text
    text = text.replace("\r\n", "\n")
    separators, docs, current, sep = [], [], [], ""
    for line in text.splitlines(keepends=True):
        if _SEPARATOR.match(line.rstrip("\n")):
            separators.append(sep)
            docs.append("".join(current))
            current, sep = [], line
        else:
            current.append(line)
    separators.append(sep)
    docs.append("".join(current))
    return SplitFile(crlf, separators, docs)


def has_content(doc: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in doc.splitlines())


def annotation_lines(path: str, index: int) -> str:
    q = json.dumps
    return (f"  annotations:\n"
            f"    config.kubernetes.io/path: {q(path)}\n"
            f"    config.kubernetes.io/index: {q(str(index))}\n"
            f"    internal.config.kubernetes.io/path: {q(path)}\n"
            f"    internal.config.kubernetes.io/index: {q(str(index))}\n")


def annotate(doc: str, path: str, index: int) -> tuple[str, str | None]:
    """Insert kpt's path/index annotations (when the text allows it simply); return the inserted block."""
    if "\n  annotations:" in doc or not re.search(r"^metadata:\n", doc, re.M):
        return doc, None
    block = annotation_lines(path, index)
    return re.sub(r"^metadata:\n", lambda m: m.group(0) + block, doc, count=1, flags=re.M), block


def indent_item(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(("- " if i == 0 else ("  " if line.strip() else "")) + line for i, line in enumerate(lines))


def resource_list(items: list[str], config: dict[str, str]) -> str:
    """A ResourceList as kpt writes it: 2-space items and a ConfigMap functionConfig."""
    data = "".join(f"    {k}: {json.dumps(v)}\n" for k, v in {"mode": "promote", **config}.items())
    return ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
            + "".join(indent_item(t) for t in items)
            + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: promote\n  data:\n" + data)
