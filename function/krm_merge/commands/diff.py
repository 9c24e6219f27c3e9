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
from typing import Any, TextIO

from .. import files
from ..errors import KrmMergeError
from .base import command_parser
from ..krm.results import Field, File, ResourceRef, Result
from ..outcomes import render
from ..outcomes.kinds import Message, message
from ..outcomes.report import Report
from ..schema.base import OPEN_SCHEMA, SchemaNode
from ..smp.create import create_three_way_patch, create_two_way_patch
from ..smp.errors import ConflictError, SmpError
from ..smp.go_yaml import to_yaml
from ..yaml.load import DuplicateKey, YamlError, collecting_duplicate_keys, load_all_data


PROG = "krm-merge diff"


class DiffInputError(KrmMergeError):
    """An input file is missing, unreadable or not a single YAML object."""


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Print the strategic merge patch from ORIGINAL to MODIFIED (3-way, as kubectl apply "
                          "computes it, when --current is given).", EXAMPLES, _arguments)


EXAMPLES = ("krm-merge diff last-applied.yaml new.yaml",
            "krm-merge diff last-applied.yaml new.yaml --current live.yaml --overwrite")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("original", metavar="ORIGINAL", help="original object (last-applied configuration)")
    p.add_argument("modified", metavar="MODIFIED", help="modified object (new configuration)")
    p.add_argument("--current", metavar="CURRENT", help="live object: compute the 3-way patch")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="3-way only: overwrite changes made from ORIGINAL to CURRENT instead of failing on conflicts",
    )


def read_object(path: str) -> dict[str, Any]:
    """Load the single YAML object of ``path`` as plain data, through the bounded loader.

    Values are read as kubectl reads them (YAML 1.1: ``yes`` is a boolean).
    """
    try:
        text = files.read_text(path)  # a regular file, size-bounded (a FIFO or /dev/zero: refused by name)
        documents = [d for d in load_all_data(text, path) if d is not None]
    except OSError as err:
        raise DiffInputError(f"{path}: {err.strerror or err}", file=File(path)) from None
    except UnicodeDecodeError as err:
        raise DiffInputError(f"{path} is not UTF-8 text (byte {err.start})", file=File(path)) from None
    except (YamlError, files.NotAFileError) as err:
        raise DiffInputError(err.message, file=File(path)) from None
    if not documents:
        return {}
    if len(documents) > 1:
        raise DiffInputError(f"{path}: expected one YAML object, found {len(documents)} documents", file=File(path))
    if not isinstance(documents[0], dict):
        raise DiffInputError(f"{path}: expected a YAML mapping (one object)", file=File(path))
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
    report = Report("diff")
    patch = _main(args, report)
    # The patch is the command's document (stdout), printed only when it was made.
    document = [render_patch(patch)] if patch is not None else []
    return render.finish(report, results_file=args.results, quiet=args.quiet, document=document, stdout=stdout, stderr=stderr)


def _main(args: argparse.Namespace, report: Report) -> dict[str, Any] | None:
    """The patch, or None; what went wrong, and each duplicate key, goes to ``report``."""
    objects: list[dict[str, Any]] = []
    patch: dict[str, Any] | None = None
    with collecting_duplicate_keys() as duplicates:
        try:
            patch = _patch(args, objects)
        except (DiffInputError, SmpError) as failure:
            words = one_line(failure) if isinstance(failure, SmpError) else str(failure)
            report.add(Message(Result(f"{words}{_note(duplicates)}", "error", _reference(objects),
                                      _failed_field(failure), failure.file if isinstance(failure.file, File) else None)))
    report.extend(message(dup.message(), "warning", dup.what) for dup in duplicates)
    return patch


def _patch(args: argparse.Namespace, objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The patch; ``objects`` gets each input as it is read (modified first: the results name its resource)."""
    original = read_object(args.original)
    modified = read_object(args.modified)
    objects.extend((modified, original))
    current = read_object(args.current) if args.current is not None else None
    schema = pick_schema(modified, original, *(c for c in (current,) if c is not None))
    if current is None:
        return create_two_way_patch(original, modified, schema)
    return create_three_way_patch(original, modified, current, schema, overwrite=args.overwrite)


def _reference(objects: list[dict[str, Any]]) -> ResourceRef | None:
    """The resource the inputs describe (the modified object's apiVersion, kind, name, namespace), when known."""
    for obj in objects:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        values = (obj.get("apiVersion"), obj.get("kind"), meta.get("name"), meta.get("namespace") or "")
        if all(isinstance(v, str) for v in values) and values[1] and values[2]:
            return ResourceRef(*values)  # type: ignore[arg-type]
    return None


def _failed_field(failure: KrmMergeError) -> Field | None:
    """The field a patch failed at (the first one of a conflict); None for an input error or the root."""
    if isinstance(failure, ConflictError):
        path = next((p for p in failure.conflicts if p), "")
    else:
        path = failure.path if isinstance(failure, SmpError) else ""
    return Field(path) if path else None


def _note(duplicates: list[DuplicateKey]) -> str:
    return f" (note: {'; '.join(d.message() for d in duplicates)})" if duplicates else ""
