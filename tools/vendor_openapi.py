#!/usr/bin/env python3
"""Extract, from a forge's full published API description, the subset krm-merge's forge adapters use.

    python tools/vendor_openapi.py FORGE FULL_DESCRIPTION OUT.json

The subset holds the operations listed in :data:`OPERATIONS` for FORGE, every schema,
parameter, response and header they reference (the ``$ref`` closure), the security
schemes and the base path, so that ``tests/change/forge_server.py`` can serve and check
exactly those operations.  ``examples`` (large, and not part of the contract) are
dropped; everything else is copied unchanged.  The source, version and licence of the
full description go into ``info.x-krm-merge-vendored`` (see tests/change/openapi/README.md
for each file's provenance).  Reads JSON or YAML (PyYAML), writes sorted, indented JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

# (method, path) of each operation an adapter calls (function/krm_merge/change/forges/<forge>.py).
OPERATIONS: dict[str, list[tuple[str, str]]] = {
    "github": [
        ("get", "/repos/{owner}/{repo}/pulls"),
        ("post", "/repos/{owner}/{repo}/pulls"),
        ("patch", "/repos/{owner}/{repo}/pulls/{pull_number}"),
        ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
        ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers"),
    ],
    "gitea": [
        ("get", "/repos/{owner}/{repo}/pulls"),
        ("post", "/repos/{owner}/{repo}/pulls"),
        ("patch", "/repos/{owner}/{repo}/pulls/{index}"),
        ("post", "/repos/{owner}/{repo}/issues/{index}/labels"),
        ("post", "/repos/{owner}/{repo}/pulls/{index}/requested_reviewers"),
    ],
    "gitlab": [
        ("get", "/api/v4/projects/{id}/merge_requests"),
        ("post", "/api/v4/projects/{id}/merge_requests"),
        ("get", "/api/v4/projects/{id}/merge_requests/{merge_request_iid}"),
        ("put", "/api/v4/projects/{id}/merge_requests/{merge_request_iid}"),
        ("get", "/api/v4/users"),
    ],
    "bitbucket": [
        ("get", "/repositories/{workspace}/{repo_slug}/pullrequests"),
        ("post", "/repositories/{workspace}/{repo_slug}/pullrequests"),
        ("get", "/repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"),
        ("put", "/repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"),
    ],
}
OPERATIONS["forgejo"] = OPERATIONS["gitea"]  # Forgejo serves Gitea's API

DROPPED = ("examples", "example")


def load(path: Path) -> dict[str, Any]:
    """A description file, JSON or YAML."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, Loader=yaml.CSafeLoader)
    if not isinstance(data, dict) or "paths" not in data:
        raise SystemExit(f"{path}: not an OpenAPI/Swagger description")
    return data


def _pointer(doc: dict[str, Any], ref: str) -> tuple[list[str], Any]:
    if not ref.startswith("#/"):
        raise SystemExit(f"external $ref not supported: {ref}")
    parts = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]
    node: Any = doc
    for part in parts:
        node = node[part]
    return parts, node


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in DROPPED}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            found.append(node["$ref"])
        for value in node.values():
            found.extend(_refs(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_refs(value))
    return found


def _put(out: dict[str, Any], parts: list[str], value: Any) -> None:
    node = out
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def subset(doc: dict[str, Any], operations: list[tuple[str, str]], source: str, licence: str) -> dict[str, Any]:
    """The description cut to ``operations`` and what they reference."""
    out: dict[str, Any] = {k: doc[k] for k in ("openapi", "swagger", "host", "basePath", "servers",
                                               "securityDefinitions", "security") if k in doc}
    out["info"] = {k: v for k, v in doc["info"].items() if k in ("title", "version", "license")}
    out["info"]["x-krm-merge-vendored"] = {
        "source": source, "licence": licence,
        "operations": [f"{method.upper()} {path}" for method, path in operations],
        "by": "tools/vendor_openapi.py (operations and their $ref closure; examples dropped)",
    }
    if "securitySchemes" in doc.get("components", {}):
        out.setdefault("components", {})["securitySchemes"] = doc["components"]["securitySchemes"]
    paths: dict[str, Any] = {}
    for method, path in operations:
        item = doc["paths"][path]
        kept = paths.setdefault(path, {k: v for k, v in item.items() if k == "parameters"})
        kept[method] = item[method]
    out["paths"] = _strip(paths)
    pending, seen = _refs(out["paths"]), set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        parts, node = _pointer(doc, ref)
        node = _strip(node)
        _put(out, parts, node)
        pending.extend(_refs(node))
    return out


def main(argv: list[str]) -> int:
    """``FORGE FULL_DESCRIPTION OUT.json [SOURCE] [LICENCE]``."""
    if len(argv) not in (3, 5) or argv[0] not in OPERATIONS:
        sys.stderr.write(__doc__ or "")
        return 2
    forge, full, out = argv[0], Path(argv[1]), Path(argv[2])
    doc = load(full)
    source = argv[3] if len(argv) == 5 else full.name
    licence = argv[4] if len(argv) == 5 else str(doc.get("info", {}).get("license", ""))
    data = subset(doc, OPERATIONS[forge], source, licence)
    out.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stdout.write(f"{out}: {len(data['paths'])} paths, {out.stat().st_size} bytes\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
