"""Unit tests of the smaller promote pieces: image references, pipelines, strategies, files."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.commands.promote import main
from krm_merge.promote import strategies
from krm_merge.promote.engine import promote_text
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.imagepolicy import ImageRef, image_policy_setters, normalize_policy
from krm_merge.promote.pipeline import PipelineRef, resolve_target


@pytest.mark.parametrize("ref,name,tag,digest", [
    ("nginx", "nginx", "", ""),
    ("nginx:1.25", "nginx", "1.25", ""),
    ("localhost:5000/app", "localhost:5000/app", "", ""),
    ("localhost:5000/app:1.0", "localhost:5000/app", "1.0", ""),
    ("ghcr.io/a/b:v1@sha256:ab", "ghcr.io/a/b", "v1", "sha256:ab"),
    ("ghcr.io/a/b@sha256:ab", "ghcr.io/a/b", "", "sha256:ab"),
])
def test_image_ref(ref: str, name: str, tag: str, digest: str) -> None:
    parsed = ImageRef.parse(ref)
    assert (parsed.name, parsed.tag, parsed.digest) == (name, tag, digest)
    assert parsed.full == ref


@pytest.mark.parametrize("ref", ["", "app:", "app@", "a b:1", ":1"])
def test_bad_image_ref(ref: str) -> None:
    with pytest.raises(PromoteError):
        ImageRef.parse(ref)


def test_image_policy_setters() -> None:
    assert image_policy_setters("ns/p", "r/app:1") == {
        "ns:p": "r/app:1", "ns:p:name": "r/app", "ns:p:tag": "1", "ns:p:digest": None}
    assert normalize_policy("ns:p") == "ns:p"
    with pytest.raises(PromoteError):
        normalize_policy("p")


def test_pipeline_ref() -> None:
    assert PipelineRef.parse("ns/p") == PipelineRef.parse("ns:p") == PipelineRef("ns", "p")
    assert PipelineRef("ns", "p").marker("prod") == "ns:p:prod"
    for bad in ("p", "ns/", "/p", "a/b/c"):
        with pytest.raises(PromoteError):
            PipelineRef.parse(bad)


def test_resolve_target_first_match_wins() -> None:
    pipeline = {"spec": {"environments": [{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "c"}]}}
    ref = PipelineRef("ns", "p")
    assert resolve_target(ref, pipeline, from_environment="a") == "b"
    assert resolve_target(ref, pipeline, environment="c") == "c"
    assert resolve_target(ref, None, environment="anything") == "anything"


@pytest.mark.parametrize("path,pattern,selected", [
    ("apps/prod/podinfo/release.yaml", "apps/prod/podinfo", True),
    ("apps/prod/podinfo-extra/release.yaml", "apps/prod/podinfo", False),
    ("apps/prod/podinfo/release.yaml", "apps/prod/podinfo/release.yaml", True),
    ("apps/prod/podinfo/release.yaml", "./apps/prod/", True),
    ("apps/prod/podinfo/release.yaml", "apps/*/podinfo", True),
    ("apps/dev/other/release.yaml", "apps/*/podinfo", False),
    ("anything.yaml", ".", True),
])
def test_path_selected(path: str, pattern: str, selected: bool) -> None:
    assert strategies.path_selected(path, pattern) is selected


def test_selector() -> None:
    sel = strategies.parse_selector("app=podinfo, env!=dev, tier, !legacy")
    assert strategies.selector_matches(sel, {"app": "podinfo", "env": "prod", "tier": "web"})
    assert not strategies.selector_matches(sel, {"app": "podinfo", "env": "dev", "tier": "web"})
    assert not strategies.selector_matches(sel, {"app": "podinfo", "tier": "web", "legacy": "1"})
    with pytest.raises(PromoteError):
        strategies.parse_selector(" , ")


def test_field_paths_and_templates() -> None:
    assert strategies.parse_field_path('spec.containers[1].env[0]["a.b/c"]') == ("spec", "containers", 1, "env", 0, "a.b/c")
    assert strategies.render_template("apps/{environment.name}/{ application.name }",
                                      {"environment.name": "prod", "application.name": "x"}) == "apps/prod/x"
    with pytest.raises(PromoteError, match="unknown placeholder"):
        strategies.render_template("{nope}", {})


def test_byte_order_mark_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b'\xef\xbb\xbfv: 1 # {"$promotion": "a:b:c"}\n')
    assert main([str(tmp_path), "--pipeline", "a/b", "--environment", "c", "--value", "2.0.0"]) == 0
    assert path.read_bytes() == b'\xef\xbb\xbfv: 2.0.0 # {"$promotion": "a:b:c"}\n'


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "--from-environment" in capsys.readouterr().out


def test_crlf_literal_block_target() -> None:
    text = 'notes: | # {"$promotion": "a:b:c"}\r\n  old\r\nnext: 1\r\n'
    new = promote_text(text, "$promotion", {"a:b:c": "x\ny\n"}).text
    assert new == 'notes: | # {"$promotion": "a:b:c"}\r\n  x\r\n  y\r\nnext: 1\r\n'


def test_verification_catches_wrong_edits() -> None:
    from krm_merge.promote.document import parse_document
    from krm_merge.promote.edit import verify

    old = parse_document("a: 1\nc: &y z\nb: [x, *y]\n")
    node = old.roots[0].value[0][1]
    verify(old, "a: x\nc: &y z\nb: [x, *y]\n", {id(node): "x"})
    for wrong, want in (("a: 1.5\nc: &y z\nb: [x, *y]\n", "1.5"),  # a float, not the string "1.5"
                        ('a: "1.5"\nc: &y z\nb: [x, *y]\n', "x"),  # a string, but not the value
                        ('a: "x"\nc: &y z\nb: [x, z2]\n', "x"),  # something else changed
                        ('a: "x"\nc: &y z\n', "x")):  # structure lost
        with pytest.raises(PromoteError, match="internal error"):
            verify(old, wrong, {id(node): want})


@pytest.mark.parametrize(("text", "old", "new"), [
    ('\ufeffa: 1.0 # {"$promotion": "a:b:c"}\n', "1.0", "6.3.0"),
    # Found by the fuzzer: the splice landed one character early, before the colon.
    ('\ufeff!:\n(:\t# {"$promotion": "a:b:c"}\n', "(:", "(: 6.3.0"),
    ('x: 1\n---\n\ufeffa: 1.0 # {"$promotion": "a:b:c"}\n', "1.0", "6.3.0"),
    ('\ufeff\ufeff!:\n(:\t# {"$promotion": "a:b:c"}\n', "(:", "(: 6.3.0"),  # two of them (the fuzzer again)
])
def test_a_byte_order_mark_is_kept_and_does_not_shift_the_splice(text: str, old: str, new: str) -> None:
    """libyaml counts its marks from after a stream's leading BOM; the full path puts it back."""
    from krm_merge.promote.engine import Unit, promote_units
    from krm_merge.promote.request import parse_set, resolve

    resolved = resolve([parse_set("a:b:c=6.3.0")], lambda ref: None)
    outcome = promote_units([Unit(text, "f.yaml")], resolved)
    assert not outcome.errors, outcome.errors
    assert outcome.results[0].text == text.replace(old, new)
