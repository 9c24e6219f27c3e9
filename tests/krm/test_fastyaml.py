"""The fast line parser and splicing editor (krm_merge.krm.fastyaml).

1. Whatever the fast parser accepts, it reads exactly as ``yamlio.load_data``.
2. Where the fast editor accepts an edit, its content lines are identical
   to the ruamel.yaml path's (on documents ruamel reprints unchanged).  Comment
   lines are compared apart: ruamel ties a comment line to the entry *above*
   it, the fast editor to the entry it heads (issue #14), see
   tests/krm/test_comment_attachment.py.
3. The edited text always reads back as exactly the new data.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm import fastyaml, yamlio
from krm_merge.yaml import scalars
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError

HERE = Path(__file__).parent
CORPUS = sorted((HERE / "corpus").iterdir())
FAST_CORPUS = sorted(p for p in (HERE / "fast_corpus").iterdir() if p.suffix == ".yaml")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def canon(value: Any) -> Any:
    """A form that compares types too (1 != True != 1.0) and NaN equal to NaN."""
    if isinstance(value, dict):
        return ("map", [(canon(k), canon(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [canon(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def load_or_error(text: str) -> Any:
    try:
        return yamlio.load_data(text)
    except Exception as err:  # the fast parser must then refuse too
        return err


def assert_parse_agrees(text: str) -> bool:
    """The fast parse equals the reference load; True when the fast parser accepted."""
    parsed = fastyaml.parse(text)
    if parsed is None:
        return False
    reference = load_or_error(text)
    assert not isinstance(reference, Exception), f"fast parser accepted invalid YAML: {reference}"
    assert canon(parsed.data) == canon(reference)
    return True


# --- 1. parsing -------------------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS + FAST_CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_parse_equals_libyaml_on_corpus(path: Path) -> None:
    assert_parse_agrees(read(path))


@pytest.mark.parametrize("path", FAST_CORPUS, ids=lambda p: p.name)
def test_fast_corpus_is_in_the_subset(path: Path) -> None:
    assert fastyaml.parse(read(path)) is not None


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # anchors
        "a: !tag 1\n",  # tags
        "a: plain\n\n  continued\n",  # multi-line plain with a blank line (a line break in the value)
        "a: plain\n  - continued\n",  # ... a line that could mean more
        "a: plain # comment\n  continued\n",
        "a: \"open\\ \n  quote\"\n",  # multi-line double-quoted, an escaped blank before the line break
        "a: 'open\n\n  quote'\n",  # multi-line single-quoted with a blank line (a line break in the value)
        "a:\n  b: 'open\n  quote'\n",  # ... whose next line is not indented beyond its key
        "a:\n{}\n",  # a flow collection not indented under its key
        "a:\n  {}\n  b: 1\n",
        "a: >\n  folded\n\n  with a blank line\n",  # folded block beyond the plain form
        "a: 1\na: 2\n",  # duplicate keys
        "---\na: 1\n",  # document marker
        "- a\n- b\n",  # not a mapping
        "a:\tb\n",  # tab
        "a: b: c\n",  # invalid
        '"open key\n  x": 1\n',
        "<<: {a: 1}\n",
        "a: 1\n b: 2\n",
        "a: x\x85y\n",  # NEL is a line break in YAML 1.1
        "a: x\u2028y\n",
    ],
)
def test_outside_the_subset_gives_up(text: str) -> None:
    assert fastyaml.parse(text) is None



# kubebuilder's CRD shapes (issue 33): descriptions single-quoted over several lines, and a
# flow collection on the line after its key.
CRD_SHAPES = """\
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        properties:
          apiVersion:
            description: 'APIVersion defines the versioned schema of this representation
              of an object. It''s a string: see https://example.invalid/conventions.md#resources'
            type: string
          spec:
            default:
              {}
            description: Spec of the thing, its description over
              two lines.
            type: object
          tags:
            default:
              [] # none
            items:
            - 'one
              two'
"""


def test_crd_shapes_are_in_the_subset() -> None:
    assert assert_parse_agrees(CRD_SHAPES)
    props = fastyaml.parse(CRD_SHAPES).data["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert props["apiVersion"]["description"].startswith("APIVersion defines the versioned schema of this representation of")
    assert (props["spec"]["default"], props["tags"]["default"], props["tags"]["items"]) == ({}, [], ["one two"])
    assert props["spec"]["description"] == "Spec of the thing, its description over two lines."


def test_the_fast_editor_keeps_a_multi_line_scalar_and_never_edits_it_in_place() -> None:
    obj = KubeObject(CRD_SHAPES)
    data = obj.copy_data()
    data["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["apiVersion"]["type"] = "integer"
    obj.set_data(data)
    assert not obj.has_tree  # the fast editor took it: one line changed, the description's lines kept
    assert obj.text == CRD_SHAPES.replace("type: string", "type: integer")

    obj = KubeObject(CRD_SHAPES)
    data = obj.copy_data()
    data["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["apiVersion"]["description"] = "new"
    obj.set_data(data)
    assert obj.has_tree  # the multi-line scalar changed: the round-trip editor printed it
    assert canon(yamlio.load_data(obj.text)) == canon(data)

SCALARS = st.one_of(
    st.sampled_from(
        ["yes", "No", "on", "OFF", "true", "null", "~", "0", "007", "0x1f", "0b11", "1:20", "1_000", "-1",
         "+2", "1.5", "1e3", "1.0e+3", ".inf", "-.Inf", ".NaN", "2024-01-01", "a:b", "-x", "x-", "a b",
         "http://x/y#z", "=", "<<", "@x", "`x", "%x", "!x", "&x", "*x", "|", ">", "?", "- a", "a #b", "a#b",
         "", " ", "'", '"', "\\", "é", "{a}", "[a]", "a,b", "#", "a: b", "a:"]
    ),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x7E), max_size=8),
)


def render_scalar(value: str, style: int) -> str:
    if style == 0:
        return value
    if style == 1:
        return "'" + value.replace("'", "''") + "'"
    return scalars.double_quoted(value)


PLAIN_LINES = ["more text", "2", "null", "it's", "a:b", "a: b", "k:", "x #y", "x#y", "- z", "-z", "'q", "[x]", "",
               "  spaced  ", "http://x/y#z", "...", "---", "--- x", "? q", "?q", ": w", ":w", "é"]
FLOWS = ["{}", "[]", "[a, 'b', \"c\"]", "{a: 1, b: [x]}", "[1, {k: v}]"]
QUOTED_WORDS = ["text", "it''s", "a # b", "k: v", "''", "-", "x", "#", "- y", "[z]", "é", "'' ''"]


DOUBLE_WORDS = ["text", '\\"', "a # b", "k: v", "\\n", "\\\\", "\\t", "'", "é", "x\\", "\\ ", "-"]


@st.composite
def quoted_lines(draw: Any) -> list[str]:
    """A quoted scalar written over two to four lines (without their indentation), maybe a comment after it."""
    quote = draw(st.sampled_from(["'", '"']))
    vocabulary = QUOTED_WORDS if quote == "'" else DOUBLE_WORDS
    words = [" ".join(draw(st.lists(st.sampled_from(vocabulary), max_size=3))) for _ in range(draw(st.integers(2, 4)))]
    lines = [words[0]] + [w or "x" for w in words[1:]]
    lines = [line + draw(st.sampled_from(["", " ", "  "])) for line in lines[:-1]] + lines[-1:]
    return [quote + lines[0]] + lines[1:-1] + [lines[-1] + quote + draw(st.sampled_from(["", " # c", "  "]))]


@st.composite
def documents(draw: Any, depth: int = 0, indent: int = 0) -> list[str]:
    """Lines of a random block mapping (random scalars, styles, comments, layouts)."""
    lines: list[str] = []
    pad = " " * indent
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(["a", "b", "name", "yes", "1", "x.y/z", "k-1", "$patch", "on"]))
        kind = draw(st.integers(0, 8 if depth < 3 else 1))
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(pad + draw(st.sampled_from(["# c", "", "  # deeper", "#"])))
        if kind <= 1:
            value = render_scalar(draw(SCALARS), draw(st.integers(0, 2)))
            comment = draw(st.sampled_from(["", " # c", "   # c"]))
            lines.append(f"{pad}{key}: {value}{comment}".rstrip(" ") if not comment else f"{pad}{key}: {value}{comment}")
        elif kind == 2:
            lines.append(f"{pad}{key}:")
            lines.extend(draw(documents(depth + 1, indent + 2)))
        elif kind == 3:
            lines.append(f"{pad}{key}:")
            dash = indent + draw(st.sampled_from([0, 2]))
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    lines.append(" " * dash + "- " + render_scalar(draw(SCALARS), draw(st.integers(0, 2))))
                elif draw(st.booleans()) and draw(st.booleans()):
                    first, *rest = draw(quoted_lines())
                    lines.append(" " * dash + "- " + first)
                    lines.extend(" " * (dash + 2) + line for line in rest)
                else:
                    sub = draw(documents(depth + 1, dash + 2))
                    lines.append(" " * dash + "- " + sub[0][dash + 2 :] if sub[0].strip() and not sub[0].strip().startswith("#") else " " * dash + "-")
                    lines.extend(sub[1:] if sub[0].strip() and not sub[0].strip().startswith("#") else sub)
        elif kind == 4:
            lines.append(f"{pad}{key}: " + draw(st.sampled_from(FLOWS)))
        elif kind == 6:  # a single-quoted scalar over lines (kubebuilder's CRD descriptions)
            first, *rest = draw(quoted_lines())
            lines.append(f"{pad}{key}: {first}")
            lines.extend(" " * (indent + draw(st.sampled_from([1, 2, 4]))) + line for line in rest)
        elif kind == 8:  # a plain scalar over lines (CRD descriptions)
            lines.append(f"{pad}{key}: " + draw(st.sampled_from(["text", "1", "true", "a-b", "x #y"])))
            for _ in range(draw(st.integers(1, 3))):
                lines.append(" " * (indent + draw(st.sampled_from([0, 1, 2, 4]))) + draw(st.sampled_from(PLAIN_LINES)))
        elif kind == 7:  # a flow collection on the line after its key
            lines.append(f"{pad}{key}:")
            lines.append(" " * (indent + draw(st.sampled_from([1, 2]))) + draw(st.sampled_from(FLOWS))
                         + draw(st.sampled_from(["", " # c"])))
        else:
            chomp = draw(st.sampled_from(["", "-", "+"]))
            lines.append(f"{pad}{key}: {draw(st.sampled_from(['|', '>']))}{chomp}")
            for _ in range(draw(st.integers(1, 3))):
                lines.append(pad + "  " + draw(st.sampled_from(["text", "  more", "", "# not a comment"])))
    return lines


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_parse_equals_libyaml_on_generated_documents(lines: list[str]) -> None:
    assert_parse_agrees("\n".join(lines) + "\n")


@settings(max_examples=examples(200), deadline=None)
@given(st.recursive(
    st.one_of(SCALARS, st.integers(-5, 5000), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "name", "image", "x.y"]), inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
))
def test_printed_data_reads_back(value: Any) -> None:
    """kyaml-like printing of random data: whatever the fast parser accepts is read right."""
    text = yamlio.dump_data({"root": value, "kind": "X"})
    assert_parse_agrees(text)


def test_kyaml_shaped_items_are_accepted() -> None:
    text = yamlio.dump_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}},
                             "data": {"k": "v", "n": "1", "t": "yes", "l": "line\nline\n"},
                             "list": [{"name": "a", "v": 1}, "s", 2]})
    assert assert_parse_agrees(text)


# --- 2 and 3. editing --------------------------------------------------------------

NEW_SCALARS = ["v2", "nginx:1.27", "yes", "0123", "", "a b", "it's", 'say "hi"', "x-y_z.w/v", "--ns=$(POD_NAMESPACE)",
               "a(b)~c;d*e%f<g>h!i&j?k^", "-v", 42, True, False, None,
               "two  \n  lines # x\n", "a\nb",  # (the first no literal block can hold)
               "-", "---x"]  # never plain


def mutate(data: Any, rng: random.Random, edits: int) -> None:
    """Apply ``edits`` random edits (change, delete, add, reorder, insert) in place."""
    for _ in range(edits):
        containers = list(_containers(data))
        parent = rng.choice(containers)
        if isinstance(parent, dict):
            _mutate_map(parent, rng)
        else:
            _mutate_list(parent, rng)


def _containers(value: Any) -> Any:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _containers(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from _containers(v)


def _mutate_map(node: dict, rng: random.Random) -> None:
    keys = list(node)
    op = rng.randrange(4)
    if op == 0 and keys:
        key = rng.choice(keys)
        if not isinstance(node[key], (dict, list)):
            node[key] = rng.choice(NEW_SCALARS)
    elif op == 1 and len(keys) > 1:
        del node[rng.choice(keys)]
    else:
        at = rng.randrange(len(keys) + 1)
        new_key = rng.choice(["added", "newKey", "z", "a.b/c"])
        if new_key in node:
            return
        value = rng.choice([rng.choice(NEW_SCALARS), {"k": "v", "n": 1}, ["p", "q"], [{"name": "e", "x": "y"}]])
        items = list(node.items())
        items.insert(at, (new_key, value))
        node.clear()
        node.update(items)


def _mutate_list(node: list, rng: random.Random) -> None:
    op = rng.randrange(4)
    if op == 0 and len(node) > 1:
        rng.shuffle(node)
    elif op == 1 and len(node) > 1:
        del node[rng.randrange(len(node))]
    elif op == 2:
        sample = node[rng.randrange(len(node))] if node else "x"
        new = {"name": "inserted", "image": "busybox"} if isinstance(sample, dict) else rng.choice(NEW_SCALARS[:5])
        node.insert(rng.randrange(len(node) + 1), new)
    elif node:
        i = rng.randrange(len(node))
        if not isinstance(node[i], (dict, list)):
            node[i] = rng.choice(NEW_SCALARS[:12])


def edit_both_ways(text: str, seed: int, edits: int) -> tuple[KubeObject, KubeObject, bool]:
    """The same random edit through the fast path and through ruamel."""
    fast = KubeObject(text)
    new = fast.copy_data()
    mutate(new, random.Random(seed), edits)
    fast.set_data(new)
    took_fast = not fast.has_tree and fast.changed
    slow = KubeObject(text)
    _ = slow.rt  # a round-trip tree already built forces the ruamel path
    new2 = slow.copy_data()
    mutate(new2, random.Random(seed), edits)
    try:
        slow.set_data(new2)
    except KrmError:  # the ruamel path refuses output it cannot print faithfully
        slow.rt_repaired = True
    return fast, slow, took_fast


def content_lines(text: str) -> list[str]:
    """The lines that are neither blank nor only a comment."""
    return [line for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]


def same_content(fast: str, slow: str) -> bool:
    """Equal texts, or (with comment lines) equal content lines."""
    return fast == slow or content_lines(fast) == content_lines(slow)


def ruamel_correct(slow: KubeObject) -> bool:
    """Whether the ruamel path's text reads back as its data (it has known defects,
    e.g. after deleting the element before a ``- # comment`` element it can join
    two keys on one line); only then is it the reference for the fast path."""
    if slow.rt_repaired:  # its first print was wrong and it fell back to another layout
        return False
    try:
        return canon(yamlio.load_data(slow.text)) == canon(slow.data)
    except Exception:
        return False


def string_keys_only(value: Any) -> bool:
    """ruamel types keys by YAML 1.2 (``yes:`` is a string there, True here), so the
    round-trip path rewrites such keys; it is no reference for documents holding them."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and string_keys_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(string_keys_only(v) for v in value)
    return True


def ruamel_stable(text: str) -> bool:
    try:
        return string_keys_only(yamlio.load_data(text)) and yamlio.dump_rt(yamlio.load_rt(text)) == text
    except KrmError:  # ruamel is stricter than libyaml about some block scalars
        return False


EDITABLE = [p for p in CORPUS + FAST_CORPUS if fastyaml.parse(read(p)) is not None]


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_edit_matches_ruamel_on_corpus(path: Path) -> None:
    text = read(path)
    stable = ruamel_stable(text)
    accepted = 0
    for seed in range(150):
        fast, slow, took_fast = edit_both_ways(text, seed, 1 + seed % 4)
        if took_fast:
            accepted += 1
            assert canon(yamlio.load_data(fast.text)) == canon(fast.data)
            if stable and ruamel_correct(slow):
                assert same_content(fast.text, slow.text), f"seed {seed}"
    assert accepted > 30, "the fast editor should take most simple edits"


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.integers(0, 10_000))
def test_fast_edit_matches_ruamel_on_generated_documents(lines: list[str], seed: int) -> None:
    text = "\n".join(lines) + "\n"
    if fastyaml.parse(text) is None or not ruamel_stable(text):
        return
    fast, slow, took_fast = edit_both_ways(text, seed, 1 + seed % 3)
    if took_fast:
        assert canon(yamlio.load_data(fast.text)) == canon(fast.data)
        if ruamel_correct(slow):
            assert same_content(fast.text, slow.text)


def test_changed_scalar_keeps_quotes_and_comment_column() -> None:
    obj = KubeObject("a: 'x' # c\nb: \"y\"\nc: short   # c\n")
    data = obj.copy_data()
    data.update(a="longer", b="z", c="s")
    obj.set_data(data)
    assert obj.text == "a: 'longer' # c\nb: \"z\"\nc: s       # c\n"
    assert not obj.has_tree


def test_reorder_moves_blocks_with_their_comments() -> None:
    text = "l:\n- name: a # ca\n  v: 1\n  # after a\n- # head b\n  name: b\nk: 1\n"
    obj = KubeObject(text)
    data = obj.copy_data()
    data["l"].reverse()
    obj.set_data(data)
    assert obj.text == "l:\n- # head b\n  name: b\n- name: a # ca\n  v: 1\n  # after a\nk: 1\n"
    assert not obj.has_tree


def test_new_elements_follow_the_list_style() -> None:
    obj = KubeObject("s:\n  l:\n    - name: a\n  m: 1\n")
    data = obj.copy_data()
    data["s"]["l"].append({"name": "b", "ports": [80]})
    obj.set_data(data)
    assert obj.text == "s:\n  l:\n    - name: a\n    - name: b\n      ports:\n      - 80\n  m: 1\n"


# --- the reorder-merge benchmark's edit stays on the fast path ---------------------

BENCH_DEPLOYMENT = (HERE / "fast_corpus" / "deployment-kyaml.yaml").read_text(encoding="utf-8")
BENCH_PATCH = {
    "metadata": {"labels": {"tier": None, "new-label": "x"}, "annotations": {"deployment.kubernetes.io/revision": "4"}},
    "spec": {"replicas": 5, "template": {"spec": {
        "$setElementOrder/containers": [{"name": "nginx"}, {"name": "third"}, {"name": "sidecar"}],
        "containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "third", "$patch": "delete"}],
        "volumes": [{"name": "data", "$patch": "delete"}],
    }}},
}


def run_reorder_merge(text: str, patch: dict | None = None) -> str:
    from krm_merge.krm.resourcelist import indent_item
    from krm_merge.runner import run_function

    config = {"apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "ReorderMerge", "metadata": {"name": "p"},
              "spec": {"patches": [{"target": {"kind": "Deployment"}, "patch": patch or BENCH_PATCH}]}}
    rl = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indent_item(text)
          + "functionConfig:\n" + "".join("  " + line + "\n" for line in yamlio.dump_data(config).splitlines()))
    out, code = run_function(rl)
    assert code == 0, out
    return out.split("functionConfig:")[0]


def test_strategic_merge_patch_takes_the_fast_path_and_prints_what_ruamel_prints(monkeypatch: Any) -> None:
    def no_round_trip(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the ruamel path was used")

    with monkeypatch.context() as m:
        m.setattr(yamlio, "load_rt", no_round_trip)
        fast = run_reorder_merge(BENCH_DEPLOYMENT)
    with monkeypatch.context() as m:
        m.setattr(fastyaml, "edit", lambda *args, **kwargs: None)
        slow = run_reorder_merge(BENCH_DEPLOYMENT)
    assert fast == slow
    assert 'image: "nginx:1.27" # double-quoted image' in fast
    assert "name: third" not in fast


def test_moving_a_commented_element_first_stays_valid_yaml() -> None:
    """The ruamel path joins two keys on one line here (``name: sidecar image: busybox``);
    the fast path moves the element's block with its ``- # comment`` head."""
    patch = {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}, {"name": "third"}],
        "containers": [{"name": "nginx", "image": "nginx:1.27"}],
    }}}}
    out = run_reorder_merge(BENCH_DEPLOYMENT, patch)
    assert "        - # sidecar head comment\n          name: sidecar\n          image: busybox\n" in out
    item = yamlio.load_data(out)["items"][0]
    assert [c["name"] for c in item["spec"]["template"]["spec"]["containers"]] == ["sidecar", "nginx", "third"]


@pytest.mark.parametrize("text", ["indexes:\n\n# AUTOGENERATED\n\n# more\n", "a: {}\n# c\nb: 1\n", "a: []\n\nb: 1\n"])
def test_comments_after_a_valueless_entry_head_the_next_key(text: str) -> None:
    """ruamel ties these comments to the next key; so does the fast editor (they are its head)."""
    for seed in range(40):
        fast, slow, took_fast = edit_both_ways(text, seed, 1)
        assert canon(yamlio.load_data(fast.text)) == canon(fast.data)
        if ruamel_correct(slow):
            assert same_content(fast.text, slow.text), f"seed {seed}"
    obj = KubeObject("a: {}\n# c\nb: 1\n")
    data = obj.copy_data()
    data["z"] = 2
    data.move_to_end("b") if hasattr(data, "move_to_end") else data.update(b=data.pop("b"))
    obj.set_data(data)
    assert obj.text == "a: {}\nz: 2\n# c\nb: 1\n"


@settings(max_examples=examples(3000), deadline=None)
@given(st.one_of(
    st.text(alphabet="+-0123456789._:eEbxoOabcdfinNulLsSyYtTrRF~<=", max_size=9),
    SCALARS.filter(lambda s: s == s.strip() and "\n" not in s),
))
def test_plain_scalars_resolve_like_the_loader(text: str) -> None:
    """The fast path's own YAML 1.1 type table agrees with the libyaml-backed loader."""
    assert_parse_agrees(f"k: {text}\n")
    assert_parse_agrees(f"{text}: v\n")


@pytest.mark.parametrize("text", [
    'command: [\n  "/app", # the binary\n  "--port=8080", # must match\n]\nb: 1\n',
    "a:\n  b: {x: [1,\n      2], y: 'q # not a comment'}   # end\n  c: d\n",
    "a: [1,\n2]\n",
    "l:\n- [a,\n   b]\n- c\n",
])
def test_multi_line_flow_collections_read_like_libyaml(text: str) -> None:
    assert assert_parse_agrees(text)


@pytest.mark.parametrize("text", ["a: [1,\n  2\n", "a: [1,\n---\n]\n", "a: [1,\n  'open\n  ]\n"])
def test_broken_multi_line_flow_collections_are_declined(text: str) -> None:
    assert fastyaml.parse(text) is None


def test_a_moved_element_keeps_its_multi_line_flow_as_written() -> None:
    text = ("l:\n- name: a\n  command: [\n    x, # first\n    y,\n  ]\n- name: b\n")
    obj = KubeObject(text)
    data = obj.copy_data()
    data["l"].reverse()
    obj.set_data(data)
    assert not obj.has_tree
    assert obj.text == "l:\n- name: b\n- name: a\n  command: [\n    x, # first\n    y,\n  ]\n"


def test_a_deleted_entry_takes_its_head_and_foot_comments_not_the_closing_ones() -> None:
    text = "m:\n  a: 1\n\n  # about b\n  b:\n  - x\n    # foot of x\n  # about c\n  c: 3\n# closing\n"
    obj = KubeObject(text)
    data = obj.copy_data()
    del data["m"]["b"]
    data["m"]["d"] = 4
    obj.set_data(data)
    assert not obj.has_tree
    assert obj.text == "m:\n  a: 1\n  # about c\n  c: 3\n  d: 4\n# closing\n"


def test_a_multi_line_flow_map_with_a_duplicate_key_is_left_to_the_loader() -> None:
    assert fastyaml.parse("a: {x: 1,\n  x: 2}\n") is None


def test_a_double_quoted_multi_line_string_is_edited_in_place_as_the_round_trip_editor_prints_it() -> None:
    """kpt prints a configuration file whose lines end in blanks as one double-quoted line (free5gc-cp's
    ConfigMaps); upstream's new file text goes onto that line, escaped, without the round-trip editor."""
    text = 'data:\n  cfg.yaml: "version: 1  \\nport: 80 # http\\n" # the file\n  other: x\n'
    for new, fast in (("version: 2  \nport: 80 # http\n", True), ("version: 2\nport: 80\n", False)):
        obj, slow = KubeObject(text), KubeObject(text)
        _ = slow.rt  # a round-trip tree already built forces the ruamel path
        for o in (obj, slow):
            data = o.copy_data()
            data["data"]["cfg.yaml"] = new
            o.set_data(data)
        assert obj.has_tree is not fast
        assert obj.text == slow.text
        assert canon(yamlio.load_data(obj.text)) == canon(data)
