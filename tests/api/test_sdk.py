"""``krm_merge.sdk``: reading, editing with comments kept, results, selection, run()."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from krm_merge import sdk
from krm_merge.sdk import KrmError, KubeObject, ResourceList, Selector, run_text

INPUT = textwrap.dedent("""\
    apiVersion: config.kubernetes.io/v1
    kind: ResourceList
    items:
    - # the web tier
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web # entry point
        labels:
          app: web
        annotations:
          config.kubernetes.io/path: web.yaml
      spec:
        replicas: 3 # scaled later
        paused: false
        template:
          spec:
            containers:
            - name: web
              image: nginx:1.27 # pinned
    - apiVersion: v1
      kind:   Service    # odd spacing, kept
      metadata:
        name: web
      spec:
        ports: [{port: 80}]
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: local
        annotations:
          config.kubernetes.io/local-config: "true"
    functionConfig:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: cfg
      data:
        replicas: "5"
    """)


def _items_text(out: str) -> list[str]:
    """The item blocks of a written ResourceList (to compare bytes per item)."""
    body = out.split("\nitems:\n", 1)[1].split("\nfunctionConfig:\n", 1)[0]
    return ["- " + block for block in ("\n" + body).split("\n- ")[1:]]


def test_read_gives_public_types_and_identity() -> None:
    rl = sdk.read_resource_list(INPUT)
    assert isinstance(rl, ResourceList)
    assert all(isinstance(item, KubeObject) for item in rl.items)
    assert isinstance(rl.function_config, KubeObject)
    web = rl.items[0]
    assert (web.api_version, web.group, web.version, web.kind, web.name) == ("apps/v1", "apps", "v1", "Deployment", "web")
    assert web.labels == {"app": "web"} and web.path == "web.yaml"
    assert [o.kind for o in rl] == ["Deployment", "Service", "ConfigMap"]


def test_untouched_run_is_byte_identical() -> None:
    out, code = run_text(lambda rl: None, INPUT)
    assert code == 0 and out == INPUT


def test_edits_keep_comments_and_untouched_items_keep_bytes() -> None:
    def edit(rl: ResourceList) -> None:
        (web,) = rl.select(kind="Deployment")
        web.set("spec.replicas", 5)
        web.set_label("app.kubernetes.io/name", "web")
        web.set_annotation("owner", "team-a")
        assert web.remove("spec.paused") is True
        assert web.remove("spec.nothing") is False

    out, code = run_text(edit, INPUT)
    assert code == 0
    before, after = _items_text(INPUT), _items_text(out)
    assert after[1:] == before[1:], "items the function did not touch must keep their bytes"
    web = after[0]
    for kept in ("# the web tier", "name: web # entry point", "image: nginx:1.27 # pinned"):
        assert kept in web
    assert "replicas: 5 # scaled later" in web, "the edited field keeps its comment"
    assert "app.kubernetes.io/name: web" in web and "owner: team-a" in web and "paused" not in web
    assert out.endswith(INPUT.split("\nfunctionConfig:\n", 1)[1])


def test_typed_getters() -> None:
    rl = sdk.read_resource_list(INPUT)
    web = rl.items[0]
    assert web.get("spec.replicas") == 3
    assert web.get_int("spec.replicas") == 3
    assert web.get_float("spec.replicas") == 3.0
    assert web.get_bool("spec.paused") is False
    assert web.get_str("spec.template.spec.containers[0].image") == "nginx:1.27"
    assert web.get_list("spec.template.spec.containers") == [{"name": "web", "image": "nginx:1.27"}]
    assert web.get_map("metadata.labels") == {"app": "web"}
    assert web.get_str(("metadata", "annotations", "config.kubernetes.io/path")) == "web.yaml"
    assert web.get_int("spec.missing", 7) == 7 and web.get_str("spec.missing") is None
    assert web.has("spec.paused") and not web.has("spec.missing")
    with pytest.raises(KrmError) as info:
        web.get_int("spec.paused")
    assert info.value.field == "spec.paused" and "must be an integer" in info.value.message
    with pytest.raises(KrmError, match="must be a string"):
        web.get_str("spec.replicas")
    assert rl.function_config is not None
    assert rl.function_config.get_str("data.replicas") == "5"


def test_selection() -> None:
    rl = sdk.read_resource_list(INPUT)
    assert [o.kind for o in rl.select()] == ["Deployment", "Service"]
    assert [o.kind for o in rl.select(include_local_config=True)] == ["Deployment", "Service", "ConfigMap"]
    assert [o.kind for o in rl.select(Selector(name="w.*"))] == ["Deployment", "Service"]
    assert [o.kind for o in rl.select(group="apps", labels={"app": "web"})] == ["Deployment"]
    with pytest.raises(TypeError):
        rl.select(Selector(kind="Service"), kind="Service")


def test_new_items_and_results() -> None:
    def add(rl: ResourceList) -> None:
        obj = KubeObject.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}})
        rl.add(obj)
        rl.results.warning("added", obj, field="metadata.name", current=None, proposed="new")
        rl.results.info("about the web service", rl.items[1])

    out, code = run_text(add, INPUT)
    assert code == 0
    written = yaml.safe_load(out)
    assert written["items"][-1] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}}
    assert written["results"] == [
        {"message": "added", "severity": "warning",
         "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "new"},
         "field": {"path": "metadata.name", "proposedValue": "new"}},
        {"message": "about the web service", "severity": "info",
         "resourceRef": {"apiVersion": "v1", "kind": "Service", "name": "web"}},
    ]


def test_krm_error_becomes_one_error_result_and_exit_1() -> None:
    def fail(rl: ResourceList) -> None:
        raise KrmError("replicas must be positive", rl.items[0], "spec.replicas", current=-1)

    out, code = run_text(fail, INPUT)
    assert code == 1
    (result,) = yaml.safe_load(out)["results"]
    assert result == {
        "message": "replicas must be positive", "severity": "error",
        "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "field": {"path": "spec.replicas", "currentValue": -1}, "file": {"path": "web.yaml"},
    }
    assert _items_text(out) == _items_text(INPUT)


def test_a_crash_is_an_error_result_naming_the_function_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def buggy(rl: ResourceList) -> None:
        rl.items[0].set("spec.replicas", 9)
        {}["missing"]  # noqa: B018

    out, code = run_text(buggy, INPUT)
    assert code == 1
    (result,) = yaml.safe_load(out)["results"]
    assert result["severity"] == "error"
    assert result["message"].startswith("internal error in buggy: KeyError: 'missing' (at test_sdk.py:")
    assert "Traceback" not in out and not capsys.readouterr().err
    monkeypatch.setenv("KRM_FN_TRACEBACK", "1")  # the author's traceback on stderr, the output unchanged
    assert run_text(buggy, INPUT) == (out, 1)
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n") and ', in buggy\n' in err
    assert err.endswith("KeyError: 'missing'\n")


def test_error_results_reported_by_the_function_give_exit_1() -> None:
    out, code = run_text(lambda rl: rl.results.error("bad", rl.items[0]), INPUT)
    assert code == 1 and yaml.safe_load(out)["results"][0]["message"] == "bad"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no input"),
        (b"\xff\xfe", "not UTF-8"),
        ("apiVersion: v1\nkind: Pod\n", "not a ResourceList"),
    ],
)
def test_unreadable_input_is_one_error_result(text: str | bytes, message: str) -> None:
    out, code = run_text(lambda rl: None, text)
    assert code == 1
    written = yaml.safe_load(out)
    assert written["items"] == [] and message in written["results"][0]["message"]


def test_run_as_a_program_reads_stdin_and_handles_a_directory(tmp_path: Path) -> None:
    script = tmp_path / "fn.py"
    script.write_text(textwrap.dedent("""\
        from krm_merge.sdk import run

        def scale(rl):
            replicas = rl.function_config.get_int("spec.replicas") if rl.function_config else None
            for obj in rl.select(kind="Deployment"):
                obj.set("spec.replicas", int(rl.function_config.get_str("data.replicas")))
                rl.results.info("scaled", obj)

        run(scale)
        """))
    piped = subprocess.run([sys.executable, str(script)], input=INPUT, capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert "replicas: 5 # scaled later" in piped.stdout and piped.stderr == ""

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    deployment = "# head\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1 # one\n"
    service = "apiVersion: v1\nkind:   Service\nmetadata:\n  name: web\n"
    (pkg / "d.yaml").write_text(deployment)
    (pkg / "s.yaml").write_text(service)
    dry = subprocess.run([sys.executable, str(script), str(pkg), "--dry-run", "--", "replicas=4"],
                         capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert "+  replicas: 4 # one" in dry.stdout and (pkg / "d.yaml").read_text() == deployment
    assert "[info] Deployment/web: scaled" in dry.stderr
    done = subprocess.run([sys.executable, str(script), str(pkg), "--", "replicas=4"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (pkg / "d.yaml").read_text() == deployment.replace("replicas: 1", "replicas: 4")
    assert (pkg / "s.yaml").read_text() == service
    failed = subprocess.run([sys.executable, str(script), str(pkg), "--", "replicas=many"],
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "ValueError" in failed.stderr and "Traceback" not in failed.stderr
    assert "no file was changed" in failed.stderr


def test_yaml_helpers() -> None:
    assert sdk.load_yaml("a: 1\nb: [x, 'y']\n") == {"a": 1, "b": ["x", "y"]}
    assert sdk.load_all_yaml("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]
    assert sdk.load_yaml(sdk.dump_yaml({"on": "yes", "n": "1"})) == {"on": "yes", "n": "1"}
    with pytest.raises(KrmError, match="data.patch"):
        sdk.load_yaml("a: [", "data.patch")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi"))
    with pytest.raises(KrmError):
        sdk.load_yaml(bomb)


def test_the_module_docstring_example_works() -> None:
    block = sdk.__doc__.split("::\n\n", 1)[1].split("\nWhat you get", 1)[0]  # type: ignore[union-attr]
    namespace: dict[str, object] = {"__name__": "example"}
    exec(textwrap.dedent(block), namespace)  # noqa: S102 - our own documentation
    set_team = namespace["set_team"]
    config = INPUT.replace('replicas: "5"', "team: blue")
    out, code = run_text(set_team, config)  # type: ignore[arg-type]
    assert code == 0 and "      team: blue\n" in _items_text(out)[0]
    out, code = run_text(set_team, INPUT)  # type: ignore[arg-type]
    assert code == 1 and "data.team is required" in out
