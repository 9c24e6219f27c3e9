"""A whole release in one ``krm-merge promote`` run: markers, image policies, kustomize images.

The expected tree under ``trees/release/expected`` is written by hand (not by the product).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.outcomes.schema_check import errors, load_schema
from krm_merge.commands.promote import main

from .harness import copy_tree, read_tree

TREES = Path(__file__).parent / "trees"
D1, D2, D3 = "sha256:" + "ab" * 32, "sha256:" + "cd" * 32, "sha256:" + "ef" * 32
RELEASE = [
    "--set", "default:podinfo:prod=6.3.0",
    "--image-policy", f"flux-system:frontend=ghcr.io/acme/frontend:1.1.0@{D1}",
    "--image-policy", f"flux-system:backend=ghcr.io/acme/backend:2.0.0@{D2}",
    "--image-policy", "flux-system:api=ghcr.io/acme/api:3.0.0",
    "--kustomize-image", "overlays/{environment.name}:api=ghcr.io/acme/api:3.0.0",
    "--kustomize-image", f"overlays/{{environment.name}}:worker=ghcr.io/acme/worker:1.4.2@{D3}",
    "--environment", "prod",
]


def test_release_byte_exact_then_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_tree(TREES / "release" / "input", tmp_path / "repo")
    report = tmp_path / "report.json"
    assert main([str(root), *RELEASE, "--report", "json", str(report)]) == 0
    assert read_tree(root) == read_tree(TREES / "release" / "expected")
    data = json.loads(report.read_text())
    assert not errors(data, load_schema())
    changes = [o for o in data["outcomes"] if o["kind"] == "fieldSet"]
    fields = {(c["file"], c["field"]): (c["old"], c["new"]) for c in changes}
    assert fields == {
        ("apps/prod/podinfo/release.yaml", "spec.chart.spec.version"): ("6.2.0", "6.3.0"),
        ("apps/prod/frontend/deploy.yaml", "spec.template.spec.containers[0].image"):
            ("ghcr.io/acme/frontend:1.0.0", f"ghcr.io/acme/frontend:1.1.0@{D1}"),
        ("apps/prod/frontend/deploy.yaml", "spec.template.spec.containers[0].env[0].value"): ("1.0.0", "1.1.0"),
        ("clusters/prod/Kustomization", "images[0].newTag"): ("1.0.0", "2.0.0"),
        ("clusters/prod/Kustomization", "images[0].digest"): ("sha256:" + "1" * 64, D2),
        ("patches/image-patch.yaml", "[0].value"): ("ghcr.io/acme/api:1.0.0", "ghcr.io/acme/api:3.0.0"),
        ("overlays/prod/kustomization.yaml", "images[0].newTag"): ("1.0.0", "3.0.0"),
        ("overlays/prod/kustomization.yaml", "images[1]"):
            (None, f"{{name: worker, newName: ghcr.io/acme/worker, newTag: 1.4.2, digest: {D3}}}"),
    }
    by_field = {c["field"]: c for c in changes}
    assert by_field["spec.chart.spec.version"]["line"] == 13
    assert by_field["spec.chart.spec.version"]["resource"] == {
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "podinfo", "namespace": "prod"}
    assert by_field["spec.chart.spec.version"]["source"] == '{"$promotion": "default:podinfo:prod"}'
    assert by_field["images[0].digest"]["source"] == '{"$imagepolicy": "default:backend:digest"}'.replace(
        "default", "flux-system")
    assert data["title"].startswith("promote: default/podinfo prod=6.3.0; image policy flux-system:frontend=")
    assert data["title"].endswith("(8 fields in 5 files)")  # a commit message
    err = capsys.readouterr().err
    assert "set: apps/prod/podinfo/release.yaml:13: spec.chart.spec.version: '6.2.0' -> '6.3.0'" in err
    # A second run changes nothing and reports nothing.
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    assert main([str(root), *RELEASE, "--report", "json", str(report)]) == 0
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()} == before
    assert [o for o in json.loads(report.read_text())["outcomes"] if o["kind"] == "fieldSet"] == []
    assert "->" not in capsys.readouterr().err


def test_dry_run_prints_diff_and_writes_the_markdown_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_tree(TREES / "release" / "input", tmp_path / "repo")
    report = tmp_path / "report.md"
    assert main([str(root), *RELEASE, "--dry-run", "--report", "markdown", str(report)]) == 0
    assert read_tree(root) == read_tree(TREES / "release" / "input")
    out = capsys.readouterr().out
    assert "+- name: worker" in out and '-            version: "6.2.0"' in out
    text = report.read_text()
    assert text.splitlines()[0].startswith("## promote: ") and "| file | line | resource |" in text
    assert ("| overlays/prod/kustomization.yaml | 10 | Kustomization (overlays/prod/kustomization.yaml) | `images[1]` "
            "| *(added)* |") in text  # a nameless kustomization, named by its file (issue 48)
    assert text not in out  # the diff is stdout's one document; the report went to its file
    assert main([str(root), *RELEASE, "--dry-run", "--report", "markdown", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## promote: ") and "+- name: worker" not in out  # a report on stdout, alone


def test_help_says_what_a_dry_run_writes() -> None:
    """--dry-run --report FILE writes FILE (above); the help must not promise otherwise."""
    from krm_merge.commands.promote import parser

    help_text = " ".join(parser().format_help().split())
    assert "change no file under DIR (a --report FILE is still written)" in help_text
    assert "write nothing" not in help_text


def test_conflicting_values_for_the_same_marker_name_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_tree(TREES / "release" / "input", tmp_path / "repo")
    code = main([str(root), "--set", "default:podinfo:prod=6.3.0", "--set", "default:podinfo:prod=6.4.0"])
    assert code == 1
    err = capsys.readouterr().err
    assert "default/podinfo prod=6.3.0" in err and "default/podinfo prod=6.4.0" in err
    assert read_tree(root) == read_tree(TREES / "release" / "input")


def test_conflict_between_a_marker_and_a_kustomize_image_on_one_field(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "o").mkdir()
    k = tmp_path / "o" / "kustomization.yaml"
    k.write_text('images:\n- name: api\n  newTag: 1.0.0 # {"$imagepolicy": "flux-system:api:tag"}\n')
    code = main([str(tmp_path), "--image-policy", "flux-system:api=ghcr.io/acme/api:2.0.0",
                 "--kustomize-image", "o:api=api:3.0.0"])
    assert code == 1
    err = capsys.readouterr().err
    assert "conflicting values for the same field" in err and "'2.0.0'" in err and "'3.0.0'" in err
    assert "o/kustomization.yaml" in err
    assert k.read_text().startswith("images:\n- name: api\n  newTag: 1.0.0 #")


def test_same_value_twice_is_no_conflict(tmp_path: Path) -> None:
    root = copy_tree(TREES / "release" / "input", tmp_path / "repo")
    assert main([str(root), "--set", "default:podinfo:prod=6.3.0", "--pipeline", "default/podinfo",
                 "--from-environment", "staging", "--value", "6.3.0"]) == 0
    assert b'version: "6.3.0"' in (root / "apps/prod/podinfo/release.yaml").read_bytes()


def test_each_promotion_must_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_tree(TREES / "release" / "input", tmp_path / "repo")
    assert main([str(root), "--set", "default:podinfo:prod=6.3.0", "--set", "default:other:prod=1"]) == 1
    err = capsys.readouterr().err
    assert 'no field found for marker {"$promotion": "default:other:prod"}' in err
    assert read_tree(root) == read_tree(TREES / "release" / "input")
    assert main([str(root), "--set", "default:podinfo:prod=6.3.0", "--set", "default:other:prod=1",
                 "--allow-no-match"]) == 0


def test_many_pipelines_in_one_run_small_scale(tmp_path: Path) -> None:
    """The bench's repository (5,000 files, 200 markers, 20 pipelines) at a small scale."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        import cases_promote as bench
    finally:
        sys.path.pop(0)
    expected = bench.build_repo(tmp_path, files=120, markers=30, pipelines=6)
    assert main([str(tmp_path), *bench.set_options(6)]) == 0
    bench.check_tree(tmp_path, expected, "krm-merge promote")
    changed = sum(1 for rel, text in expected.items() if "@sha256:" in text)
    assert changed == 30


@pytest.mark.parametrize("argv,message", [
    (["--set", "default:podinfo=6.3.0"], "--set takes NS:PIPELINE:ENV=VALUE"),
    (["--set", "default:podinfo:prod"], "--set takes NS:PIPELINE:ENV=VALUE"),
    (["--image-policy", "flux-system:web=not an image"], "not an image reference"),
    (["--kustomize-image", "api=ghcr.io/a/api:1"], "--kustomize-image takes DIR:NAME=IMAGE_REF"),
    (["--value", "1"], "--value goes with --pipeline"),
    ([], "nothing to promote"),
    (["--image-policy", "a:b", "--image-policy", "c:d", "--value", "x:1"], "--value serves one"),
])
def test_malformed_options_are_usage_errors(argv: list[str], message: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path), *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_kustomize_image_template_needs_an_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--kustomize-image", "overlays/{environment.name}:api=api:1"]) == 1
    assert "unknown placeholder {environment.name}" in capsys.readouterr().err


def test_typed_promotions_errors_name_the_entry() -> None:
    from krm_merge.config import ConfigError
    from krm_merge.modes import promote as mode

    with pytest.raises(ConfigError) as info:
        mode.config_from_typed({"promotions": [{"pipeline": "a/b", "environment": "x", "value": "1"},
                                               {"imagePolicy": "ns:p"}]})
    assert info.value.key == "spec.promotions[1].value"
    with pytest.raises(ConfigError) as info:
        mode.config_from_typed({"promotions": [{"strategy": "kustomize-image", "value": "a:1", "pathTemplate": "o"}]})
    assert info.value.key == "spec.promotions[0].image"
    with pytest.raises(ConfigError) as info:
        mode.config_from_typed({"value": "1", "promotions": [{"imagePolicy": "ns:p", "value": "a:1"}]})
    assert info.value.key == "spec.promotions"
    with pytest.raises(ConfigError) as info:
        mode.config_from_typed({"promotions": []})
    assert info.value.key == "spec.promotions"


def test_conflict_through_overlapping_path_scopes_is_reported_per_file() -> None:
    from krm_merge.runner import run_function

    from .harness import resource_list

    item = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
            "    config.kubernetes.io/path: apps/prod/c.yaml\n"
            'data:\n  v: 1 # {"$promotion": "ns:app:prod"}\n')
    config = {"promotions": "- {pipeline: ns/app, environment: prod, value: '2', pathTemplate: apps}\n"
                            "- {pipeline: ns/app, environment: prod, value: '3', pathTemplate: apps/prod}\n"}
    out, code = run_function(resource_list([item], config))
    assert code == 1
    assert "conflicting promotions for marker 'ns:app:prod': ns/app prod=2 and ns/app prod=3" in out


def test_typed_promotions_values_are_taken_as_written() -> None:
    from krm_merge.runner import run_function

    rl = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
          "  metadata:\n    name: c\n  data:\n"
          '    a: 1 # {"$promotion": "ns:app:prod"}\n    b: 1 # {"$promotion": "ns:app:dev"}\n'
          "functionConfig:\n  apiVersion: fn.krm-merge.dev/v1alpha1\n  kind: Promote\n  metadata: {name: p}\n"
          "  spec:\n    promotions:\n    - pipeline: ns/app\n      environment: prod\n      value: 1.10\n"
          "    - {pipeline: ns/app, environment: dev, value: 0123}\n")
    out, code = run_function(rl)
    assert code == 0
    assert '    a: "1.10" # {"$promotion": "ns:app:prod"}\n    b: "0123" #' in out
