#!/usr/bin/env python3
"""Convert kpt's Updater table tests (Go, pkgbuilder DSL) into language-neutral YAML test data.

Reads, from a kpt git checkout at tag v1.0.0-beta.56, the ``testCases`` tables of
``internal/util/update/{resource-merge,fastforward,replace}_test.go`` and the
resource manifests of ``internal/testutil/pkgbuilder/builder.go``, evaluates each
``pkgbuilder`` expression into the files it builds (``{relative path: text}``,
root package named ``base`` as ``ExpandPkg`` does) and writes one YAML file of
cases.  Only data is emitted (file contents, case names, flags); no Go code.

Usage: port_kpt_update_tables.py GIT_DIR OUT.yaml   (GIT_DIR: a kpt clone, e.g. the fetch tool's mirror)
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

TAG = "v1.0.0-beta.56"
TABLES = {
    "resource-merge": "internal/util/update/resource-merge_test.go",
    "fast-forward": "internal/util/update/fastforward_test.go",
    "force-delete-replace": "internal/util/update/replace_test.go",
}
BUILDER = "internal/testutil/pkgbuilder/builder.go"
CONSTANTS = {
    "kptRepo": "github.com/GoogleContainerTools/kpt", "masterBranch": "master", "testutil.Upstream": "upstream",
    "kptfilev1.ResourceMerge": "resource-merge", "kptfilev1.FastForward": "fast-forward",
    "kptfilev1.ForceDeleteReplace": "force-delete-replace",
}
COMMAND_TABLES = {  # the Command tests: git repos, kpt pkg get, local changes, update
    "TestCommand_Run_local_subpackages": "internal/util/update/update_test.go",
    "TestRun_remote_subpackages": "internal/util/update/update_test.go",
    "TestCmd_output": "commands/pkg/update/cmdupdate_test.go",
}
_TOKEN = re.compile(r'\s*(?:(//[^\n]*)|(`[^`]*`)|("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)|(-?[0-9]+)|(.))', re.S)


def git_show(git_dir: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{TAG}:{path}"], check=True, capture_output=True, text=True).stdout


def tokens(text: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(text):
        comment, raw, string, ident, number, punct = m.groups()
        if comment:
            continue
        if raw is not None:
            out.append(("str", raw[1:-1]))
        elif string is not None:
            out.append(("str", yaml.safe_load(string)))  # a Go "..." literal reads as a YAML double-quoted scalar
        elif ident is not None:
            out.append(("id", ident))
        elif number is not None:
            out.append(("num", number))
        elif punct is not None and punct.strip():
            out.append(("p", punct))
    return out


# -- the pkgbuilder model ---------------------------------------------------------------------


@dataclass
class Kptfile:
    upstream: dict[str, str] | None = None
    lock: dict[str, str] | None = None
    pipeline: list[dict[str, str]] | None = None
    inventory: dict[str, str] | None = None


@dataclass
class Pkg:
    name: str
    kptfile: Kptfile | None = None
    resources: list[tuple[str, str, list[tuple[str, Any]]]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    subpkgs: list["Pkg"] = field(default_factory=list)


class Evaluator:
    def __init__(self, manifests: dict[str, tuple[str, str]]) -> None:
        self.manifests = manifests

    def call(self, target: Any, name: str, args: list[Any]) -> Any:
        if target is None:
            if name == "NewRootPkg":
                return Pkg("base")
            if name == "NewSubPkg":
                return Pkg(args[0])
            if name == "NewKptfile":
                return Kptfile()
            if name == "SetFieldPath":
                return ("set", (args[0], args[1:]))
            if name == "SetAnnotation":
                return ("annotate", (args[0], args[1]))
            if name == "NewFunction":
                return {"image": args[0]}
        if isinstance(target, Pkg):
            if name == "WithKptfile":
                target.kptfile = args[0] if args else Kptfile()
            elif name == "WithResource":
                filename, manifest = self.manifests[args[0]]
                target.resources.append((filename, manifest, args[1:]))
            elif name == "WithRawResource":
                target.resources.append((args[0], args[1], args[2:]))
            elif name == "WithFile":
                target.files[args[0]] = args[1]
            elif name == "WithSubPackages":
                target.subpkgs.extend(args)
            else:
                raise ValueError(f"unsupported Pkg.{name}")
            return target
        if isinstance(target, Kptfile):
            if name == "WithUpstream":
                target.upstream = dict(zip(("repo", "directory", "ref", "updateStrategy"), args))
            elif name == "WithUpstreamLock":
                target.lock = dict(zip(("repo", "directory", "ref", "commit"), args))
            elif name == "WithUpstreamRef":  # a test repository, resolved by the test runner
                repo_ref, directory, ref, strategy = args
                target.upstream = {"repo": f"{{{{repo:{repo_ref}}}}}", "directory": directory,
                                   "ref": _commit_ref(repo_ref, ref), "updateStrategy": strategy}
            elif name == "WithUpstreamLockRef":
                repo_ref, directory, ref, index = args
                target.lock = {"repo": f"{{{{repo:{repo_ref}}}}}", "directory": directory,
                               "ref": _commit_ref(repo_ref, ref), "commit": f"{{{{commit:{repo_ref}:{index}}}}}"}
            elif name == "WithPipeline":
                target.pipeline = list(args)
            elif name == "WithInventory":
                target.inventory = args[0]
            else:
                raise ValueError(f"unsupported Kptfile.{name}")
            return target
        if isinstance(target, dict) and name == "WithConfigPath":
            return {**target, "configPath": args[0]}
        raise ValueError(f"unsupported call {name} on {target!r}")


def _commit_ref(repo_ref: str, ref: str) -> str:
    m = re.match(r"^COMMIT-INDEX:([0-9]+)$", ref)
    return f"{{{{commit:{repo_ref}:{m.group(1)}}}}}" if m else ref


class Parser:
    def __init__(self, toks: list[tuple[str, str]], ev: Evaluator) -> None:
        self.toks, self.i, self.ev = toks, 0, ev

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[self.i + k]

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            raise ValueError(f"expected {value!r}, got {tok!r} at token {self.i}")
        self.i += 1
        return tok

    def args(self) -> list[Any]:
        self.take("(")
        out = []
        while self.peek()[1] != ")":
            out.append(self.expr())
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        return out

    def expr(self) -> Any:
        kind, value = self.take()
        if kind == "str":
            return value
        if kind == "num":
            return int(value)
        if kind == "id" and value in ("true", "false"):
            return value == "true"
        if kind == "id" and value == "pkgbuilder":
            self.take(".")
            name = self.take()[1]
            if self.peek()[1] != "(":  # a constant: DeploymentResource, ...
                obj: Any = name
            else:
                obj = self.ev.call(None, name, self.args())
            while self.peek()[1] == "." and self.peek(1)[0] == "id":
                self.take(".")
                method = self.take()[1]
                obj = self.ev.call(obj, method, self.args())
            return obj
        if kind == "id" and value in ("map",) or (kind == "p" and value == "["):
            while self.peek()[1] != "{":  # a type: map[string][]testutil.Content, []resultForStrategy, ...
                self.take()
            return self.composite()
        if kind == "p" and value == "{":
            self.i -= 1
            return self.composite()
        if kind == "id" and self.peek()[1] == "." and self.peek(1)[0] == "id":
            self.take(".")
            value = f"{value}.{self.take()[1]}"
            if self.peek()[1] == "{":  # testutil.Content{...}
                return self.composite()
        if kind == "id" and value in CONSTANTS:
            return CONSTANTS[value]
        if kind == "p" and value == "&":  # &pkgbuilder.Inventory{...} style literals are not used here
            raise ValueError("composite literals are not supported")
        raise ValueError(f"unexpected token {value!r}")

    def composite(self) -> Any:
        """``{a, b}`` -> list, ``{k: v, ...}`` -> dict (keys: names, strings or constants)."""
        self.take("{")
        items: list[Any] = []
        keyed: dict[str, Any] = {}
        while self.peek()[1] != "}":
            start = self.i
            if self.peek()[0] == "id" and self.peek(1)[1] == ":":
                key = self.take()[1]
                self.take(":")
                keyed[key] = self.expr()
            else:
                value = self.expr()
                if self.peek()[1] == ":":
                    self.take(":")
                    keyed[str(value)] = self.expr()
                else:
                    items.append(value)
            if self.peek()[1] == ",":
                self.take(",")
            assert self.i > start
        self.take("}")
        return keyed if keyed or not items else items

    def table(self) -> dict[str, dict[str, Any]]:
        # skip `map[string]struct { ... }` up to the opening brace of the literal
        depth = 0
        while True:
            kind, value = self.take()
            if value == "{":
                depth += 1
            elif value == "}":
                depth -= 1
                if depth == 0:
                    break
        body = self.composite()
        if isinstance(body, list):  # []struct{name: ...}
            return {case["name"]: case for case in body}
        return body


# -- building the files ---------------------------------------------------------------------------


def kptfile_text(kf: Kptfile, name: str) -> str:
    doc: dict[str, Any] = {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": name}}
    if kf.upstream is not None:
        up = kf.upstream
        doc["upstream"] = {"type": "git", "git": {k: up[k] for k in ("repo", "directory", "ref") if up.get(k)}}
        if up.get("updateStrategy"):
            doc["upstream"]["updateStrategy"] = up["updateStrategy"]
    if kf.lock is not None:
        doc["upstreamLock"] = {"type": "git", "git": {k: v for k, v in kf.lock.items() if v}}
    if kf.pipeline is not None:
        doc["pipeline"] = {"mutators": kf.pipeline} if kf.pipeline else {}
    return yaml.safe_dump(doc, sort_keys=False)


def resource_text(manifest: str, mutators: list[tuple[str, Any]]) -> str:
    data = yaml.safe_load(manifest)
    for kind, arg in mutators:
        if kind == "set":
            value, path = arg
            node = data
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = yaml.safe_load(value)  # kyaml keeps the node's tag: "5" stays an int
        elif kind == "annotate":
            data.setdefault("metadata", {}).setdefault("annotations", {})[arg[0]] = arg[1]
    return yaml.safe_dump(data, sort_keys=False)


def files_of(pkg: Pkg, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    if pkg.kptfile is not None:
        out[prefix + "Kptfile"] = kptfile_text(pkg.kptfile, pkg.name)
    for filename, manifest, mutators in pkg.resources:
        out[prefix + filename] = resource_text(manifest, mutators)
    for name, content in pkg.files.items():
        out[prefix + name] = content
    for sub in pkg.subpkgs:
        out.update(files_of(sub, f"{prefix}{sub.name}/"))
    return out


def content(c: dict[str, Any]) -> dict[str, Any]:
    """A testutil.Content: the package built at that commit, and branch/tag handling."""
    if "UpdateFunc" in c or "Data" in c:
        raise ValueError("UpdateFunc/Data contents are not data")
    out: dict[str, Any] = {"files": files_of(c["Pkg"])}
    for key in ("Branch", "CreateBranch", "Tag"):
        if key in c:
            out[key[0].lower() + key[1:]] = c[key]
    return out


def command_case(test: str, path: str, name: str, fields: dict[str, Any]) -> dict[str, Any]:
    case: dict[str, Any] = {"name": name, "test": test}
    try:
        case["repos"] = {repo: [content(c) for c in commits] for repo, commits in fields["reposChanges"].items()}
        if fields.get("updatedLocal"):
            case["localChanges"] = files_of(fields["updatedLocal"]["Pkg"])
    except ValueError as err:
        case["skip"] = str(err)
        return case
    results = fields.get("expectedResults")
    if results is None:  # one result for the Kptfile's strategy
        results = [{"strategies": [None], **{k: v for k, v in fields.items() if k in ("expectedLocal", "expectedErrMsg")}}]
    case["results"] = []
    for result in results:
        entry: dict[str, Any] = {"strategies": result["strategies"]}
        if result.get("expectedErrMsg"):
            entry["expectedErr"] = result["expectedErrMsg"]
        if result.get("expectedLocal") is not None:
            entry["expected"] = files_of(result["expectedLocal"])
        case["results"].append(entry)
    return case


def manifests(builder: str) -> dict[str, tuple[str, str]]:
    texts = dict(re.findall(r"(\w+ResourceManifest) = `([^`]*)`", builder))
    names = dict(re.findall(r"(\w+Resource)\s*=\s*\"(\w+)\"", builder))
    out = {}
    for const, key in names.items():
        m = re.search(rf"{const}: \{{\s*filename: \"([^\"]+)\",\s*manifest: (\w+),", builder)
        if m:
            out[const] = (m.group(1), texts[m.group(2)])
    return out


def main(argv: list[str]) -> int:
    git_dir, out_path = argv
    ev = Evaluator(manifests(git_show(git_dir, BUILDER)))
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{TAG}^{{commit}}"], check=True, capture_output=True, text=True).stdout.strip()
    cases = []
    for strategy, path in TABLES.items():
        text = git_show(git_dir, path)
        start = text.index("testCases := ")
        parser = Parser(tokens(text[start + len("testCases := "):]), ev)
        for name, fields in parser.table().items():
            case: dict[str, Any] = {"name": name, "strategy": strategy, "test": path}
            case["relPackagePath"] = fields.get("relPackagePath", "/")
            case["isRoot"] = fields.get("isRoot", False)
            for key in ("origin", "local", "updated", "expected"):
                if key in fields:
                    case[key] = files_of(fields[key])
            if "expectedErr" in fields:
                case["expectedErr"] = fields["expectedErr"]
            cases.append(case)
    command_cases = []
    for test, path in COMMAND_TABLES.items():
        text = git_show(git_dir, path)
        start = text.index(f"func {test}(")
        start = text.index("testCases := ", start)
        parser = Parser(tokens(text[start + len("testCases := "):]), ev)
        for name, fields in parser.table().items():
            command_cases.append(command_case(test, path, name, fields))
    doc_cmd = {
        "kind": "KptUpdateCommandTables",
        "source": {"repo": "https://github.com/kptdev/kpt", "tag": TAG, "commit": None, "paths": sorted(set(COMMAND_TABLES.values())) + [BUILDER],
                   "licence": "Apache-2.0, Copyright The kpt Authors"},
        "semantics": "repos: each repository's commits in order (the first is committed before `kpt pkg get upstream@master`, "
                     "the rest after); files {{repo:NAME}} / {{commit:NAME:INDEX}} name a test repository and its INDEX-th commit; "
                     "localChanges replace the fetched package; then `kpt pkg update` (Go API: no --strategy = the Kptfile's) with each "
                     "strategy; local must equal expected (Kptfiles as structs, root updateStrategy = the strategy used "
                     "when expectedRootStrategy is PLACEHOLDER) or fail with expectedErr",
        "tests": {t: p for t, p in COMMAND_TABLES.items()},
        "cases": command_cases,
    }
    doc = {
        "kind": "KptUpdaterTables",
        "source": {"repo": "https://github.com/kptdev/kpt", "tag": TAG, "commit": commit, "paths": [*TABLES.values(), BUILDER],
                   "licence": "Apache-2.0, Copyright The kpt Authors"},
        "semantics": "Updater.Update(origin, local, updated) on the package at relPackagePath; local must equal expected "
                     "(testutil.KptfileAwarePkgEqual: Kptfiles as structs, other files as text)",
        "cases": cases,
    }

    class Literal(yaml.SafeDumper):
        pass

    Literal.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None))
    doc_cmd["source"]["commit"] = commit
    with open(out_path, "w") as fh:
        yaml.dump(doc, fh, Dumper=Literal, sort_keys=False, width=200)
    cmd_path = out_path.replace("kpt-updater-tables", "kpt-update-command-tables")
    with open(cmd_path, "w") as fh:
        yaml.dump(doc_cmd, fh, Dumper=Literal, sort_keys=False, width=200)
    print(f"{len(cases)} cases -> {out_path}; {len(command_cases)} cases -> {cmd_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
