"""promote: set the field(s) a GitOps promotion moves to the next environment.

Strategies:

* ``markers`` (default): every scalar carrying ``# {"$promotion": "ns:pipeline:env"}`` for
  the target environment (or ``# {"$imagepolicy": "ns:policy[:tag|:name|:digest]"}`` with
  ``imagePolicy``) is set to ``value``;
* ``path``: resources whose file path lies under a template such as
  ``apps/{environment.name}/{application.name}``;
* ``labels``: resources matching a label/annotation selector (templated the same way);
* ``kustomize-image``: ``images[name=X]`` of the kustomization in a (templated) directory.

A run carries one promotion (the top-level keys) or many (a ``promotions:`` list), applied
in one pass by :mod:`krm_merge.promote.engine` — the same engine the ``krm-merge promote``
command calls on files.  Edits are byte-exact: only the set scalars' text changes.

``pullRequest`` holds the settings of ``promote --pull-request`` (:mod:`krm_merge.change.settings`):
``krm-merge run DIR`` acts on them after writing (:mod:`krm_merge.commands.run`); a function run
by kpt sees no repository and only says so.
"""

from __future__ import annotations

from krm_merge.change.settings import Settings, SettingsError, settings_from_config
from krm_merge.config import ConfigError, check_keys, parse_bool
from krm_merge.krm import fastyaml, yamlio
from krm_merge.krm.fastyaml import MapPos, ScalarPos, SeqPos
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.promote.changes import Change
from krm_merge.promote.engine import Unit, promote_units
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.pipeline import find_pipeline
from krm_merge.promote.request import KEYS as PROMOTION_KEYS
from krm_merge.promote.request import Promotion, RequestError, no_match_messages, promotion_from_spec, resolve
from krm_merge.records import Record
from krm_merge.registry import Mode
from krm_merge.yaml.load import compose_marked, libyaml

TYPE_CHECKING = False
if TYPE_CHECKING:  # a hint only: the function path (stdin) never loads the snapshot
    from typing import Any
    from krm_merge.krm.snapshot import Snapshot

KEYS = (*PROMOTION_KEYS, "allowNoMatch", "promotions", "pullRequest")
RUN_ONLY = "krm-merge run DIR"


class Config(Record):
    """The promote functionConfig: one or more promotions applied in one run."""

    promotions: tuple[Promotion, ...]
    allow_no_match: bool = False
    pull_request: Settings | None = None

    @property
    def value(self) -> str:
        """The value of the first promotion (the only one in the single-promotion form)."""
        return self.promotions[0].value


def config_from_configmap(data: dict[str, str]) -> Config:
    """ConfigMap form: every key a string (``allowNoMatch: "true"``; ``promotions`` a YAML list,
    ``pullRequest`` a YAML mapping)."""
    check_keys(data, KEYS)
    spec: dict[str, Any] = dict(data)
    for key in ("promotions", "pullRequest"):
        if spec.get(key):
            spec[key] = yamlio.load_strings(spec[key], f"functionConfig data.{key}")
    return _build(spec, "data")


def config_from_typed(spec: dict[str, Any]) -> Config:
    """Typed form (kind ``Promote``): the same keys, ``allowNoMatch`` a boolean, ``promotions`` a list,
    ``pullRequest`` a mapping."""
    check_keys(spec, KEYS, "spec")
    return _build(spec, "spec")


def _build(spec: dict[str, Any], where: str) -> Config:
    allow = parse_bool(spec.get("allowNoMatch", False), f"{where}.allowNoMatch")
    pull_request = _pull_request(spec.get("pullRequest"), f"{where}.pullRequest")
    listed = spec.get("promotions")
    single = {k: v for k, v in spec.items() if k not in ("allowNoMatch", "promotions", "mode", "pullRequest")}
    if listed in (None, ""):
        return Config((_promotion(single, where),), allow, pull_request)
    if single:
        raise ConfigError(f"{where}.promotions", f"give either a promotions list or the keys of one promotion "
                          f"({', '.join(sorted(single))}), not both")
    if not isinstance(listed, list) or not listed:
        raise ConfigError(f"{where}.promotions", "must be a non-empty list of promotions")
    promotions = []
    for i, entry in enumerate(listed):
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}.promotions[{i}]", "must be a mapping of promotion keys")
        promotions.append(_promotion(entry, f"{where}.promotions[{i}]"))
    return Config(tuple(promotions), allow, pull_request)


def _pull_request(block: Any, where: str) -> Settings | None:
    if block in (None, ""):
        return None
    try:
        return settings_from_config(block, where)
    except SettingsError as err:
        raise ConfigError(err.field or where, err.message) from None


def _promotion(spec: dict[str, Any], where: str) -> Promotion:
    try:
        return promotion_from_spec(spec)
    except RequestError as err:
        raise ConfigError(f"{where}.{err.key}", err.message) from None


# --------------------------------------------------------------------------------- run


def run(rl: ResourceList, config: Config) -> None:
    """Set the promoted fields in ``rl.items``; one info result per change, all or nothing."""
    config = _values_as_written(rl.function_config, config)
    pipelines = [o.data for o in rl.items if o.kind == "Pipeline"]
    try:
        resolved = resolve(config.promotions, lambda ref: find_pipeline(pipelines, ref))
    except PromoteError as err:
        raise KrmError(err.message, field=err.field) from None
    units = [Unit(obj.text, obj.path, obj, obj.what) for obj in rl.items]
    outcome = promote_units(units, resolved)
    for unit, error in outcome.errors:
        _report_error(rl, unit.handle, error)
    for result in outcome.results:
        for bad in result.malformed:
            rl.results.warning(f"comment mentions a marker key but {bad.reason}: {bad.comment.strip()}",
                               result.unit.handle)
    for message in no_match_messages(resolved, outcome.matched):
        if config.allow_no_match:
            rl.results.warning(message)
        else:
            rl.results.error(message + " (set allowNoMatch: true to accept this)")
    if rl.results.has_errors:
        return  # all or nothing: no item is changed when any item failed
    if config.pull_request is not None:
        rl.results.info(f"pullRequest: the pull request is opened by `{RUN_ONLY}` after it writes the files; "
                        "a function run by kpt sees no repository and opens none")
    for result in outcome.results:
        obj: Item = result.unit.handle
        obj.set_text(result.text)
        for change in result.changes:
            _report_change(rl, obj, change)


def _values_as_written(function_config: Item | None, config: Config) -> Config:
    """Each ``value`` exactly as written in the functionConfig.

    ConfigMap data are strings, and a version is text: an unquoted ``value: 1.10`` means
    "1.10", not the number 1.1 that a YAML loader makes of it (kpt itself reads such data
    as strings).  Quoted values were strings already.
    """
    if function_config is None:
        return config
    sections = _written_fast(function_config.text)
    if sections is None:
        sections = _written_composed(function_config.text)
    for written in sections:
        if written is not None and len(written) == len(config.promotions):
            return config._replace(promotions=tuple(
                p._replace(value=w) if w is not None else p for p, w in zip(config.promotions, written)))
    return config


# Each of the two readers below gives, for ``data`` then ``spec``: None without that section, else the
# plain ``value`` of each entry of its ``promotions`` list (a YAML list), or of the section itself.


def _written_fast(text: str) -> list[list[str | None] | None] | None:
    """The ``value`` scalars as written, read by the fast reader; None when it does not read the text.

    A function run reads its functionConfig with the fast reader already: PyYAML (~100M instructions
    to import, most of a promote function run's start-up) is loaded only for what the fast reader
    does not read (issue 45).
    """
    parsed = fastyaml.parse(text)
    if parsed is None or parsed.aliases or parsed.anchor_lines:
        return None
    lines = text.split("\n")

    def child(node: Any, key: str) -> Any:
        if isinstance(node, ScalarPos) and node.style == "flow":
            raise _NotAsWritten  # a flow collection (`spec: {value: 1.10}`): the composer reads inside it
        entry = node.entries.get(key) if isinstance(node, MapPos) else None
        return entry.value if entry is not None else None

    def plain(node: Any) -> str | None:
        pos = child(node, "value")
        if not isinstance(pos, ScalarPos):
            return None  # no value, or a block collection: no plain text
        entry = node.entries["value"]
        if pos.style == "multiline" or pos.style == "plain" and entry.end - entry.start != 1:
            raise _NotAsWritten  # a scalar over several lines: the composer folds it
        if pos.style != "plain":
            return None  # quoted, empty, a block scalar or a flow collection: no plain text
        return lines[pos.line][pos.start:pos.end] or None

    found: list[list[str | None] | None] = []
    try:
        for section in ("data", "spec"):
            holder = child(parsed.root, section)
            if holder is None:
                found.append(None)
                continue
            listed = child(holder, "promotions")
            child(listed, "")  # a flow list of promotions: given up as a flow mapping is
            nodes = [entry.value for entry in listed.items] if isinstance(listed, SeqPos) else [holder]
            found.append([plain(node) for node in nodes])
    except _NotAsWritten:
        return None
    return found


class _NotAsWritten(Exception):
    """A ``value`` the fast reader reads, but not as the composer gives its text."""


def _written_composed(text: str) -> list[list[str | None] | None]:
    """:func:`_written_fast` read by PyYAML's composer (its resolver and marks, as ``yaml.compose``)."""
    yaml = libyaml().yaml
    try:
        roots = compose_marked(text)
    except yaml.YAMLError:
        return []
    root = roots[0] if len(roots) == 1 else None  # yaml.compose: None for no document, an error for two

    def child(node: Any, key: str) -> Any:
        if not isinstance(node, yaml.MappingNode):
            return None
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
        return None

    def plain(node: Any) -> str | None:
        if isinstance(node, yaml.ScalarNode) and not node.style and node.value:
            return str(node.value)
        return None

    found: list[list[str | None] | None] = []
    for section in ("data", "spec"):
        holder = child(root, section)
        if holder is None:
            found.append(None)
            continue
        listed = child(holder, "promotions")
        nodes = listed.value if isinstance(listed, yaml.SequenceNode) else [holder]
        found.append([plain(child(node, "value")) for node in nodes])
    return found


def _report_change(rl: ResourceList, obj: Item, change: Change) -> None:
    was = f"was {change.old!r}" if change.old is not None else "added"
    rl.results.info(
        f"set {change.path} to {change.new!r} ({was})"
        + (f" for marker {change.marker!r}" if change.marker else (f" by {change.source}" if change.source else "")),
        obj, field=change.path, current=change.old, proposed=change.new,
    )


def _report_error(rl: ResourceList, obj: Item, err: PromoteError) -> None:
    message = err.message + (f" (line {err.line} of the item)" if err.line else "")
    rl.results.error(message, obj, field=err.field)


def unread_file_warnings(snapshot: Snapshot, skipped: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Warnings (message, file) for ``krm-merge run`` about files it did not read.

    ``run`` reads like ``kpt fn source`` (``*.yaml``, ``*.yml``, Kptfile); a file it skipped
    (not UTF-8) or never reads (Flux's extension-less ``Kustomization``) may hold markers
    that only the ``promote`` command, which reads what Flux reads, can promote.  ``snapshot``: the
    package's one listing, which ``run`` read it through (no listing of its own here).
    """
    # Only `krm-merge run` calls this: the function path of promote never reads files.
    from krm_merge.promote.files import unread_marker_files

    hint = "; `krm-merge promote DIR` reads it (as Flux does)"
    notes = [(f"{rel}: {reason}; skipped", rel) for rel, reason in skipped]
    notes.extend((f"{rel} holds a promotion marker but `krm-merge run` reads like kpt fn source "
                  f"(*.yaml, *.yml, Kptfile) and did not read it{hint}", rel)
                 for rel in unread_marker_files(snapshot))
    return notes


MODE: Mode[Config] = Mode(
    name="promote",
    kind="Promote",
    summary="set fields marked for GitOps promotion",
    keys=KEYS,
    from_configmap=config_from_configmap,
    from_typed=config_from_typed,
    run=run,
)
