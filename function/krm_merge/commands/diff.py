"""``krm-merge diff``: print the strategic merge patch between two objects.

    krm-merge diff ORIGINAL MODIFIED [--current CURRENT] [--overwrite]

Without ``--current`` the 2-way patch (``CreateTwoWayMergePatch``) that turns
ORIGINAL into MODIFIED is printed; with it, the 3-way patch
(``CreateThreeWayMergePatch``) that ``kubectl apply`` would send for
last-applied ORIGINAL, new configuration MODIFIED and live object CURRENT.
Each file holds one YAML object.  The patch is printed as YAML with sorted
keys (kubectl's JSON key order).  Exit status: 0 success, 1 error or
conflict (one line on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

from ..errors import KrmMergeError
from .reporting import RESULTS_HELP
from ..schema.base import OPEN_SCHEMA, SchemaNode
from ..smp.create import create_three_way_patch, create_two_way_patch
from ..smp.errors import ConflictError, SmpError
from ..smp.go_yaml import to_yaml
from ..yaml.load import DuplicateKey, YamlError, check_size, collecting_duplicate_keys, load_all_data


class DiffInputError(KrmMergeError):
    """An input file is missing, unreadable or not a single YAML object."""


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = argparse.ArgumentParser(
        prog="krm-merge diff",
        description="Print the strategic merge patch from ORIGINAL to MODIFIED "
        "(3-way, as kubectl apply computes it, when --current is given).",
    )
    p.add_argument("original", metavar="ORIGINAL", help="original object (last-applied configuration)")
    p.add_argument("modified", metavar="MODIFIED", help="modified object (new configuration)")
    p.add_argument("--current", metavar="CURRENT", help="live object: compute the 3-way patch")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="3-way only: overwrite changes made from ORIGINAL to CURRENT instead of failing on conflicts",
    )
    p.add_argument("--results", metavar="FILE", help=RESULTS_HELP)
    return p


def read_object(path: str) -> dict[str, Any]:
    """Load the single YAML object of ``path`` as plain data, through the bounded loader.

    Values are read as kubectl reads them (YAML 1.1: ``yes`` is a boolean).
    """
    try:
        check_size(os.stat(path).st_size, path)
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
        documents = [d for d in load_all_data(text, path) if d is not None]
    except OSError as err:
        raise DiffInputError(f"{path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise DiffInputError(f"{path} is not UTF-8 text (byte {err.start})") from None
    except YamlError as err:
        raise DiffInputError(err.message) from None
    if not documents:
        return {}
    if len(documents) > 1:
        raise DiffInputError(f"{path}: expected one YAML object, found {len(documents)} documents")
    if not isinstance(documents[0], dict):
        raise DiffInputError(f"{path}: expected a YAML mapping (one object)")
    return documents[0]


def pick_schema(*objects: dict[str, Any]) -> SchemaNode:
    """The built-in schema of the objects' kind, or the open (schemaless) schema."""
    try:
        from ..schema import builtin_schema
    except ImportError:
        return OPEN_SCHEMA
    for obj in objects:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str):
            found = builtin_schema(api_version, kind)
            if found is not None:
                return found
    return OPEN_SCHEMA


def render_patch(patch: dict[str, Any]) -> str:
    """The patch as YAML with sorted keys, printed as kubectl prints YAML."""
    return to_yaml(patch)


def one_line(err: SmpError) -> str:
    """A one-line error message for the terminal."""
    if isinstance(err, ConflictError):
        return err.summary()
    return " ".join(line.strip() for line in str(err).splitlines() if line.strip())


def main(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run ``krm-merge diff``; returns the exit status."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    from krm_merge.commands.reporting import run_with_results

    # The stream is chosen inside: with --results, stderr is the copying one by then.
    return run_with_results("krm-merge diff", args.results, lambda: _main(args, stdout or sys.stdout, stderr or sys.stderr))


def _main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with collecting_duplicate_keys() as duplicates:
        try:
            patch = _patch(args)
        except (DiffInputError, SmpError) as failure:
            message = one_line(failure) if isinstance(failure, SmpError) else str(failure)
            print(f"krm-merge diff: error: {message}{_note(duplicates)}", file=err)
            _warn(duplicates, err)
            return 1
    _warn(duplicates, err)
    out.write(render_patch(patch))
    return 0


def _patch(args: argparse.Namespace) -> dict[str, Any]:
    original = read_object(args.original)
    modified = read_object(args.modified)
    current = read_object(args.current) if args.current is not None else None
    schema = pick_schema(modified, original, *(c for c in (current,) if c is not None))
    if current is None:
        return create_two_way_patch(original, modified, schema)
    return create_three_way_patch(original, modified, current, schema, overwrite=args.overwrite)


def _note(duplicates: list[DuplicateKey]) -> str:
    return f" (note: {'; '.join(d.message() for d in duplicates)})" if duplicates else ""


def _warn(duplicates: list[DuplicateKey], stream: TextIO) -> None:
    for dup in duplicates:
        print(f"krm-merge diff: warning: {dup.message()}", file=stream)
