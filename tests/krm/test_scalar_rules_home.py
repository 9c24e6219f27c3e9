"""One home for YAML scalar rules: no module but ``krm_merge/yaml/scalars.py`` defines them.

The scan looks for the fingerprints of a type table (YAML 1.1 bool/null/inf
words, the timestamp tag, PyYAML's resolver), an escape table (YAML's
``\\N``/``\\L``/``\\P``/``\\_`` escapes) or a quoting function.  Each pattern
must also match the scalar module itself, so a pattern that stopped matching
anything fails here instead of passing silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import examples
import krm_merge

PACKAGE = Path(krm_merge.__file__).parent
HOME = PACKAGE / "yaml" / "scalars.py"

FINGERPRINTS = {
    "YAML 1.1 bool words": re.compile(r"""\byes[|\s,'"]{1,4}Yes\b"""),
    "YAML null words": re.compile(r"""\bnull[|\s,'"]{1,4}Null\b"""),
    "YAML inf/nan words": re.compile(r"""\binf[|\s,'"]{1,4}Inf\b"""),
    "timestamp tag": re.compile(r"2002:timestamp"),
    "escape table (writing)": re.compile(r'''["']\\\\[NLP]["']'''),
    "escape table (reading)": re.compile(r'''["'][NLP_]["']\s*:\s*["']\\(?:x85|xa0|u2028|u2029)'''),
    "quoting function": re.compile(
        r"^\s*def \w*(?:needs_double_quot|double_quot|single_quot|can_be_plain|plain_is_safe|resolves_as_string)\w*\(",
        re.M,
    ),
}


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != HOME)


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_fingerprint_matches_the_home_module(name: str) -> None:
    assert FINGERPRINTS[name].search(HOME.read_text(encoding="utf-8")), name


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_no_other_module_defines_scalar_rules(name: str) -> None:
    offenders = []
    for path in _sources():
        for m in FINGERPRINTS[name].finditer(path.read_text(encoding="utf-8")):
            line = path.read_text(encoding="utf-8").count("\n", 0, m.start()) + 1
            offenders.append(f"{path.relative_to(PACKAGE)}:{line}")
    assert not offenders, f"{name} outside krm_merge/yaml/scalars.py: {offenders}"


def test_the_scan_sees_the_whole_package() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in _sources()}
    assert {"krm/fastyaml/parse.py", "krm/fastyaml/edit.py", "krm/yamlio.py", "smp/go_yaml.py", "promote/scalars.py"} <= names


# --- the escape rules agree with the emitters (go-yaml's rules, which libyaml shares) ----

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from krm_merge.yaml import scalars  # noqa: E402

# libyaml and go-yaml escape characters beyond U+FFFF (their printable test stops at
# three UTF-8 bytes); ruamel.yaml and krm-merge write them as themselves.
_NO_SURROGATES = st.text(st.characters(blacklist_categories=("Cs",), max_codepoint=0xFFFF), max_size=20)


@settings(max_examples=examples(300), deadline=None)
@given(_NO_SURROGATES)
def test_double_quoted_is_what_libyaml_writes(value: str) -> None:
    import yaml

    emitted = yaml.dump(value, Dumper=yaml.CSafeDumper, default_style='"', allow_unicode=True, width=1 << 30)
    assert emitted.rstrip("\n").removesuffix("\n...") == scalars.double_quoted(value)
    assert yaml.load(scalars.double_quoted(value), Loader=yaml.CSafeLoader) == value


def test_escapes_follow_go_yaml() -> None:
    assert scalars.double_quoted("a\xa0b") == '"a\xa0b"'  # printable: written as itself
    assert scalars.double_quoted("\x01\x7f\u2028") == '"\\x01\\x7F\\L"'  # upper-case hex
    with pytest.raises(ValueError, match="surrogate"):
        scalars.double_quoted("\ud800")
    assert scalars.unescape_double("\\_\\x41\\N") == "\xa0A\x85"
    assert scalars.double_quoted("\U0001f600") == '"\U0001f600"'  # like ruamel, unlike libyaml
