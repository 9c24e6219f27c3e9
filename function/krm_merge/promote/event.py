"""``promote --event``: one Flux event turned into the promotion pipeline-controller would make of it.

Flux's notification-controller delivers an event either as the generic webhook's body (the
event itself: ``involvedObject``, ``severity``, ``reason``, ``metadata.revision``, ...) or,
through the ``githubdispatch`` provider, as a GitHub ``repository_dispatch`` body whose
``client_payload`` is the event; a GitHub Actions event file (``$GITHUB_EVENT_PATH``) is that
body with ``action``, ``repository``, ``sender`` beside it.  All three are read here.

The event is untrusted input: read bounded (:func:`krm_merge.files.read_bytes`), parsed as
strict JSON (no duplicate keys, no ``NaN``), every refused shape one :class:`EventError` naming
the field.  What it asks for is worked out as pipeline-controller's promotion webhook does
(``lookupNextEnvironment``), except that the source environment is the one whose target
holds the event's object instead of a name in a URL:

* the Pipeline's ``appRef`` must be the event's object (kind and name; the API group when
  both name one);
* the source environment is the one with a target in the object's namespace (and, when the
  event's ``metadata.cluster`` names a cluster, whose ``clusterRef`` is that cluster);
* the target is the next environment; the value is ``metadata.revision``.

An event that is not a successful install or upgrade, names an object the Pipeline does
not track, or comes from the last environment is "nothing to promote": :class:`Nothing`,
one line, exit code 0.
"""

from __future__ import annotations

import json
import sys

from krm_merge.files import read_bytes, read_stream
from krm_merge.krm.display import escape_controls
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.files import pipeline_finder
from krm_merge.promote.pipeline import PipelineRef, is_pipeline, matches, pull_request_promotion
from krm_merge.promote.request import Promotion, promotion_from_spec
from krm_merge.records import Record
from krm_merge.yaml.load import load_all_data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SEVERITY = "info"
SUCCESS_REASONS = ("InstallSucceeded", "UpgradeSucceeded", "ReconciliationSucceeded", "Succeeded")
"""The reasons of a Flux event that says a new revision runs (helm-controller's install and upgrade,
kustomize-controller's and the image controllers' reconciliation); with any other the event is not promoted."""

MAX_TEXT = 1024
"""The longest string an event field may hold here: names, reasons and revisions are far shorter."""


class EventError(PromoteError):
    """An event that cannot be read as one; ``field`` names the offending field (``client_payload.severity``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, field=field)

    def __str__(self) -> str:
        return f"event: {self.field}: {self.message}" if self.field else f"event: {self.message}"


class FluxEvent(Record):
    """The fields of a Flux event that a promotion needs."""

    kind: str
    namespace: str
    name: str
    api_version: str
    severity: str
    reason: str
    revision: str
    cluster: str
    prefix: str  # where the event sits in the body: "" or "client_payload."

    def describe(self) -> str:
        """The event's object as messages name it: ``HelmRelease podinfo/podinfo``."""
        return escape_controls(f"{self.kind} {self.namespace}/{self.name}")


class Nothing(Record):
    """Nothing to promote, and why (one line)."""

    reason: str


class EventPromotion(Record):
    """The promotion an event asks for, and the Pipeline it was resolved against."""

    promotion: Promotion
    pipeline: dict[str, Any]
    source: str
    target: str

    @property
    def pull_request(self) -> bool:
        """True when the Pipeline's promotion for the target environment is a pull request."""
        return pull_request_promotion(self.pipeline, self.target) is not None

    def find_pipeline(self, fallback: Callable[[PipelineRef], dict[str, Any] | None]
                      ) -> Callable[[PipelineRef], dict[str, Any] | None]:
        """A Pipeline finder that knows this run's Pipeline (read from a file outside the tree), else ``fallback``."""
        def find(ref: PipelineRef) -> dict[str, Any] | None:
            return self.pipeline if matches(self.pipeline, ref) else fallback(ref)
        return find


# --- reading ---------------------------------------------------------------------------------


def read_event(source: str) -> FluxEvent:
    """The event in file ``source`` (``-``: standard input), in any of the shapes Flux delivers it in."""
    what = "standard input" if source == "-" else source
    raw = read_stream(sys.stdin.buffer, what) if source == "-" else read_bytes(source)
    return parse_event(raw)


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise EventError(escape_controls(key), "appears twice in one object")
        found[key] = value
    return found


def _refuse_constant(name: str) -> Any:
    raise EventError("", f"is not strict JSON ({name})")


def parse_event(raw: bytes) -> FluxEvent:
    """The Flux event in ``raw`` (a webhook body, a repository_dispatch body or a GitHub Actions event file)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise EventError("", f"is not UTF-8 text (byte {err.start})") from None
    try:
        body = json.loads(text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant)
    except RecursionError:
        raise EventError("", "nests too deep") from None
    except ValueError as err:
        raise EventError("", f"is not JSON ({escape_controls(str(err))})") from None
    if not isinstance(body, dict):
        raise EventError("", "must be a JSON object")
    prefix = ""
    if "client_payload" in body:
        # repository_dispatch (the githubdispatch provider's request, or the Actions event file): the event is inside
        body, prefix = body["client_payload"], "client_payload."
        if not isinstance(body, dict):
            raise EventError("client_payload", "must be an object (the Flux event)")
    elif "involvedObject" not in body:
        raise EventError("involvedObject", "missing: not a Flux event (nor a repository_dispatch body with "
                                           "client_payload)")
    obj = body.get("involvedObject")
    if not isinstance(obj, dict):
        raise EventError(prefix + "involvedObject", "missing or not an object")
    metadata = body.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise EventError(prefix + "metadata", "must be an object of strings")
    where = prefix + "involvedObject."
    return FluxEvent(
        kind=_text(obj, "kind", where), namespace=_text(obj, "namespace", where), name=_text(obj, "name", where),
        api_version=_text(obj, "apiVersion", where, required=False),
        severity=_text(body, "severity", prefix), reason=_text(body, "reason", prefix),
        revision=_text(metadata, "revision", prefix + "metadata.", required=False),
        cluster=_text(metadata, "cluster", prefix + "metadata.", required=False), prefix=prefix)


def _text(data: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise EventError(where + key, "missing")
        return ""
    if not isinstance(value, str):
        raise EventError(where + key, f"must be a string, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise EventError(where + key, f"longer than {MAX_TEXT} characters")
    if escape_controls(value) != value or "\n" in value or "\t" in value:
        raise EventError(where + key, f"holds a control character: '{escape_controls(value)}'")
    return value


# --- resolving -------------------------------------------------------------------------------


def pipelines_in_file(path: str, ref: PipelineRef | None) -> list[dict[str, Any]]:
    """The Pipelines of YAML file ``path`` (only ``ref`` when given), read bounded; an error when there is none."""
    try:
        text = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as err:
        raise PromoteError(f"{path}: not UTF-8 text (byte {err.start})") from None
    found = [doc for doc in load_all_data(text, path) if is_pipeline(doc) and (ref is None or matches(doc, ref))]
    if not found:
        raise PromoteError(f"{path}: no Pipeline" + (f" {ref}" if ref is not None else "") + " in it")
    return found


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def tracks(pipeline: dict[str, Any], event: FluxEvent) -> bool:
    """True when the Pipeline's ``appRef`` is the event's object (kind, name; the API group when both name one)."""
    spec = pipeline.get("spec")
    app = spec.get("appRef") if isinstance(spec, dict) else None
    if not isinstance(app, dict) or app.get("kind") != event.kind or app.get("name") != event.name:
        return False
    api_version = app.get("apiVersion")
    # The version is not compared: Flux serves one object at several versions (v2beta2 and v2 of a HelmRelease).
    return not (isinstance(api_version, str) and api_version and event.api_version
                and _group(api_version) != _group(event.api_version))


def _cluster_names(target: dict[str, Any]) -> set[str]:
    ref = target.get("clusterRef")
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        return set()
    names = {ref["name"]}
    if isinstance(ref.get("namespace"), str):
        names.add(f"{ref['namespace']}/{ref['name']}")
    return names


def _holds(environment: Any, event: FluxEvent) -> bool:
    """True when one of the environment's targets is where the event's object runs."""
    targets = environment.get("targets") if isinstance(environment, dict) else None
    for target in targets if isinstance(targets, list) else []:
        if not isinstance(target, dict) or target.get("namespace") != event.namespace:
            continue
        if not event.cluster or event.cluster in _cluster_names(target):
            return True
    return False


def _ref_of(pipeline: dict[str, Any], given: PipelineRef | None) -> PipelineRef:
    if given is not None:
        return given
    metadata = pipeline.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not name or not isinstance(namespace, str) or not namespace:
        raise PromoteError("a Pipeline read from --pipeline-file needs metadata.name and metadata.namespace (its "
                           "markers name them), or give --pipeline NS/NAME", field="metadata.namespace")
    return PipelineRef(namespace, name)


def _label(pipeline: dict[str, Any], given: PipelineRef | None) -> str:
    """A Pipeline as a message names it, never failing: ``ns/name`` (``?`` for what it lacks)."""
    if given is not None:
        return str(given)
    metadata = pipeline.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return escape_controls("/".join(str(metadata.get(key) or "?") for key in ("namespace", "name")))


def _env_label(pipeline: dict[str, Any], index: int) -> str:
    env = pipeline["spec"]["environments"][index]
    return escape_controls(str(env.get("name") or f"spec.environments[{index}]"))


def resolve_event(event: FluxEvent, pipelines: list[dict[str, Any]], given: PipelineRef | None
                  ) -> EventPromotion | Nothing:
    """The promotion ``event`` asks of the Pipeline (among ``pipelines``) that tracks its object, or Nothing."""
    if event.severity != SEVERITY or event.reason not in SUCCESS_REASONS:
        return Nothing(f"not a successful upgrade (severity {escape_controls(event.severity)}, reason "
                       f"{escape_controls(event.reason)}) of {event.describe()}")
    tracking = [p for p in pipelines if tracks(p, event)]
    if not tracking:
        names = ", ".join(_label(p, given) for p in pipelines)
        return Nothing(f"no Pipeline tracks {event.describe()} (read: {names})")
    where = f"namespace {escape_controls(event.namespace)}" + (
        f" on cluster {escape_controls(event.cluster)}" if event.cluster else "")
    found: list[tuple[dict[str, Any], int]] = []
    for pipeline in tracking:
        spec = pipeline.get("spec")
        envs = spec.get("environments") if isinstance(spec, dict) else None
        for i, env in enumerate(envs if isinstance(envs, list) else []):
            if _holds(env, event):
                found.append((pipeline, i))
    if not found:
        names = ", ".join(_label(p, given) for p in tracking)
        return Nothing(f"no environment of Pipeline {names} has a target in {where}")
    if len(found) > 1:
        which = ", ".join(f"{_label(p, given)} {_env_label(p, i)}" for p, i in found)
        raise EventError(event.prefix + "involvedObject.namespace",
                         f"{where} is a target of several environments ({which}): name the cluster in the event "
                         "(the Alert's spec.eventMetadata.cluster) to tell them apart")
    pipeline, index = found[0]
    ref = _ref_of(pipeline, given)
    envs = pipeline["spec"]["environments"]
    source = str(envs[index].get("name") or "")
    if not source:
        raise PromoteError(f"Pipeline {ref}: spec.environments[{index}] has no name",
                           field=f"spec.environments[{index}].name")
    if index == len(envs) - 1:
        return Nothing(f"{escape_controls(source)} is the last environment of Pipeline {escape_controls(str(ref))}")
    target = envs[index + 1].get("name") if isinstance(envs[index + 1], dict) else None
    if not isinstance(target, str) or not target:
        raise PromoteError(f"Pipeline {ref}: spec.environments[{index + 1}] has no name",
                           field=f"spec.environments[{index + 1}].name")
    if not event.revision:
        # pipeline-controller's answer to the same event (HTTP 422)
        raise EventError(event.prefix + "metadata.revision", "missing: the event has no revision to promote")
    promotion = promotion_from_spec({"pipeline": str(ref), "environment": target, "value": event.revision})
    return EventPromotion(promotion, pipeline, source, target)


def promotion_from_event(source: str, root: str, *, pipeline: str | None = None,
                         pipeline_file: str | None = None) -> EventPromotion | Nothing:
    """The promotion the event in ``source`` (``-``: standard input) asks for.

    The Pipeline is read from ``pipeline_file`` (the one named ``pipeline``, or the one of
    its Pipelines that tracks the event's object), or else ``pipeline`` (``NS/NAME``) is
    looked up in the tree ``root`` as ``--pipeline`` always is.
    """
    event = read_event(source)
    ref = PipelineRef.parse(pipeline) if pipeline is not None else None
    if pipeline_file is not None:
        pipelines = pipelines_in_file(pipeline_file, ref)
    elif ref is not None:
        found = pipeline_finder(root)(ref)
        if found is None:
            raise PromoteError(f"Pipeline {ref} not found (needed to read the event's promotion)")
        pipelines = [found]
    else:
        raise PromoteError("--event needs the Pipeline: give --pipeline NS/NAME or --pipeline-file FILE")
    return resolve_event(event, pipelines, ref)
