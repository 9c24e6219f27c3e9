"""``krm_merge.records.Record`` is ``typing.NamedTuple``'s class syntax (issue 33: the same classes, made faster).

Each shape of record class krm-merge writes is declared twice, once on
``typing.NamedTuple`` and once on ``Record``, and the two must behave the
same: fields, defaults, methods, docstring, ``_replace``/``_asdict``/``_make``,
equality, repr, pickling, the annotations kept.  Record also refuses what
``typing.NamedTuple`` refuses.  And every record class of krm-merge is a
Record: a module defining a ``typing.NamedTuple`` class fails the scan.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path
from typing import NamedTuple, Optional

import pytest

import krm_merge
from krm_merge.records import Record

PACKAGE = Path(krm_merge.__file__).resolve().parent


class TypedRef(NamedTuple):
    """A reference."""

    kind: str
    name: str
    namespace: Optional[str] = None
    tags: tuple[str, ...] = ()

    def label(self) -> str:
        return f"{self.kind}/{self.name}"

    def within(self, folder: str) -> TypedRef:
        return self._replace(name=f"{folder}/{self.name}")

    @property
    def qualified(self) -> bool:
        return self.namespace is not None


class Ref(Record):
    """A reference."""

    kind: str
    name: str
    namespace: Optional[str] = None
    tags: tuple[str, ...] = ()

    def label(self) -> str:
        return f"{self.kind}/{self.name}"

    def within(self, folder: str) -> Ref:
        return self._replace(name=f"{folder}/{self.name}")

    @property
    def qualified(self) -> bool:
        return self.namespace is not None


def test_a_record_behaves_as_the_same_typing_namedtuple() -> None:
    typed, ours = TypedRef("ConfigMap", "a"), Ref("ConfigMap", "a")
    assert ours._fields == typed._fields == ("kind", "name", "namespace", "tags")
    assert ours._field_defaults == typed._field_defaults == {"namespace": None, "tags": ()}
    assert tuple(ours) == tuple(typed) == ("ConfigMap", "a", None, ())
    assert ours == ("ConfigMap", "a", None, ()) and hash(ours) == hash(typed)
    assert repr(ours) == repr(typed).replace("TypedRef", "Ref")
    assert ours.label() == typed.label() == "ConfigMap/a"
    assert ours.within("sub") == Ref("ConfigMap", "sub/a") and isinstance(ours.within("sub"), Ref)
    assert ours.qualified is typed.qualified is False
    assert Ref(kind="K", name="n", tags=("x",))._asdict() == TypedRef(kind="K", name="n", tags=("x",))._asdict()
    assert Ref._make(["K", "n", "ns", ()]) == Ref("K", "n", "ns")
    assert Ref.__doc__ == TypedRef.__doc__ == "A reference."
    assert Ref.__module__ == TypedRef.__module__ == __name__
    assert Ref.__qualname__ == "Ref"
    assert list(Ref.__annotations__) == list(TypedRef.__annotations__)
    assert pickle.loads(pickle.dumps(ours)) == ours and type(pickle.loads(pickle.dumps(ours))) is Ref
    with pytest.raises(AttributeError):
        ours.kind = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Ref("only-kind")  # type: ignore[call-arg]
    assert not hasattr(ours, "__dict__")  # a tuple, no per-instance dict


def test_a_record_refuses_what_typing_namedtuple_refuses() -> None:
    with pytest.raises(TypeError, match="without a default follows"):
        class Bad(Record):
            a: int = 1
            b: int
    with pytest.raises(AttributeError, match="_replace"):
        class Worse(Record):
            a: int

            def _replace(self) -> None:  # type: ignore[override]
                pass
    with pytest.raises(TypeError, match="Record alone"):
        class Mixed(Record, dict):  # type: ignore[misc]
            a: int


def _namedtuple_classes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(isinstance(b, (ast.Name, ast.Attribute)) and (getattr(b, "id", None) == "NamedTuple"
                                                                  or getattr(b, "attr", None) == "NamedTuple")
                    for b in node.bases)]


def test_every_record_class_of_krm_merge_is_a_record() -> None:
    found = {str(p.relative_to(PACKAGE)): names for p in sorted(PACKAGE.rglob("*.py"))
             if (names := _namedtuple_classes(p))}
    assert not found, f"classes on typing.NamedTuple (derive from krm_merge.records.Record): {found}"
    assert _namedtuple_classes(Path(__file__)) == ["TypedRef"]  # the scan sees one when there is one


@pytest.mark.parametrize("count", [0, 1, 2, 7])
def test_records_of_one_field_count_compile_one_constructor(count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: collections.namedtuple compiles a ``__new__`` for every class (~0.2M instructions, ~55 classes on
    an update's start-up); a Record compiles one a field count, renamed for each class's fields."""
    import builtins
    import collections

    compiled: list[str] = []
    real_eval = builtins.eval
    monkeypatch.setattr(builtins, "eval", lambda source, *a: compiled.append(source) or real_eval(source, *a))
    fields = [f"f{n}" for n in range(count)]
    made = [type(Record)(f"R{n}", (Record,), {"__module__": __name__, "__annotations__": dict.fromkeys(fields, "int")})
            for n in range(10)]
    assert len(compiled) <= 1
    monkeypatch.setattr(builtins, "eval", real_eval)
    plain = collections.namedtuple("R0", fields)
    for record in made:
        values = list(range(count))
        assert record(*values) == plain(*values) and record(**dict(zip(fields, values))) == tuple(values)
        assert record._fields == plain._fields and repr(record(*values)).split("(", 1)[1] == repr(plain(*values)).split("(", 1)[1]
        assert record(*values).__getnewargs__() == tuple(values) and record._make(values) == tuple(values)
        with pytest.raises(TypeError):
            record(*values, 99)
