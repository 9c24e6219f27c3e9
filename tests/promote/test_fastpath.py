"""The fast path is an optimisation, never a second set of rules.

Wherever :mod:`krm_merge.promote.fastpath` takes a document, the full (libyaml) path must
give the same text, the same changes and the same match counts; wherever the full path would
raise or report a malformed marker, the fast path must not take the document.  And the fast
path must actually be taken on the files it exists for.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm import fastyaml
from krm_merge.yaml import libyaml
from krm_merge.promote import fastpath, fullpath
from krm_merge.promote.document import parse_document
from krm_merge.promote.errors import PromoteError
from tests.promote.test_properties import (INJECTIONS, OLD_FORMS, _data, _doc, _keys, _nasty, _text,
                                           add_marker_comments, assume_valid_yaml)

KEY = "$promotion"
OTHER = "$imagepolicy"


def _setters(values: dict[str, str | None], key: str = KEY) -> dict[str, dict[str, Any]]:
    return {key: {marker: (value, (i,), marker) for i, (marker, value) in enumerate(sorted(values.items()))}}


def _full(text: str, keys: list[str], setters: dict[str, dict[str, Any]]) -> object:
    matched = [0] * 8
    try:
        new, changes, malformed = fullpath.promote_chunk(parse_document(text, keys), keys, setters, [], matched)
    except PromoteError as err:
        return ("error", err.message)
    return new, changes, malformed, matched


def _agree(text: str, keys: list[str], setters: dict[str, dict[str, Any]]) -> bool:
    """Assert both paths agree where the fast path takes ``text``; True when it took it."""
    fast = fastpath.promote_chunk(text, keys, setters)
    if fast is None:
        return False
    full = _full(text, keys, setters)
    assert full[0] != "error", f"the fast path took a document the full path refuses: {full}"
    new, changes, malformed, matched = full  # type: ignore[misc]
    assert fast.text == new
    assert fast.changes == changes
    assert malformed == []
    counted = [0] * 8
    for indices in fast.matches:
        for i in indices:
            counted[i] += 1
    assert counted == matched
    if fast.changes:
        assert fast.text is not text
    else:
        assert fast.text is text
    return True


# ----------------------------------------------------------------- it is taken where it should be

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: team
spec:
  template:
    spec:
      containers:
      - name: app
        image: registry.example.net/app:1.0.0 # {"$promotion": "ns:app:prod"}
      - name: sidecar
        image: 'busybox:1.36'  # {"$promotion": "ns:side:prod"}
        args:
          - "--level" # {"$promotion": "ns:level:prod"}
"""


def test_the_fast_path_takes_the_common_shapes_and_agrees() -> None:
    setters = _setters({"ns:app:prod": "registry.example.net/app:2.0.0@sha256:" + "a" * 64,
                        "ns:side:prod": "busybox:1.37", "ns:level:prod": "--level=debug"})
    assert _agree(DEPLOYMENT, [KEY], setters)
    fast = fastpath.promote_chunk(DEPLOYMENT, [KEY], setters)
    assert fast is not None
    assert [c.path for c in fast.changes] == ["spec.template.spec.containers[0].image",
                                              "spec.template.spec.containers[1].image",
                                              "spec.template.spec.containers[1].args[0]"]
    assert {c.resource for c in fast.changes} == {"Deployment/team/app"}
    # Quote styles are kept, comments and spacing stay.
    assert "image: 'busybox:1.37'  # {" in fast.text and '- "--level=debug" # {' in fast.text


def test_already_current_fields_count_as_matches_without_a_change() -> None:
    setters = _setters({"ns:app:prod": "registry.example.net/app:1.0.0"})
    fast = fastpath.promote_chunk(DEPLOYMENT, [KEY], setters)
    assert fast is not None and fast.text is DEPLOYMENT and fast.changes == [] and fast.matches == [(0,)]
    assert _agree(DEPLOYMENT, [KEY], setters)


def test_two_marker_keys_report_in_the_full_paths_order() -> None:
    text = ('a: 1 # {"$promotion": "ns:a:prod"}\n'
            'b: x # {"$imagepolicy": "ns:pol"}\n'
            'c: 2 # {"$promotion": "ns:c:prod"}\n')
    setters = {**_setters({"ns:a:prod": "A", "ns:c:prod": "C"}), **_setters({"ns:pol": "img:1"}, OTHER)}
    assert _agree(text, [OTHER, KEY], setters)


@pytest.mark.parametrize("text", [
    '# {"$promotion": "ns:app:prod"}\nimage: a:1\n',  # head comment
    'image: # {"$promotion": "ns:app:prod"}\n',  # empty value
    'image: [a, b] # {"$promotion": "ns:app:prod"}\n',  # flow
    'image: |  # {"$promotion": "ns:app:prod"}\n  a:1\n',  # block scalar
    'image: a:1 # {"$promotion": ns:app:prod}\n',  # malformed marker
    "image: a:1 # $promotion\n",  # not a marker at all
    'image: $promotion # {"$promotion": "ns:app:prod"}\n',  # the key outside the comment
    'when: 2024-01-01 # {"$promotion": "ns:app:prod"}\n',  # a timestamp to libyaml
    'base: &b x\nimage: a:1 # {"$promotion": "ns:app:prod"}\n',  # anchors
    '1: a:1 # {"$promotion": "ns:app:prod"}\n',  # a key that is not a string
    "image: a:1\t# tab\n",  # outside the fast reader's subset (no marker needed to leave)
    'kind: 7\nimage: a:1 # {"$promotion": "ns:app:prod"}\n',  # resource named from the raw text
])
def test_what_the_fast_path_leaves_to_the_full_path(text: str) -> None:
    setters = _setters({"ns:app:prod": "b:2"})
    if KEY in text:
        assert fastpath.promote_chunk(text, [KEY], setters) is None


def test_a_setter_that_cannot_be_served_is_left_to_the_full_path_which_raises() -> None:
    setters = _setters({"ns:app:prod": None})
    text = 'image: a:1 # {"$promotion": "ns:app:prod"}\n'
    assert fastpath.promote_chunk(text, [KEY], setters) is None
    assert _full(text, [KEY], setters)[0] == "error"


# ------------------------------------------------------------------------ property: both agree


@pytest.mark.parametrize("form", sorted(OLD_FORMS))
@pytest.mark.parametrize("value", INJECTIONS, ids=repr)
def test_injections_agree(form: str, value: str) -> None:
    text, _, _ = _doc(OLD_FORMS[form])
    took = _agree(text, [KEY], _setters({"ns:app:prod": value}))
    if form in ("plain-text", "single", "double") and "\t" not in value and "\r" not in value:
        assert took, "the fast path should take a one-line scalar marked on its line"


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.dictionaries(_keys, _data, min_size=1, max_size=6),
    value=st.one_of(_text, _nasty),
    where=st.lists(st.tuples(st.integers(min_value=0), st.sampled_from(["line", "head", "other"])),
                   min_size=1, max_size=4),
    indent=st.sampled_from([2, 4]),
)
def test_generated_documents_agree(data: dict, value: str, where: list[tuple[int, str]], indent: int) -> None:
    text = yaml.safe_dump(data, default_flow_style=False, width=10_000, indent=indent, allow_unicode=True,
                          sort_keys=False)
    markers = {"line": '{"$promotion": "ns:app:prod"}', "head": '{"$promotion": "ns:app:prod"}',
               "other": '{"$promotion": "ns:other:prod"}'}
    marked = add_marker_comments(text, [(n, how == "head", markers[how]) for n, how in where])
    assume_valid_yaml(marked)
    _agree(marked, [KEY], _setters({"ns:app:prod": value, "ns:other:prod": "other"}))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(_keys, _data, min_size=1, max_size=6), value=st.one_of(_text, _nasty),
       choice=st.integers(min_value=0))
@example(data={"0": [""]}, value="0001-01-01", choice=1)  # a date stays a string
@example(data={"0": [""]}, value="0000-00-00", choice=1)  # not a date at all
def test_reread_line_is_the_whole_documents_check(data: dict, value: str, choice: int) -> None:
    """reread_scalar_line(old, new) == v  implies  the text with the line replaced loads as data with v."""
    text = yaml.safe_dump(data, default_flow_style=False, width=10_000, allow_unicode=True, sort_keys=False)
    parsed = fastyaml.parse(text)
    assume(parsed is not None)
    lines = text.split("\n")
    i = choice % len(lines)
    line = lines[i]
    for cut in (line.find(": ") + 2, line.find("- ") + 2):
        if cut < 2:
            continue
        new_line = line[:cut] + value
        reread = fastyaml.reread_scalar_line(line, new_line)
        if reread is fastyaml.NOTHING:
            continue
        new_text = "\n".join(lines[:i] + [new_line] + lines[i + 1:])
        again = fastyaml.parse(new_text)
        assert again is not None
        # The oracle is the project's libyaml loader: Kubernetes' scalar rules, dates kept as strings
        # (PyYAML's own would read `0001-01-01` as a date and refuse `0000-00-00`).
        assert yaml.load(new_text, Loader=libyaml.Loader) == again.data
        # Only that value changed: put the old one back and the data is the original.
        assert fastyaml.reread_scalar_line(new_line, line) is not fastyaml.NOTHING


CORPUS = sorted(p for p in (Path(__file__).parents[1] / "realworld" / "corpus").rglob("*.yaml")) + sorted(
    p for p in (Path(__file__).parent / "trees").rglob("*.yaml"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(Path(__file__).parents[1])))
def test_the_corpus_agrees(path: Path) -> None:
    """Every marked document of the real-world and release trees, with every marker it holds set."""
    from krm_merge.promote.changes import split_stream
    from krm_merge.promote.markers import parse_marker_object

    text = path.read_text(encoding="utf-8")
    for key in (KEY, OTHER):
        if key not in text:
            continue
        markers = set()
        for line in text.splitlines():
            if "#" in line and key in line:
                parsed = parse_marker_object(line[line.index("#"):])
                if parsed and key in parsed:
                    markers.add(parsed[key])
        setters = _setters({m: f"promoted-{n}:1.2.3" for n, m in enumerate(sorted(markers))}, key)
        for _, chunk in split_stream(text) or [(0, text)]:
            if key in chunk:
                _agree(chunk, [key], setters)


def test_a_command_run_over_plain_files_never_loads_the_yaml_library(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(DEPLOYMENT)
    code = ("import sys; from krm_merge.cli import main; "
            f"rc = main(['promote', {str(tmp_path)!r}, '--set', 'ns:app:prod=a:2', '--allow-no-match']); "
            "print('yaml' in sys.modules); sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"
    assert "image: a:2 # {" in (tmp_path / "app.yaml").read_text()
