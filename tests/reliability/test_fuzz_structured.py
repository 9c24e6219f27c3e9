"""Structured fuzzing of every entry point: nothing escapes as a traceback.

Every generated input must end as a clean run (see :mod:`.harness`): a
ResourceList with results, exit code 0 or 1, no internal error.  The number
of examples per test is ``KRM_MERGE_FUZZ_EXAMPLES`` (default 40, so the whole
file stays around half a minute in CI); raise it for a deeper local run.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from . import harness
from .harness import Unclean, configmap, known_bug, resource_list, typed
from .strategies import (
    PIPELINE, NASTY_STRINGS, key_text, kptfiles, krm_objects, marked_documents, nasty_text, patch_bodies,
    values, yaml_text,
)

EXAMPLES = int(os.environ.get("KRM_MERGE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true",
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

MODE_KEYS = {
    "reorder-merge": ("patch", "serverOnlyItems", "desired", "mergeKeys"),
    "pipeline-merge": ("origin", "upstream", "conflicts", "localPrefix", "originPrefix", "upstreamPrefix"),
    "resource-merge": ("strategy", "conflicts", "fallbackKeys", "localPrefix", "originPrefix", "upstreamPrefix"),
    "promote": ("pipeline", "environment", "fromEnvironment", "value", "allowNoMatch", "imagePolicy", "strategy",
                "pathTemplate", "labelSelector", "annotationSelector", "fieldPath", "application"),
}
KINDS = {"reorder-merge": "ReorderMerge", "pipeline-merge": "PipelineMerge", "resource-merge": "ResourceMerge",
         "promote": "Promote"}
GOOD_VALUES = {
    "serverOnlyItems": ["interleave", "first"], "conflicts": ["upstream-wins", "local-wins", "fail"],
    "strategy": ["resource-merge", "fast-forward", "force-delete-replace", "markers", "path", "labels"],
    "pipeline": ["default/podinfo", "podinfo", "a/b/c"], "environment": ["prod", "dev", "nope"],
    "fromEnvironment": ["dev", "prod"], "imagePolicy": ["flux-system:podinfo", "flux-system/podinfo", ":"],
    "pathTemplate": ["apps/{environment.name}/{application.name}", "../{environment.name}", "/etc", "{x}"],
    "allowNoMatch": ["true", "false", "maybe"], "localPrefix": ["local", "../x", "a/b", ""],
    "fieldPath": ["spec.chart.spec.version", "a[", "[0]", ".."],
}


def check_function(text: str) -> None:
    """The harness check, skipping inputs that hit an already reported bug."""
    try:
        harness.check_function(text)
    except Unclean as err:
        reject_if_known(err)


def run_command(main: Any, argv: list[str]) -> None:
    try:
        harness.run_command(main, argv)
    except Unclean as err:
        reject_if_known(err)


def reject_if_known(err: Unclean) -> None:
    if known_bug(str(err)) is None:
        raise err
    reject()


def config_value(key: str) -> st.SearchStrategy[str]:
    return st.sampled_from(GOOD_VALUES.get(key, ["x"])) | nasty_text


@st.composite
def configmap_data(draw: st.DrawFn, mode: str) -> dict[str, str]:
    keys = draw(st.lists(st.sampled_from(MODE_KEYS[mode]) | key_text, max_size=5, unique=True))
    data = {"mode": mode}
    for key in keys:
        data[key] = draw(config_value(key))
    return data


items_strategy = st.lists(krm_objects(), max_size=4)


@FUZZ
@given(st.data())
def test_resource_list_reader_with_any_items_and_layout(data: st.DataObject) -> None:
    objs = data.draw(st.lists(krm_objects() | values(6), max_size=4))
    mode = data.draw(st.sampled_from(sorted(MODE_KEYS)))
    fc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": data.draw(configmap_data(mode))}
    whole = {"apiVersion": data.draw(st.sampled_from(["config.kubernetes.io/v1", "v1", "x"])),
             "kind": data.draw(st.sampled_from(["ResourceList", "List", "Other"])), "items": objs,
             "functionConfig": fc}
    if data.draw(st.booleans()):
        text = data.draw(yaml_text(whole))
    else:
        text = resource_list([data.draw(yaml_text(o)) for o in objs], configmap(fc["data"]))
    check_function(text)


@FUZZ
@given(st.data())
def test_configmap_config_parsers(data: st.DataObject) -> None:
    mode = data.draw(st.sampled_from(sorted(MODE_KEYS)))
    items = [yaml.dump(o, Dumper=yaml.CSafeDumper, sort_keys=False) for o in data.draw(items_strategy)]
    check_function(resource_list(items, configmap(data.draw(configmap_data(mode)))))


@FUZZ
@given(st.data())
def test_typed_config_parsers(data: st.DataObject) -> None:
    mode = data.draw(st.sampled_from(sorted(MODE_KEYS)))
    keys = data.draw(st.lists(st.sampled_from(MODE_KEYS[mode] + ("patches",)) | key_text, max_size=4, unique=True))
    spec: Any = {key: data.draw(config_value(key) | values(6)) for key in keys}
    if data.draw(st.integers(0, 9)) == 0:
        spec = data.draw(values(4))
    items = [yaml.dump(o, Dumper=yaml.CSafeDumper, sort_keys=False) for o in data.draw(items_strategy)]
    check_function(resource_list(items, typed(KINDS[mode], spec)))


@FUZZ
@given(st.lists(krm_objects(), min_size=1, max_size=3), st.lists(patch_bodies(), min_size=1, max_size=3),
       st.booleans(), st.sampled_from(["interleave", "first"]))
def test_strategic_merge_patches(objs: list[dict], patches: list[dict], typed_form: bool, server_only: str) -> None:
    # Aim most patches at an existing item so the SMP engine really runs.
    for n, patch in enumerate(patches):
        target = objs[n % len(objs)]
        for key in ("apiVersion", "kind"):
            patch[key] = target[key]
        if isinstance(patch.get("metadata"), dict) and isinstance(target.get("metadata"), dict):
            patch["metadata"]["name"] = target["metadata"].get("name")
            patch["metadata"].pop("namespace", None)
            if "namespace" in target["metadata"]:
                patch["metadata"]["namespace"] = target["metadata"]["namespace"]
    items = [yaml.dump(o, Dumper=yaml.CSafeDumper, sort_keys=False) for o in objs]
    if typed_form:
        fc = typed("ReorderMerge", {"patches": [{"patch": p, "optional": True} for p in patches],
                                    "serverOnlyItems": server_only})
    else:
        text = yaml.dump_all(patches, Dumper=yaml.CSafeDumper, sort_keys=False)
        fc = configmap({"mode": "reorder-merge", "patch": text, "serverOnlyItems": server_only})
    check_function(resource_list(items, fc))


@FUZZ
@given(st.lists(krm_objects(), max_size=3), st.lists(krm_objects(), max_size=3))
def test_kubectl_apply_desired(objs: list[dict], desired: list[dict]) -> None:
    items = [yaml.dump(o, Dumper=yaml.CSafeDumper, sort_keys=False) for o in objs]
    fc = configmap({"mode": "reorder-merge", "desired": yaml.dump_all(desired + objs[:1], Dumper=yaml.CSafeDumper)})
    check_function(resource_list(items, fc))


@FUZZ
@given(kptfiles(), kptfiles(), kptfiles(), st.sampled_from(["upstream-wins", "local-wins", "fail"]), st.booleans())
def test_kptfile_pipeline_merge(local: dict, origin: dict, upstream: dict, conflicts: str, in_config: bool) -> None:
    dump = lambda d: yaml.dump(d, Dumper=yaml.CSafeDumper, sort_keys=False)  # noqa: E731
    if in_config:
        items = [dump(local)]
        fc = configmap({"mode": "pipeline-merge", "origin": dump(origin), "upstream": dump(upstream),
                        "conflicts": conflicts})
    else:
        items = [_with_path(local, "local/Kptfile"), _with_path(origin, "origin/Kptfile"),
                 _with_path(upstream, "upstream/Kptfile")]
        fc = configmap({"mode": "pipeline-merge", "conflicts": conflicts})
    check_function(resource_list(items, fc))


def _with_path(obj: dict, path: str) -> str:
    obj = json.loads(json.dumps(obj))
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    ann = meta.get("annotations")
    if not isinstance(ann, dict):
        ann = meta["annotations"] = {}
    ann["internal.config.kubernetes.io/path"] = path
    ann["config.kubernetes.io/path"] = path
    return yaml.dump(obj, Dumper=yaml.CSafeDumper, sort_keys=False)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["local", "origin", "upstream"]), krm_objects()), max_size=6),
       st.sampled_from(["resource-merge", "fast-forward", "force-delete-replace"]),
       st.sampled_from(["upstream-wins", "local-wins", "fail"]))
def test_resource_merge(entries: list[tuple[str, dict]], strategy: str, conflicts: str) -> None:
    items = [_with_path(obj, f"{side}/{n % 2}.yaml") for n, (side, obj) in enumerate(entries)]
    fc = configmap({"mode": "resource-merge", "strategy": strategy, "conflicts": conflicts})
    check_function(resource_list(items, fc))


@FUZZ
@given(st.lists(marked_documents(), min_size=1, max_size=3), st.sampled_from(["prod", "dev"]),
       st.sampled_from(["6.3.0", "a\nb", "x: y", "#c", "---", "'\"", ""]) | nasty_text, st.booleans())
def test_promotion_markers(docs: list[str], env: str, value: str, image_policy: bool) -> None:
    data = {"mode": "promote", "value": value}
    if image_policy:
        data["imagePolicy"] = "flux-system:podinfo"
    else:
        data.update({"pipeline": "default/podinfo", "environment": env})
    check_function(resource_list([PIPELINE, *docs], configmap(data)))


# --- the CLI on directories ------------------------------------------------------

file_names = st.sampled_from(["a.yaml", "b.yml", "Kptfile", "sub/c.yaml", "Kustomization", "x.txt"])


@st.composite
def package_files(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    for name in draw(st.lists(file_names, max_size=4, unique=True)):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            files[name] = draw(marked_documents())
        elif kind == 1:
            files[name] = "---\n".join(yaml.dump(o, Dumper=yaml.CSafeDumper, sort_keys=False)
                                       for o in draw(st.lists(krm_objects(), min_size=1, max_size=2)))
        elif kind == 2:
            files[name] = yaml.dump(draw(kptfiles()), Dumper=yaml.CSafeDumper, sort_keys=False)
        else:
            files[name] = draw(st.sampled_from(NASTY_STRINGS) | st.text(max_size=80))
    return files


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass") if "\ud800" not in text else path.write_bytes(
            text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(package_files(), st.sampled_from(["run", "promote", "promote-ip"]), nasty_text, st.booleans())
def test_commands_on_directories(files: dict[str, str], command: str, value: str, dry_run: bool) -> None:
    from krm_merge.commands import promote as promote_cmd
    from krm_merge.commands import run as run_cmd

    tmp = Path(tempfile.mkdtemp(prefix="krm-rel-"))
    try:
        _write_tree(tmp, files)
        (tmp / "pipeline.yaml").write_text(PIPELINE)
        extra = ["--dry-run"] if dry_run else []
        if command == "run":
            run_command(run_cmd.main, [str(tmp), *extra, "--", "mode=promote", "pipeline=default/podinfo",
                                       "environment=prod", f"value={value}"])
        elif command == "promote":
            run_command(promote_cmd.main, [str(tmp), "--pipeline", "default/podinfo", "--environment", "prod",
                                           "--value", value, *extra])
        else:
            run_command(promote_cmd.main, [str(tmp), "--image-policy", "flux-system:podinfo", "--value", value, *extra])
    finally:
        shutil.rmtree(tmp)


@FUZZ
@given(package_files(), package_files(), package_files(), st.sampled_from(["resource-merge", "fast-forward"]))
def test_update_command_on_directories(local: dict[str, str], origin: dict[str, str], upstream: dict[str, str],
                                       strategy: str) -> None:
    from krm_merge.commands import update as update_cmd

    tmp = Path(tempfile.mkdtemp(prefix="krm-rel-"))
    try:
        for name, files in (("local", local), ("origin", origin), ("upstream", upstream)):
            (tmp / name).mkdir()
            _write_tree(tmp / name, files)
        run_command(update_cmd.main, [str(tmp / "local"), "--origin", str(tmp / "origin"), "--upstream",
                                      str(tmp / "upstream"), "--strategy", strategy])
    finally:
        shutil.rmtree(tmp)


@FUZZ
@given(st.lists(krm_objects() | values(4), min_size=2, max_size=3), st.booleans(), st.booleans())
def test_diff_command_on_files(objs: list[Any], current: bool, raw: bool) -> None:
    from krm_merge.commands import diff as diff_cmd

    tmp = Path(tempfile.mkdtemp(prefix="krm-rel-"))
    try:
        paths = []
        for n, obj in enumerate(objs):
            path = tmp / f"{n}.yaml"
            text = obj if raw and isinstance(obj, str) else yaml.dump(obj, Dumper=yaml.CSafeDumper, sort_keys=False)
            path.write_text(text if isinstance(text, str) else str(text), encoding="utf-8", errors="surrogatepass")
            paths.append(str(path))
        argv = paths[:2] + (["--current", paths[2]] if current and len(paths) > 2 else [])
        run_command(diff_cmd.main, argv)
    finally:
        shutil.rmtree(tmp)
