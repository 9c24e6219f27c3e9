"""``update --conflicts mark`` writes its markers on the plain-data merge's text (issue 43).

A resource whose merge must write a conflict marker went through the ruamel.yaml round-trip merge (three
round-trip reads and two prints each, ~13 ms a resource: 20,000 marked ConfigMaps took minutes).  Now the
merge on plain data hands back each marker with its field's path and the update adds it to the field's line,
where that gives the round-trip merge's bytes; the rest (a comment already on the line, a block scalar, a
value ruamel.yaml re-spells) still goes through the trees.  Checked against the round-trip merge itself,
byte for byte, and by counting round-trip reads and prints at two sizes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from krm_merge.commands import conflicts, update
from krm_merge.krm import yamlio
from krm_merge.update import context, ledger

from tests.helpers import locked_kptfile


def _package(root: Path, texts: dict[str, str]) -> Path:
    for name, text in texts.items():
        (root / name).mkdir(parents=True)
        (root / name / "cm.yaml").write_text(text)
    (root / "local" / "Kptfile").write_text(locked_kptfile())
    return root / "local"


def _update(local: Path) -> int:
    root = local.parent
    return update.main([str(local), "--origin", str(root / "origin"), "--upstream", str(root / "upstream"),
                        "--conflicts", "mark"])


def _doc(line: str, tail: str = "") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  keep: same\n{line}\n  z: 1\n{tail}"


# local's line of the conflicting field (origin's and upstream's say `k: o` / `k: u`), and whether the marker
# goes on the plain merge's text (False: the round-trip merge places it, as before)
LINES = {
    "  k: l": True,
    "  k: 'l'": True,
    '  k: "l"': True,
    "  k: 7": True,
    "  k: 1.50": True,
    "  k: -3": True,
    "  k: true": True,
    "  k: app:1": True,
    '  "k": l': True,
    "  k: True": False,  # ruamel.yaml prints `true`
    "  k: +1": False,  # ruamel.yaml prints `1`
    "  k: 010": False,  # 8 to YAML 1.1, 10 to ruamel.yaml (the ledger records its reading)
    "  k: yes": False,  # true to YAML 1.1, a string to ruamel.yaml
    "  k: 0o17": False,  # a string to YAML 1.1, 15 to ruamel.yaml
    "  k: l # mine": False,  # a comment already on the line: the marker follows it
    "  k: l  ": False,  # blanks after the value
    '  k: "a\\tb"': False,  # an escape ruamel.yaml may re-spell
    "  k: |\n    l\n    m": False,  # a block scalar: the marker goes after `|`
    "  k:\n    n: l": True,  # the field in conflict is `n`
}


@pytest.mark.parametrize("line", LINES)
def test_markers_on_the_plain_text_are_the_round_trip_merges_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   line: str) -> None:
    nested = line.endswith("n: l")
    texts = {"local": _doc(line, "list:\n- name: x\n  v: l\n"),
             "origin": _doc("  k:\n    n: o" if nested else "  k: o", "list:\n- name: x\n  v: o\n"),
             "upstream": _doc("  k:\n    n: u" if nested else "  k: u", "list:\n- name: x\n  v: u\n")}
    round_trips: list[int] = []
    real = context.MergeContext._merge_round_trip

    def spy(self: context.MergeContext, *args: Any) -> bool:
        round_trips.append(1)
        return real(self, *args)

    monkeypatch.setattr(context.MergeContext, "_merge_round_trip", spy)
    plain = _package(tmp_path / "plain", texts)
    assert _update(plain) == 3
    assert bool(round_trips) is not LINES[line]

    monkeypatch.setattr(context, "with_markers", lambda *_: None)  # every marker placed by the round-trip merge
    trees = _package(tmp_path / "trees", texts)
    assert _update(trees) == 3
    for name in ("cm.yaml", ledger.LEDGER_NAME):
        assert (plain / name).read_text() == (trees / name).read_text(), name
    assert {m.field for m in conflicts.find_all(plain)} == {"data.k.n" if nested else "data.k", "list[name=x].v"}


def _many(root: Path, n: int) -> Path:
    """``n`` ConfigMaps in one file, each with one field changed differently on both sides."""
    return _package(root, {name: "---\n".join(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: {name}{i}\n  same: s\n" for i in range(n))
        for name in ("origin", "local", "upstream")})


def _one(root: Path, n: int) -> Path:
    """One ConfigMap of ``n`` fields, each changed differently on both sides."""
    return _package(root, {name: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n"
                           + "".join(f"  k{i}: {name}{i}\n" for i in range(n)) for name in ("origin", "local", "upstream")})


@pytest.mark.parametrize("shape", [_many, _one])
def test_marking_reads_and_prints_no_round_trip_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: Any) -> None:
    """Counted at 20 and 80 conflicts: no ruamel.yaml round-trip read or print (each was a resource's three reads and
    two prints, whatever its size), and every conflict marked, recorded and listed."""
    calls = [0]
    for name in ("load_rt", "dump_rt"):
        real = getattr(yamlio, name)

        def counting(*args: Any, real: Any = real, **kwargs: Any) -> Any:
            calls[0] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(yamlio, name, counting)
    for n in (20, 80):
        local = shape(tmp_path / str(n), n)
        calls[0] = 0
        assert _update(local) == 3
        assert calls[0] == 0, (n, calls[0])
        assert (local / "cm.yaml").read_text().count("# krm-merge:conflict upstream=") == n
        assert len(json.loads((local / ledger.LEDGER_NAME).read_text())["conflicts"]) == n
        assert len(conflicts.find_all(local)) == n
