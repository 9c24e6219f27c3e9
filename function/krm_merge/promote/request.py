"""What one promotion asks for, and how a run's promotions become setters.

A run carries one or more :class:`Promotion` requests (a functionConfig's top-level keys, its
``promotions:`` list, or the command's ``--set``/``--image-policy``/``--kustomize-image``
options).  :func:`resolve` turns them into :class:`Resolved` promotions: the target
environment found, the marker values to look for, templates rendered.  Both the function
mode and the ``promote`` command build requests here and hand the resolved list to
:mod:`krm_merge.promote.engine`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence

from krm_merge.promote.errors import PromoteError
from krm_merge.promote.imagepolicy import ImageRef, image_policy_setters, normalize_policy
from krm_merge.promote.markers import IMAGEPOLICY_KEY, PROMOTION_KEY
from krm_merge.promote.pipeline import PipelineRef, resolve_target
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def is_kustomization_in(path: str, directory: str) -> bool:
    """True when ``path`` is the kustomization file of ``directory``."""
    head, name = posixpath.split(posixpath.normpath(path.replace("\\", "/")).lstrip("/"))
    want = posixpath.normpath(directory.replace("\\", "/")).lstrip("/")
    return name in KUSTOMIZATION_NAMES and head == ("" if want == "." else want)
STRATEGIES = ("markers", "path", "labels", "kustomize-image")
KEYS = ("pipeline", "environment", "fromEnvironment", "value", "imagePolicy", "strategy", "pathTemplate",
        "labelSelector", "annotationSelector", "fieldPath", "application", "image")


class RequestError(PromoteError):
    """A promotion request is wrong; ``key`` names the offending key of the request."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message, field=key)
        self.key = key


class Promotion(Record):
    """One value to promote and how to find the field(s) it goes to.

    A typed, immutable record (a NamedTuple rather than a dataclass: the ``promote``
    command's start path stays free of the dataclasses/inspect imports).
    """

    value: str
    strategy: str = "markers"
    pipeline: PipelineRef | None = None
    environment: str | None = None
    from_environment: str | None = None
    image_policy: str | None = None
    path_template: str | None = None
    label_selector: str | None = None
    annotation_selector: str | None = None
    field_path: str | None = None
    application: str | None = None
    image: str | None = None  # kustomize-image: the `images[].name` to set

    def describe(self) -> str:
        """A short human name, used in conflicts, reports and "no field found" messages."""
        if self.strategy == "kustomize-image":
            where = f" in {self.path_template}" if self.path_template else ""
            return f"kustomize image {self.image}{where}={self.value}"
        if self.image_policy is not None:
            return f"image policy {self.image_policy}={self.value}"
        env = self.environment or f"after {self.from_environment}"
        who = f"{self.pipeline} {env}" if self.pipeline else env
        if self.strategy == "markers":
            return f"{who}={self.value}"
        return f"{self.strategy} {who}={self.value}"


def _text(spec: Mapping[str, Any], key: str) -> str | None:
    value = spec.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, (dict, list, bool)):
        raise RequestError(key, "must be a string")
    return str(value)


def _value(spec: Mapping[str, Any]) -> str:
    value = spec.get("value")
    if value is None:
        raise RequestError("value", "missing: the new value to write (always written as a string)")
    if isinstance(value, (dict, list)):
        raise RequestError("value", "must be a string")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def promotion_from_spec(spec: Mapping[str, Any]) -> Promotion:
    """A Promotion from config keys (ConfigMap strings or typed values); raises RequestError."""
    for key in spec:
        if key not in KEYS:
            raise RequestError(key, f"unknown key; valid keys: {', '.join(KEYS)}")
    strategy = str(spec.get("strategy") or "markers")
    if strategy not in STRATEGIES:
        raise RequestError("strategy", f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    pipeline_text = _text(spec, "pipeline")
    policy_text = _text(spec, "imagePolicy")
    try:
        pipeline = PipelineRef.parse(pipeline_text) if pipeline_text else None
    except PromoteError as err:
        raise RequestError("pipeline", err.message) from None
    try:
        image_policy = normalize_policy(policy_text) if policy_text else None
    except PromoteError as err:
        raise RequestError("imagePolicy", err.message) from None
    promotion = Promotion(
        value=_value(spec), strategy=strategy, pipeline=pipeline,
        environment=_text(spec, "environment"), from_environment=_text(spec, "fromEnvironment"),
        image_policy=image_policy, path_template=_text(spec, "pathTemplate"),
        label_selector=_text(spec, "labelSelector"), annotation_selector=_text(spec, "annotationSelector"),
        field_path=_text(spec, "fieldPath"), application=_text(spec, "application"), image=_text(spec, "image"),
    )
    validate(promotion)
    return promotion


def validate(p: Promotion) -> None:
    """Check that the keys of one promotion fit together; raises RequestError."""
    if p.environment and p.from_environment:
        raise RequestError("fromEnvironment", "give either environment or fromEnvironment, not both")
    if p.from_environment and p.pipeline is None:
        raise RequestError("pipeline", "fromEnvironment needs the Pipeline (namespace/name)")
    if p.strategy != "labels" and (p.label_selector or p.annotation_selector):
        raise RequestError("labelSelector", "only used with strategy labels")
    if p.strategy in ("markers", "kustomize-image") and p.field_path:
        raise RequestError("fieldPath", "only used with strategies path and labels (markers name their field)")
    if p.strategy != "kustomize-image" and p.image:
        raise RequestError("image", "only used with strategy kustomize-image")
    if p.image_policy is not None:
        if p.strategy != "markers":
            raise RequestError("imagePolicy", "only works with strategy markers")
        if p.pipeline or p.environment or p.from_environment:
            raise RequestError("imagePolicy", "is an alternative to pipeline/environment; give one or the other")
        return
    if p.strategy == "kustomize-image":
        if not p.image:
            raise RequestError("image", "strategy kustomize-image needs the image name (images[].name) to set")
        if not p.path_template:
            raise RequestError("pathTemplate", "strategy kustomize-image needs the kustomization's directory, "
                               "e.g. overlays/{environment.name}")
        try:
            ImageRef.parse(p.value)
        except PromoteError as err:
            raise RequestError("value", err.message) from None
        return
    if p.strategy == "markers" and p.pipeline is None:
        raise RequestError("pipeline", "missing: namespace/name of the Pipeline (or use imagePolicy)")
    if not p.environment and not p.from_environment:
        raise RequestError("environment", "missing: give environment (the target) or fromEnvironment")
    if p.strategy == "path" and not p.path_template:
        raise RequestError("pathTemplate", "strategy path needs a template, e.g. apps/{environment.name}/{application.name}")
    if p.strategy == "labels" and not (p.label_selector or p.annotation_selector):
        raise RequestError("labelSelector", "strategy labels needs labelSelector and/or annotationSelector")


# ------------------------------------------------------------------ command-line forms


def parse_set(text: str) -> Promotion:
    """``NS:PIPELINE:ENV=VALUE`` (the ``--set`` option) -> a marker promotion."""
    target, sep, value = text.partition("=")
    parts = target.split(":")
    if not sep or len(parts) != 3 or not all(parts):
        raise RequestError("set", f"--set takes NS:PIPELINE:ENV=VALUE, got {text!r}")
    return Promotion(value=value, pipeline=PipelineRef(parts[0], parts[1]), environment=parts[2])


def parse_image_policy(text: str) -> Promotion:
    """``NS:NAME=IMAGE_REF`` (the ``--image-policy`` option) -> an image-policy promotion."""
    policy, sep, value = text.partition("=")
    if not sep:
        raise RequestError("image-policy", f"--image-policy takes NS:NAME=IMAGE_REF, got {text!r}")
    try:
        ImageRef.parse(value)
        return Promotion(value=value, image_policy=normalize_policy(policy))
    except RequestError:
        raise
    except PromoteError as err:
        raise RequestError("image-policy", err.message) from None


def parse_kustomize_image(text: str, environment: str | None) -> Promotion:
    """``DIR:NAME=IMAGE_REF`` (``--kustomize-image``); DIR may hold ``{environment.name}``."""
    target, sep, value = text.partition("=")
    directory, colon, name = target.rpartition(":")
    if not sep or not colon or not directory or not name:
        raise RequestError("kustomize-image", f"--kustomize-image takes DIR:NAME=IMAGE_REF, got {text!r}")
    promotion = Promotion(value=value, strategy="kustomize-image", path_template=directory, image=name,
                          environment=environment)
    validate(promotion)
    return promotion


# --------------------------------------------------------------------------- resolving


class Resolved(Record):
    """A promotion ready to apply: its marker setters or its selection, templates rendered."""

    index: int  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins
    promotion: Promotion
    target: str | None  # the environment promoted to (None for image policies)
    marker_key: str | None
    setters: dict[str, str | None]  # marker value -> new value
    scope: str | None  # rendered pathTemplate
    variables: dict[str, str]

    @property
    def rendered(self) -> Promotion:
        """The promotion with its path template filled in, as a summary names it (``overlays/prod``)."""
        return self.promotion._replace(path_template=self.scope) if self.scope else self.promotion

    @property
    def what(self) -> str:
        """What this promotion looks for, for "no field found" messages."""
        p = self.promotion
        if self.marker_key == PROMOTION_KEY:
            return f'marker {{"{PROMOTION_KEY}": "{next(iter(self.setters))}"}}'
        if self.marker_key == IMAGEPOLICY_KEY:
            return f'markers {{"{IMAGEPOLICY_KEY}": "{p.image_policy}[:tag|:name|:digest]"}}'
        if p.strategy == "kustomize-image":
            return f"a kustomization in {self.scope} (kustomize image {p.image})"
        return f"resources selected by strategy {p.strategy}"

    @property
    def label(self) -> str:
        """What set a field, for reports: the marker or the strategy."""
        p = self.promotion
        if self.marker_key == PROMOTION_KEY:
            return f'{{"{PROMOTION_KEY}": "{next(iter(self.setters))}"}}'
        if self.marker_key == IMAGEPOLICY_KEY:
            return f'{{"{IMAGEPOLICY_KEY}": "{p.image_policy}"}}'
        if p.strategy == "kustomize-image":
            return f"kustomize-image {p.image} in {self.scope}"
        return f"strategy {p.strategy}"


PipelineLookup = Callable[[PipelineRef], "dict[str, Any] | None"]


def resolve(promotions: Sequence[Promotion], find_pipeline: PipelineLookup) -> list[Resolved]:
    """Resolve every promotion; raises PromoteError (with pipeline-controller's texts).

    Two promotions asking the same marker for different values are a conflict naming both.
    """
    resolved: list[Resolved] = []
    for index, p in enumerate(promotions):
        if p.path_template or p.field_path or p.strategy == "labels":
            from krm_merge.promote import strategies  # not needed by plain marker runs
        pipeline = find_pipeline(p.pipeline) if p.pipeline is not None else None
        target: str | None = p.environment
        if p.pipeline is not None:
            target = resolve_target(p.pipeline, pipeline, environment=p.environment,
                                    from_environment=p.from_environment)
        variables = _template_variables(p, target, pipeline)
        scope = strategies.render_template(p.path_template, variables) if p.path_template else None
        if p.field_path:
            strategies.parse_field_path(p.field_path)
        if p.image_policy is not None:
            resolved.append(Resolved(index, p, None, IMAGEPOLICY_KEY,
                                     image_policy_setters(p.image_policy, p.value), scope, variables))
        elif p.strategy == "markers":
            assert p.pipeline is not None and target is not None
            resolved.append(Resolved(index, p, target, PROMOTION_KEY, {p.pipeline.marker(target): p.value},
                                     scope, variables))
        else:
            resolved.append(Resolved(index, p, target, None, {}, scope, variables))
            if p.strategy == "labels":
                strategies.selectors(resolved[-1])
    _check_marker_conflicts(resolved)
    return resolved


def _check_marker_conflicts(resolved: list[Resolved]) -> None:
    seen: dict[tuple[str, str], tuple[str | None, Resolved]] = {}
    images: dict[tuple[str | None, str | None], Resolved] = {}
    for r in resolved:
        if r.promotion.strategy == "kustomize-image":
            other = images.setdefault((r.scope, r.promotion.image), r)
            if other.promotion.value != r.promotion.value:
                raise PromoteError(f"conflicting promotions for kustomize image {r.promotion.image!r} in {r.scope}: "
                                   f"{other.promotion.describe()} and {r.promotion.describe()}")
        if r.marker_key is None:
            continue
        for marker, value in r.setters.items():
            before = seen.get((r.marker_key, marker))
            if before is not None and before[0] != value and r.scope == before[1].scope:
                raise PromoteError(f"conflicting promotions for marker {marker!r}: "
                                   f"{before[1].promotion.describe()} and {r.promotion.describe()}")
            seen[(r.marker_key, marker)] = (value, r)


def _template_variables(p: Promotion, target: str | None, pipeline: dict[str, Any] | None) -> dict[str, str]:
    variables = {"environment.name": target} if target else {}
    if p.pipeline is not None:
        variables["pipeline.name"] = p.pipeline.name
        variables["pipeline.namespace"] = p.pipeline.namespace
    app = p.application
    spec = pipeline.get("spec") if pipeline is not None else None
    if app is None and isinstance(spec, dict):
        app_ref = spec.get("appRef")
        if isinstance(app_ref, dict) and isinstance(app_ref.get("name"), str):
            app = app_ref["name"]
    if app is None and p.pipeline is not None:
        app = p.pipeline.name
    if app is not None:
        variables["application.name"] = app
    return variables


def no_match_messages(resolved: Sequence[Resolved], matched: list[int]) -> list[str]:
    """One "no field found" message per promotion that matched nothing."""
    return [f"no field found for {r.what}" + (f" ({r.promotion.describe()})" if len(resolved) > 1 else "")
            for r, count in zip(resolved, matched) if count == 0]
