"""Checks shared by the reliability tests: what "handled cleanly" means.

A KRM function run is clean when it returns (never raises), prints a
ResourceList, exits 0 or 1, exits 1 exactly when an error result is present,
and no result is an "internal error" (the runner's last-resort catch of a
bug: it prints a traceback to stderr, which is what this suite hunts).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from krm_merge.runner import run_function

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
RL_HEAD = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"


@dataclass
class Outcome:
    """A function run: output text, exit code, parsed results."""

    text: str
    code: int
    results: list[dict[str, Any]]
    items: list[Any]

    @property
    def errors(self) -> list[str]:
        return [str(r.get("message")) for r in self.results if r.get("severity") == "error"]


class _AnyTagLoader(yaml.CSafeLoader):  # type: ignore[misc,name-defined]
    """Reads output like kpt does: unknown tags are data, never objects."""


def _untagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_AnyTagLoader.add_multi_constructor("", _untagged)


def load_output(text: str) -> Any:
    """Parse function output (unknown tags kept as plain data)."""
    return yaml.load(text, Loader=_AnyTagLoader)


class Unclean(AssertionError):
    """The function did not handle an input cleanly."""


# Bugs already reported in other owners' modules, each with a strict xfail
# reproducer in test_known_bugs.py.  The fuzzers skip inputs that hit one of
# these (so CI stays meaningful) and keep hunting for new ones.  When a
# reproducer starts passing, strict xfail fails: delete its line here too.
KNOWN_BUGS: dict[str, re.Pattern[str]] = {
}


def known_bug(message: str) -> str | None:
    """The reproducer name of a known bug this failure message matches, if any."""
    for name, pattern in KNOWN_BUGS.items():
        if pattern.search(message):
            return name
    return None


def check_function(text: str) -> Outcome:
    """Run the KRM function in-process on ``text`` and check it handled it cleanly."""
    err = io.StringIO()
    try:
        with redirect_stderr(err):
            out, code = run_function(text)
    except BaseException as exc:  # the point: nothing may escape
        raise Unclean(f"exception escaped run_function: {type(exc).__name__}: {exc}") from exc
    return check_output(out, code, err.getvalue(), text)


def _is_yaml(text: str) -> bool:
    try:
        for _ in yaml.load_all(text, Loader=_AnyTagLoader):  # constructing catches bad anchors and keys too
            pass
    except (yaml.YAMLError, RecursionError, TypeError, ValueError):
        return False
    return True


def _beyond_libyaml_depth(exc: yaml.YAMLError) -> bool:
    # libyaml 0.2.6 (PyYAML 6.0.4) refuses 1,000 levels; the function passes a deeper
    # untouched item through, and its results are still to be checked.
    return getattr(exc, "problem", None) == "exceeded maximum nesting depth"


def _outcome_without_items(out: str, code: int, stderr: str) -> Outcome:
    """The results of an output whose items libyaml cannot read (they are not checked)."""
    head, _, rest = out.partition("\nitems:")
    _, found, results = rest.rpartition("\nresults:\n")
    doc = load_output(head) or {}
    if doc.get("kind") not in ("ResourceList", "List"):
        raise Unclean(f"output is not a ResourceList:\n{out[:2000]}")
    found_results = (load_output("results:\n" + results) or {}).get("results") if found else None
    return _checked(Outcome(out, code, found_results or [], []), stderr)


def check_output(out: str, code: int, stderr: str, given: str | None = None) -> Outcome:
    """Validate a function's stdout/exit code/stderr (``given``: the input text, if known)."""
    if "Traceback (most recent call last)" in stderr:
        raise Unclean(f"traceback on stderr:\n{stderr[-3000:]}")
    if code not in (0, 1):
        raise Unclean(f"exit code {code}")
    try:
        doc = load_output(out)
    except yaml.YAMLError as exc:
        if _beyond_libyaml_depth(exc):
            return _outcome_without_items(out, code, stderr)
        # Items no mode touched are passed through unparsed (a deliberate speed
        # trade-off, see docs/reliability.md): invalid YAML in, invalid YAML out.
        if given is not None and not _is_yaml(given):
            return Outcome(out, code, [], [])
        raise Unclean(f"output is not YAML although the input is: {exc}\n{out[:2000]}") from None
    if not isinstance(doc, dict) or doc.get("kind") not in ("ResourceList", "List"):
        raise Unclean(f"output is not a ResourceList:\n{out[:2000]}")
    return _checked(Outcome(out, code, doc.get("results") or [], doc.get("items") or []), stderr)


def _checked(outcome: Outcome, stderr: str) -> Outcome:
    for r in outcome.results:
        if r.get("severity") not in ("error", "warning", "info"):
            raise Unclean(f"result without a valid severity: {r}")
        message = str(r.get("message", ""))
        if not message.strip():
            raise Unclean(f"result without a message: {r}")
        if "internal error" in message:
            raise Unclean(f"internal error result: {message}\n{stderr[-3000:]}")
    if (outcome.code == 1) != bool(outcome.errors):
        raise Unclean(f"exit code {outcome.code} but error results {outcome.errors}")
    return outcome


def run_command(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
    """Run a subcommand's ``main`` in-process; check it exited cleanly (no traceback)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:
        raise Unclean(f"exception escaped {main.__module__}.main: {type(exc).__name__}: {exc}\n"
                      f"stderr: {err.getvalue()[-2000:]}") from exc
    stderr = err.getvalue()
    if "Traceback (most recent call last)" in stderr:
        raise Unclean(f"traceback on stderr:\n{stderr[-3000:]}")
    if code not in (0, 1, 2):
        raise Unclean(f"exit code {code}")
    if code == 1 and not any(line.startswith("krm-merge") and "error" in line for line in stderr.splitlines()):
        raise Unclean(f"exit code 1 without a `krm-merge...: error:` line:\n{stderr[-2000:]}")
    for line in stderr.splitlines():
        if "internal error" in line:
            raise Unclean(f"internal error: {line}")
    return code, out.getvalue(), stderr


def run_cli(args: list[str], stdin: bytes | None = None, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real console script in a subprocess."""
    return subprocess.run([KRM_MERGE, *args], input=stdin, capture_output=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def resource_list(items: list[str], function_config: str | None = None) -> str:
    """A ResourceList in kpt's layout from item texts (documents at column 0)."""
    parts = [RL_HEAD, "items:\n" if items else "items: []\n"]
    for text in items:
        lines = text.rstrip("\n").split("\n")
        parts.append("- " + lines[0] + "\n" + "".join(("  " + line if line else "") + "\n" for line in lines[1:]))
    if function_config is not None:
        parts.append("functionConfig:\n")
        parts.extend(("  " + line if line else "") + "\n" for line in function_config.rstrip("\n").split("\n"))
    return "".join(parts)


def configmap(data: dict[str, str]) -> str:
    """A ConfigMap functionConfig's text (values as kpt writes them)."""
    return yaml.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": data},
                     Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False, width=1 << 30)


def typed(kind: str, spec: Any) -> str:
    """A typed functionConfig's text."""
    return yaml.dump({"apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": kind, "metadata": {"name": "fn"},
                      "spec": spec}, Dumper=yaml.CSafeDumper, sort_keys=False, width=1 << 30)


def count_comments(text: str) -> int:
    """Comments in a YAML text (tokens, so `#` inside strings is not counted)."""
    return len(comment_texts(text))


def comment_texts(text: str) -> list[str]:
    """Every comment of a YAML text, stripped, in order (ruamel's tokens see them)."""
    from ruamel.yaml import YAML

    out: list[str] = []
    for token in YAML(typ="rt").scan(text):
        for c in _token_comments(token):
            out.extend(part.strip() for part in c.splitlines() if part.strip().startswith("#"))
    return out


def _token_comments(token: Any) -> list[str]:
    found: list[str] = []
    comment = getattr(token, "_comment", None) or getattr(token, "comment", None)
    if not comment:
        return found

    def walk(node: Any) -> None:
        if node is None:
            return
        if isinstance(node, list):
            for n in node:
                walk(n)
        elif hasattr(node, "value") and isinstance(node.value, str):
            found.append(node.value)

    walk(comment)
    return found
