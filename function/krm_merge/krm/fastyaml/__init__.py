"""A fast reader and minimal-text editor for the block YAML that kyaml prints.

Most items a KRM function sees are in kyaml's canonical shape: block maps,
block sequences (compact or wide), one-line scalars, a few one-line flow
collections and literal block scalars.  For that subset this module

* parses the text line by line into plain data *exactly* equal to what
  :func:`krm_merge.krm.yamlio.load_data` returns (YAML 1.1 scalar types by
  :mod:`krm_merge.yaml.scalars`, timestamps kept as strings), together
  with a position tree (line spans of every entry, column spans of scalars);
* rewrites the text to hold new data by splicing lines: changed scalars in
  place (quote style kept), deleted entries removed with the comment lines
  that follow them, new entries inserted after their predecessor, list
  elements moved as whole line blocks.

Both give up (return None) on anything outside the subset or any edit they
are not sure to print exactly as the ruamel.yaml path would (anchors, tags,
folded scalars, a changed literal block not written as the round-trip editor
prints one (one written so is printed as it prints the new value), changed
multi-line plain or single-quoted scalars (read, kept as written), changed
flow mappings, containers that become empty, ...).  What printers with a
line width write is in the subset (a scalar on the line after its key,
wrapped plain scalars, quoted strings wrapped inside a flow collection,
issue 45).  The caller then falls back to libyaml /
ruamel.yaml, so giving up is always safe.

Comment ownership follows ruamel.yaml: a comment line belongs to the entry
*before* it (it moves and disappears with that entry); comments between a
key and its first child belong to the key.

The package is split by concern: ``nodes`` (the position tree), ``parse``
(the reader), ``edit`` (the splicer) and ``render`` (new values as text);
scalar resolution lives with the other scalar rules in
:mod:`krm_merge.yaml.scalars`.
"""

from __future__ import annotations

from krm_merge.krm.fastyaml.edit import Matcher, edit
from krm_merge.krm.fastyaml.nodes import NOTHING, Entry, MapPos, Node, Parsed, ScalarPos, SeqPos
from krm_merge.krm.fastyaml.parse import parse, reread_scalar_line

__all__ = ["NOTHING", "Entry", "MapPos", "Matcher", "Node", "Parsed", "ScalarPos", "SeqPos", "edit", "parse", "reread_scalar_line"]
