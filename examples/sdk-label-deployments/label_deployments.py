"""A KRM function written only against krm_merge.sdk: set a label on every Deployment.

functionConfig: a ConfigMap (``kpt fn eval --exec ... -- key=team value=blue``)
whose ``data.key`` and ``data.value`` name the label.  Every Deployment that
does not carry it yet gets it, and each change is reported as an info result
naming the Deployment, the field and the old and new values.  Everything else
keeps its bytes, comments included.
"""

from __future__ import annotations

from krm_merge.sdk import KrmError, ResourceList, run


def label_deployments(rl: ResourceList) -> None:
    """Set the configured label on every Deployment and report each change."""
    config = rl.function_config
    if config is None:
        raise KrmError("a functionConfig with data.key and data.value is required")
    key = config.get_str("data.key")
    value = config.get_str("data.value")
    if not key:
        raise KrmError("data.key is required: the label to set", config, "data.key")
    if value is None:
        raise KrmError(f"data.value is required: the value of label {key}", config, "data.value")
    for deployment in rl.select(kind="Deployment"):
        current = deployment.labels.get(key)
        if current == value:
            continue
        deployment.set_label(key, value)
        rl.results.info(
            f"set label {key}={value}" + (f" (was {current})" if current is not None else ""),
            deployment,
            field=f"metadata.labels.{key}",
            current=current,
            proposed=value,
        )


if __name__ == "__main__":
    run(label_deployments)
