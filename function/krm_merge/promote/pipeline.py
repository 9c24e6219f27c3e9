"""Pipelines (``pipelines.weave.works/v1alpha1`` Pipeline) and target-environment resolution.

Error texts are pipeline-controller's, so users and alerts keep recognising them.
"""

from __future__ import annotations

from collections.abc import Iterable

from krm_merge.promote.errors import PromoteError
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PIPELINE_GROUP = "pipelines.weave.works"
PIPELINE_KIND = "Pipeline"


class PipelineRef(Record):
    """A Pipeline's namespace and name."""

    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> "PipelineRef":
        """Parse ``namespace/name`` or ``namespace:name``."""
        for sep in ("/", ":"):
            namespace, found, name = text.partition(sep)
            if found and namespace and name and "/" not in name and ":" not in name:
                return cls(namespace, name)
        raise PromoteError(f"pipeline must be namespace/name (or namespace:name), got {text!r}")

    def marker(self, environment: str) -> str:
        """The ``$promotion`` marker value for an environment: ``ns:name:env``."""
        return f"{self.namespace}:{self.name}:{environment}"

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def is_pipeline(data: Any) -> bool:
    """True when ``data`` is a Pipeline object."""
    if not isinstance(data, dict) or data.get("kind") != PIPELINE_KIND:
        return False
    api_version = data.get("apiVersion")
    return isinstance(api_version, str) and api_version.split("/")[0] == PIPELINE_GROUP


def _meta(data: dict[str, Any], key: str) -> str:
    metadata = data.get("metadata")
    value = metadata.get(key) if isinstance(metadata, dict) else None
    return value if isinstance(value, str) else ""


def matches(data: Any, ref: PipelineRef) -> bool:
    """True when ``data`` is the Pipeline ``ref`` (a Pipeline without namespace matches by name)."""
    return is_pipeline(data) and _meta(data, "name") == ref.name and _meta(data, "namespace") in ("", ref.namespace)


def find_pipeline(objects: Iterable[Any], ref: PipelineRef) -> dict[str, Any] | None:
    """The first object that is the Pipeline ``ref``, or None."""
    for data in objects:
        if matches(data, ref):
            found: dict[str, Any] = data
            return found
    return None


def environment_names(pipeline: dict[str, Any]) -> list[str]:
    """Names of ``spec.environments`` in order."""
    spec = pipeline.get("spec")
    envs = spec.get("environments") if isinstance(spec, dict) else None
    if not isinstance(envs, list):
        return []
    return [str(e.get("name")) for e in envs if isinstance(e, dict) and e.get("name") is not None]


def resolve_target(
    ref: PipelineRef,
    pipeline: dict[str, Any] | None,
    *,
    environment: str | None = None,
    from_environment: str | None = None,
) -> str:
    """The environment to promote to.

    With ``from_environment`` the target is the next entry of the Pipeline's
    ``spec.environments`` (first match wins, names compared exactly).  With ``environment``
    it is that environment, checked against the Pipeline when one is available.
    """
    if (environment is None) == (from_environment is None):
        raise PromoteError("give exactly one of environment and fromEnvironment")
    if from_environment is not None:
        if pipeline is None:
            raise PromoteError(f"Pipeline {ref} not found (needed to find the environment after {from_environment!r})")
        names = environment_names(pipeline)
        if from_environment not in names:
            raise PromoteError(f"app {ref} has no environment {from_environment} defined")
        position = names.index(from_environment)
        if position == len(names) - 1:
            raise PromoteError(f"cannot promote beyond last environment {from_environment}")
        return names[position + 1]
    assert environment is not None
    if pipeline is not None and environment not in environment_names(pipeline):
        raise PromoteError(f"app {ref} has no environment {environment} defined")
    return environment


PULL_REQUEST_KEYS = ("pull-request", "pullRequest")


def pull_request_promotion(pipeline: dict[str, Any], environment: str) -> tuple[str, dict[str, Any], str] | None:
    """The pull-request promotion a Pipeline sets for ``environment``, or None.

    Returned as (the field it is at, its mapping, the field its ``secretRef`` is at).

    The environment's own ``promotion`` wins over ``spec.promotion`` (pipeline-controller's
    ``GetPromotion``).  Both shapes are read: the released API's
    ``promotion.strategy.pull-request`` (with ``strategy.secretRef`` beside it, copied in when
    the block has none) and the RFC's ``promotion.pull-request``; ``pullRequest`` is accepted
    for either.
    """
    spec = pipeline.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    promotion, where = spec.get("promotion"), "spec.promotion"
    envs = spec.get("environments")
    for i, env in enumerate(envs if isinstance(envs, list) else []):
        if isinstance(env, dict) and env.get("name") == environment and isinstance(env.get("promotion"), dict):
            promotion, where = env["promotion"], f"spec.environments[{i}].promotion"
            break
    if not isinstance(promotion, dict):
        return None
    strategy = promotion.get("strategy")
    if isinstance(strategy, dict):
        for key in PULL_REQUEST_KEYS:
            block = strategy.get(key)
            if isinstance(block, dict):
                found, at = dict(block), f"{where}.strategy.{key}"
                if "secretRef" not in found and "secretRef" in strategy:
                    found["secretRef"] = strategy["secretRef"]
                    return at, found, f"{where}.strategy.secretRef"
                return at, found, f"{at}.secretRef"
    for key in PULL_REQUEST_KEYS:
        block = promotion.get(key)
        if isinstance(block, dict):
            return f"{where}.{key}", dict(block), f"{where}.{key}.secretRef"
    return None
