"""promote: set the field(s) a GitOps promotion moves to the next environment.

Strategies:

* ``markers`` (default): every scalar carrying ``# {"$promotion": "ns:pipeline:env"}`` for
  the target environment (or ``# {"$imagepolicy": "ns:policy[:tag|:name|:digest]"}`` with
  ``imagePolicy``) is set to ``value``;
* ``path``: resources whose file path lies under a template such as
  ``apps/{environment.name}/{application.name}``;
* ``labels``: resources matching a label/annotation selector (templated the same way).

For path/labels the field comes from a built-in table of known kinds or ``fieldPath``.
Edits are byte-exact (see :mod:`krm_merge.promote`): only the set scalar's text changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import yaml

from krm_merge.config import ConfigError, check_keys, parse_bool, parse_choice
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.promote import strategies
from krm_merge.promote.document import parse_document
from krm_merge.promote.edit import Change, set_scalars
from krm_merge.promote.engine import TextOutcome, promote_text
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.imagepolicy import image_policy_setters, normalize_policy
from krm_merge.promote.markers import IMAGEPOLICY_KEY, PROMOTION_KEY
from krm_merge.promote.pipeline import PipelineRef, find_pipeline, resolve_target

STRATEGIES = ("markers", "path", "labels")
KEYS = ("pipeline", "environment", "fromEnvironment", "value", "allowNoMatch", "imagePolicy",
        "strategy", "pathTemplate", "labelSelector", "annotationSelector", "fieldPath", "application")


@dataclass(frozen=True)
class Config:
    """The promote functionConfig."""

    value: str
    strategy: str = "markers"
    pipeline: PipelineRef | None = None
    environment: str | None = None
    from_environment: str | None = None
    image_policy: str | None = None
    allow_no_match: bool = False
    path_template: str | None = None
    label_selector: str | None = None
    annotation_selector: str | None = None
    field_path: str | None = None
    application: str | None = None


def config_from_configmap(data: dict[str, str]) -> Config:
    """ConfigMap form: every key a string (``allowNoMatch: "true"``)."""
    check_keys(data, KEYS)
    return _build(dict(data), "data")


def config_from_typed(spec: dict[str, Any]) -> Config:
    """Typed form (kind ``Promote``): the same keys, ``allowNoMatch`` a boolean."""
    check_keys(spec, KEYS, "spec")
    return _build(spec, "spec")


def _text(spec: dict[str, Any], key: str, where: str) -> str | None:
    value = spec.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, (dict, list, bool)):
        raise ConfigError(f"{where}.{key}", "must be a string")
    return str(value)


def _build(spec: dict[str, Any], where: str) -> Config:
    value = spec.get("value")
    if value is None:
        raise ConfigError(f"{where}.value", "missing: the new value to write (always written as a string)")
    if isinstance(value, (dict, list)):
        raise ConfigError(f"{where}.value", "must be a string")
    value = value if isinstance(value, str) else ("true" if value is True else "false" if value is False else str(value))
    strategy = parse_choice(spec.get("strategy") or "markers", f"{where}.strategy", STRATEGIES)
    try:
        pipeline_text = _text(spec, "pipeline", where)
        pipeline = PipelineRef.parse(pipeline_text) if pipeline_text else None
        policy_text = _text(spec, "imagePolicy", where)
        image_policy = normalize_policy(policy_text) if policy_text else None
    except PromoteError as err:
        raise ConfigError(f"{where}.pipeline" if "pipeline" in err.message else f"{where}.imagePolicy",
                          err.message) from None
    config = Config(
        value=value,
        strategy=strategy,
        pipeline=pipeline,
        environment=_text(spec, "environment", where),
        from_environment=_text(spec, "fromEnvironment", where),
        image_policy=image_policy,
        allow_no_match=parse_bool(spec.get("allowNoMatch", False), f"{where}.allowNoMatch"),
        path_template=_text(spec, "pathTemplate", where),
        label_selector=_text(spec, "labelSelector", where),
        annotation_selector=_text(spec, "annotationSelector", where),
        field_path=_text(spec, "fieldPath", where),
        application=_text(spec, "application", where),
    )
    _validate(config, where)
    return config


def _validate(config: Config, where: str) -> None:
    if config.environment and config.from_environment:
        raise ConfigError(f"{where}.fromEnvironment", "give either environment or fromEnvironment, not both")
    if config.image_policy is not None:
        if config.strategy != "markers":
            raise ConfigError(f"{where}.imagePolicy", "only works with strategy markers")
        if config.pipeline or config.environment or config.from_environment:
            raise ConfigError(f"{where}.imagePolicy", "is an alternative to pipeline/environment; give one or the other")
        return
    if config.strategy == "markers" and config.pipeline is None:
        raise ConfigError(f"{where}.pipeline", "missing: namespace/name of the Pipeline (or use imagePolicy)")
    if not config.environment and not config.from_environment:
        raise ConfigError(f"{where}.environment", "missing: give environment (the target) or fromEnvironment")
    if config.from_environment and config.pipeline is None:
        raise ConfigError(f"{where}.pipeline", "fromEnvironment needs the Pipeline (namespace/name)")
    if config.strategy == "path" and not config.path_template:
        raise ConfigError(f"{where}.pathTemplate", "strategy path needs a template, e.g. apps/{environment.name}/{application.name}")
    if config.strategy == "labels" and not (config.label_selector or config.annotation_selector):
        raise ConfigError(f"{where}.labelSelector", "strategy labels needs labelSelector and/or annotationSelector")
    if config.strategy != "labels" and (config.label_selector or config.annotation_selector):
        raise ConfigError(f"{where}.labelSelector", "only used with strategy labels")
    if config.strategy == "markers" and config.field_path:
        raise ConfigError(f"{where}.fieldPath", "only used with strategies path and labels (markers name their field)")


# --------------------------------------------------------------------------------- run


@dataclass
class _Edit:
    """An item and what promoting its text gave (applied only when no item failed)."""

    obj: KubeObject
    outcome: TextOutcome


def run(rl: ResourceList, config: Config) -> None:
    """Set the promoted field(s) in ``rl.items``; one info result per change."""
    config = replace(config, value=_value_as_written(rl.function_config, config.value))
    try:
        target, pipeline_data = _resolve_environment(rl, config)
    except PromoteError as err:
        raise KrmError(err.message) from None
    if config.strategy == "markers":
        edits = _run_markers(rl, config, target, _scope(config, target, pipeline_data))
        what = _describe_markers(config, target)
    else:
        edits = _run_strategy(rl, config, target, pipeline_data)
        what = f"resources selected by strategy {config.strategy}"
    if rl.results.has_errors:
        return  # all or nothing: no item is changed when any item failed
    matched = sum(e.outcome.matched for e in edits)
    for edit in edits:
        if edit.outcome.changed:
            edit.obj.set_text(edit.outcome.text)
        for change in edit.outcome.changes:
            _report_change(rl, edit.obj, change)
    if matched == 0:
        message = f"no field found for {what}"
        if config.allow_no_match:
            rl.results.warning(message)
        else:
            raise KrmError(message + " (set allowNoMatch: true to accept this)")


def _value_as_written(function_config: KubeObject | None, parsed: str) -> str:
    """The ``value`` exactly as written in the functionConfig.

    ConfigMap data are strings, and a version is text: an unquoted ``value: 1.10`` means
    "1.10", not the number 1.1 that a YAML loader makes of it (kpt itself reads such data
    as strings).  Quoted values were strings already.
    """
    if function_config is None:
        return parsed
    try:
        root = yaml.compose(function_config.text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return parsed
    for section in ("data", "spec"):
        node = _child(_child(root, section), "value")
        if isinstance(node, yaml.ScalarNode) and not node.style and node.value:
            return str(node.value)
    return parsed


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _resolve_environment(rl: ResourceList, config: Config) -> tuple[str | None, dict[str, Any] | None]:
    if config.image_policy is not None:
        return None, None
    pipeline_data = None
    if config.pipeline is not None:
        pipeline_data = find_pipeline((o.data for o in rl.items if o.kind == "Pipeline"), config.pipeline)
    if config.pipeline is None:
        return config.environment, None
    target = resolve_target(config.pipeline, pipeline_data, environment=config.environment,
                            from_environment=config.from_environment)
    return target, pipeline_data


def _describe_markers(config: Config, target: str | None) -> str:
    if config.image_policy is not None:
        return f'markers {{"{IMAGEPOLICY_KEY}": "{config.image_policy}[:tag|:name|:digest]"}}'
    assert config.pipeline is not None and target is not None
    return f'marker {{"{PROMOTION_KEY}": "{config.pipeline.marker(target)}"}}'


def _scope(config: Config, target: str | None, pipeline_data: dict[str, Any] | None) -> str | None:
    """With markers, ``pathTemplate`` only narrows the files searched (like Flux's update path)."""
    if config.path_template is None:
        return None
    try:
        return strategies.render_template(config.path_template, _template_variables(config, target, pipeline_data))
    except PromoteError as err:
        raise KrmError(err.message, field="pathTemplate") from None


def _run_markers(rl: ResourceList, config: Config, target: str | None, scope: str | None) -> list[_Edit]:
    if config.image_policy is not None:
        key = IMAGEPOLICY_KEY
        try:
            setters: dict[str, str | None] = image_policy_setters(config.image_policy, config.value)
        except PromoteError as err:
            raise KrmError(err.message, field="value") from None
    else:
        assert config.pipeline is not None and target is not None
        key, setters = PROMOTION_KEY, {config.pipeline.marker(target): config.value}
    edits: list[_Edit] = []
    for obj in rl.items:
        if key not in obj.text:
            continue
        if scope is not None and not (obj.path and strategies.path_selected(obj.path, scope)):
            continue
        try:
            outcome = promote_text(obj.text, key, setters)
        except PromoteError as err:
            _report_error(rl, obj, err)
            continue
        for bad in outcome.malformed:
            rl.results.warning(f"comment mentions {key} but {bad.reason}: {bad.comment.strip()}", obj)
        edits.append(_Edit(obj, outcome))
    return edits


def _run_strategy(rl: ResourceList, config: Config, target: str | None,
                  pipeline_data: dict[str, Any] | None) -> list[_Edit]:
    variables = _template_variables(config, target, pipeline_data)
    try:
        if config.strategy == "path":
            assert config.path_template is not None
            pattern = strategies.render_template(config.path_template, variables)
            chosen = [o for o in rl.items if o.path and strategies.path_selected(o.path, pattern)]
        else:
            labels = strategies.parse_selector(strategies.render_template(config.label_selector, variables)) \
                if config.label_selector else ()
            annotations = strategies.parse_selector(strategies.render_template(config.annotation_selector, variables)) \
                if config.annotation_selector else ()
            chosen = [o for o in rl.items
                      if strategies.selector_matches(labels, o.labels)
                      and strategies.selector_matches(annotations, o.annotations)]
        field_parts = strategies.parse_field_path(config.field_path) if config.field_path else None
    except PromoteError as err:
        raise KrmError(err.message) from None
    edits: list[_Edit] = []
    for obj in chosen:
        if obj.is_local_config or obj.kind == "Pipeline":
            continue
        path = strategies.field_for(obj.group, obj.kind, config.field_path)
        if path is None:
            continue
        try:
            parts = field_parts or strategies.parse_field_path(path)
            doc = parse_document(obj.text)
            entry = strategies.find_field(doc, 0, parts)
            if entry is None:
                continue
            new_text, changes = set_scalars(doc, [(entry, config.value, None)])
        except PromoteError as err:
            _report_error(rl, obj, err)
            continue
        edits.append(_Edit(obj, TextOutcome(new_text, changes, 1, [])))
    return edits


def _template_variables(config: Config, target: str | None, pipeline: dict[str, Any] | None) -> dict[str, str]:
    variables = {"environment.name": target or ""}
    if config.pipeline is not None:
        variables["pipeline.name"] = config.pipeline.name
        variables["pipeline.namespace"] = config.pipeline.namespace
    app = config.application
    if app is None and pipeline is not None:
        app_ref = (pipeline.get("spec") or {}).get("appRef") if isinstance(pipeline.get("spec"), dict) else None
        if isinstance(app_ref, dict) and isinstance(app_ref.get("name"), str):
            app = app_ref["name"]
    if app is None and config.pipeline is not None:
        app = config.pipeline.name
    if app is not None:
        variables["application.name"] = app
    return variables


def _report_change(rl: ResourceList, obj: KubeObject, change: Change) -> None:
    rl.results.info(
        f"set {change.path} to {change.new!r} (was {change.old!r})"
        + (f" for marker {change.marker!r}" if change.marker else ""),
        obj, field=change.path, current=change.old, proposed=change.new,
    )


def _report_error(rl: ResourceList, obj: KubeObject, err: PromoteError) -> None:
    message = err.message + (f" (line {err.line} of the item)" if err.line else "")
    rl.results.error(message, obj, field=err.field)
