"""Property tests: any string reads back exactly; every byte outside the marked scalar stays."""

from __future__ import annotations

import string

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.promote.engine import promote_text
from krm_merge.promote.errors import PromoteError

MARK = '{"$promotion": "ns:app:prod"}'
SETTERS = {"ns:app:prod": None}

# Old scalar spellings covering every style the writer must keep or convert.
OLD_FORMS = {
    "plain": "1.9",
    "plain-text": "v1.2.3",
    "single": "'1.9'",
    "double": '"1.9"',
    "tagged": "!!float 1.9",
    "anchored": "&v 6.2.0",
    "empty": "",
    "literal": "|\n    line one\n    line two",
    "literal-strip": "|-\n    line one",
    "folded": ">\n    folded\n    text",
}

INJECTIONS = [
    "a\nb", "#", "x #y", "x # y", "'", '"', "---", "...", "--- x", "a: b", "a:", ":", "- x", "-",
    "\n---\napiVersion: v1\nkind: Secret\n", "{x}", "[x, y]", "|", ">", "!!int 3", "*alias",
    "&anchor", "%TAG", "@x", "`x", "1.10", "true", "yes", "on", "null", "~", "0123", "0x1F", "1e3",
    ".inf", "2024-07-01", "<<", "=", "", " lead", "trail ", "\t", "a\tb", "\u2028", "\x85", "\ufeff",
    "\x00", "\x7f", "C:\\x", "back\\slash", "ünïcödé", "😀", "a\r\nb", "\r", "two\n\nlines\n",
    "end\n", "end\n\n", "  indented\nline", "it's", "she said \"hi\"", "${VAR}", "{{ .Values.x }}",
]


def _doc(old: str) -> tuple[str, str, str]:
    """(text, prefix before the scalar, suffix from the marker comment on)."""
    prefix = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo # keep\n\ndata:\n  before: keep\n  target: "
    if old.startswith(("|", ">")):
        header, _, body = old.partition("\n")
        text = prefix + header + f" # {MARK}\n" + body + "\n\n  after:   keep   # spaced\n"
        return text, prefix, "\n\n  after:   keep   # spaced\n"
    suffix = f" # {MARK}\n  after:   keep   # spaced\n"
    return prefix + old + suffix, prefix, suffix


def _check(old: str, value: str) -> str:
    text, prefix, suffix = _doc(old)
    outcome = promote_text(text, "$promotion", {"ns:app:prod": value})
    new = outcome.text
    data = yaml.safe_load(new)
    assert data["data"]["target"] == value and isinstance(data["data"]["target"], str)
    assert data["data"]["before"] == "keep" and data["data"]["after"] == "keep"
    assert list(data["data"]) == ["before", "target", "after"]
    assert new.startswith(prefix)
    assert new.endswith(suffix)
    assert MARK in new
    # No tag is ever written for the new value.
    middle = new[len(prefix) : len(new) - len(suffix)]
    assert "!!" not in middle or "!!" in value
    return middle


@pytest.mark.parametrize("form", sorted(OLD_FORMS))
@pytest.mark.parametrize("value", INJECTIONS, ids=repr)
def test_injection_values_end_up_as_one_scalar(form: str, value: str) -> None:
    _check(OLD_FORMS[form], value)


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_nasty = st.text(alphabet=st.sampled_from(list(":#'\"\\-{}[],&*!|>%@` \t\n\r?.~0123456789ey") + ["\u2028", "\x85"]),
                 max_size=20)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.one_of(_text, _nasty), form=st.sampled_from(sorted(OLD_FORMS)))
@example(value="1.10", form="plain")
def test_any_string_reads_back_exactly(value: str, form: str) -> None:
    _check(OLD_FORMS[form], value)


@settings(max_examples=examples(200), deadline=None)
@given(value=st.one_of(_text, _nasty))
def test_flow_context_values(value: str) -> None:
    text = f"args: [a, 1.9, c] # plain\nlist: [\n  first,\n  1.9, # {MARK}\n  last,\n]\nz: 1\n"
    new = promote_text(text, "$promotion", {"ns:app:prod": value}).text
    data = yaml.safe_load(new)
    assert data == {"args": ["a", 1.9, "c"], "list": ["first", value, "last"], "z": 1}
    start = text.index("  1.9,")
    assert new.startswith(text[: start + 2])
    assert new.endswith(text[text.index(f", # {MARK}") :])


# ------------------------------------------------------------------ generated documents

_keys = st.text(alphabet=string.ascii_letters + string.digits + "-_./", min_size=1, max_size=8)
_scalars = st.one_of(
    _text, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
    st.sampled_from(["1.9", "yes", "0123", "a: b", "x # y", "multi\nline", ""]),
)
_data = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_keys, children, max_size=4)),
    max_leaves=20,
)


def _marked_candidates(text: str) -> list[tuple[int, yaml.ScalarNode]]:
    """One-line scalars of block mappings/sequences that end their line, with the index of
    their key (or of their sequence item's ``-``)."""
    root = yaml.compose(text, Loader=yaml.CSafeLoader)
    out: list[tuple[int, yaml.ScalarNode]] = []

    def ends_line(value: yaml.Node) -> bool:
        end = value.end_mark.index
        return (isinstance(value, yaml.ScalarNode) and value.style not in ("|", ">")
                and value.start_mark.line == value.end_mark.line and text[end : end + 1] == "\n"
                and value.start_mark.index != end)

    def walk(node: yaml.Node, flow: bool) -> None:
        if isinstance(node, yaml.MappingNode):
            f = flow or bool(node.flow_style)
            for key, value in node.value:
                if not f and ends_line(value):
                    out.append((key.start_mark.index, value))
                walk(value, f)
        elif isinstance(node, yaml.SequenceNode):
            f = flow or bool(node.flow_style)
            for item in node.value:
                dash = text.rfind("-", 0, item.start_mark.index)
                if not f and ends_line(item) and text[dash + 1 : item.start_mark.index].strip() == "":
                    out.append((dash, item))
                walk(item, f)

    if root is not None:
        walk(root, False)
    return out


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    data=st.dictionaries(_keys, _data, min_size=1, max_size=5),
    value=st.one_of(_text, _nasty),
    choice=st.integers(min_value=0),
    head=st.booleans(),
    indent=st.sampled_from([2, 4]),
)
def test_generated_documents(data: dict, value: str, choice: int, head: bool, indent: int) -> None:
    text = yaml.safe_dump(data, default_flow_style=False, width=10_000, indent=indent, allow_unicode=True,
                          sort_keys=False)
    candidates = _marked_candidates(text)
    assume(candidates)
    anchor, node = candidates[choice % len(candidates)]
    start, end = node.start_mark.index, node.end_mark.index
    line_start = text.rfind("\n", 0, anchor) + 1
    if head and text[line_start:anchor].strip() == "":
        comment = " " * (anchor - line_start) + f"# {MARK}\n"
        marked = text[:line_start] + comment + text[line_start:]
        start, end = start + len(comment), end + len(comment)
    else:
        marked = text[:end] + f" # {MARK}" + text[end:]
    original = yaml.safe_load(marked)
    new = promote_text(marked, "$promotion", {"ns:app:prod": value}).text
    # Every byte outside the scalar's span is unchanged...
    assert new.startswith(marked[:start])
    assert new.endswith(marked[end:])
    # ...and the data differs only in the marked field, which is now exactly the value.
    got = yaml.safe_load(new)
    _set_same_leaf(original, yaml.compose(marked, Loader=yaml.CSafeLoader), node_at=start, value=value)
    assert got == original


def _set_same_leaf(data: object, root: yaml.Node, node_at: int, value: str) -> None:
    """Set, in plain ``data``, the leaf whose node starts at ``node_at`` to ``value``."""

    def walk(node: yaml.Node, obj: object) -> bool:
        if isinstance(node, yaml.MappingNode):
            assert isinstance(obj, dict)
            for k, v in node.value:
                key = yaml.safe_load(yaml.serialize(k)) if isinstance(k, yaml.ScalarNode) else None
                if isinstance(v, yaml.ScalarNode) and v.start_mark.index == node_at:
                    obj[key] = value
                    return True
                if walk(v, obj[key]):
                    return True
        elif isinstance(node, yaml.SequenceNode):
            assert isinstance(obj, list)
            for i, item in enumerate(node.value):
                if isinstance(item, yaml.ScalarNode) and item.start_mark.index == node_at:
                    obj[i] = value
                    return True
                if walk(item, obj[i]):
                    return True
        return False

    assert walk(root, data)


def add_marker_comments(text: str, places: list[tuple[int, bool, str]]) -> str:
    """``text`` with a marker comment for each (line, head, marker) place: alone on a new line
    above that line when ``head``, else at the line's end (lines taken modulo the count)."""
    lines = text.splitlines(keepends=True)
    for n, head, marker in places:
        i = n % len(lines)
        if head:
            lines.insert(i, f"# {marker}\n")
        else:
            lines[i] = lines[i].rstrip("\n") + f" # {marker}\n"
    return "".join(lines)


def assume_valid_yaml(text: str) -> None:
    """Drop the example when a comment landed inside a multi-line scalar and broke the text."""
    try:
        yaml.safe_load(text)
    except yaml.YAMLError:
        assume(False)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.dictionaries(_keys, _data, min_size=1, max_size=5),
    value=st.one_of(_text, _nasty),
    where=st.lists(st.tuples(st.integers(min_value=0), st.booleans()), min_size=1, max_size=4),
    flow=st.booleans(),
    crlf=st.booleans(),
)
def test_markers_anywhere_never_crash(data: dict, value: str, where: list[tuple[int, bool]], flow: bool,
                                      crlf: bool) -> None:
    """Markers dropped on arbitrary lines: either a clean PromoteError or a correct edit."""
    text = yaml.safe_dump(data, default_flow_style=None if flow else False, width=60, allow_unicode=True)
    marked = add_marker_comments(text, [(n, head, MARK) for n, head in where])
    if crlf:
        marked = marked.replace("\n", "\r\n")
    assume_valid_yaml(marked)
    try:
        outcome = promote_text(marked, "$promotion", {"ns:app:prod": value})
    except PromoteError as err:
        assert "internal error" not in err.message
        return
    new = outcome.text
    assert (new == marked) == (not outcome.changes)
    if outcome.changes:
        assert yaml.safe_load(new) is not None
        for change in outcome.changes:
            assert change.new == value


def _outcome_or_error(fn) -> object:  # type: ignore[no-untyped-def]
    try:
        outcome = fn()
    except PromoteError as err:
        return ("error", err.message, err.field, err.line)
    return (outcome.text, outcome.changes, outcome.matched, [(m.line, m.reason) for m in outcome.malformed])


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.dictionaries(_keys, _data, min_size=1, max_size=6),
    where=st.lists(st.tuples(st.integers(min_value=0), st.booleans()), min_size=1, max_size=4),
    flow=st.booleans(),
    anchors=st.booleans(),
)
def test_focused_index_finds_what_the_full_index_finds(data: dict, where: list[tuple[int, bool]], flow: bool,
                                                      anchors: bool) -> None:
    """The command indexes only the lines around markers; the result must not depend on it."""
    from krm_merge.promote.document import parse_document
    from krm_merge.promote.fullpath import promote_document

    text = yaml.safe_dump(data, default_flow_style=None if flow else False, width=60, allow_unicode=True)
    if anchors:
        text = "shared: &s [1, 2]\nsame: *s\nscalar: &v x\nalias: *v\n" + text
    marked = add_marker_comments(text, [(n, head, MARK) for n, head in where])
    assume_valid_yaml(marked)
    setters = {"ns:app:prod": "6.3.0"}
    focused = _outcome_or_error(lambda: promote_text(marked, "$promotion", setters))
    full = _outcome_or_error(lambda: promote_document(parse_document(marked), "$promotion", setters))
    assert focused == full
