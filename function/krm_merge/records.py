"""Typed records: ``class Point(Record)`` is ``typing.NamedTuple``'s class syntax, built without its type checks.

``typing.NamedTuple`` checks every field's annotation when it creates the
class; with ``from __future__ import annotations`` each one is a string that
it compiles into a ``ForwardRef``.  krm-merge creates about sixty record
classes on every update's start-up, and those checks were ~2 ms of it (issue
33).  A :class:`Record` is the same ``collections.namedtuple`` with the class
body's defaults, methods and docstring; nothing reads the annotations at run
time.  Type checkers see ``typing.NamedTuple`` itself.

The rules ``typing.NamedTuple`` enforces on the class body hold here too (a
field without a default after one with, a name the tuple reserves); ``Generic``
records and the functional form ``NamedTuple("P", [...])`` are not supported.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    # What the class body may not define (typing.NamedTuple refuses them too), and what it keeps for itself.
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                             "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _RecordMeta(type):
        """Turns ``class P(Record): ...`` into a namedtuple (the class ``Record`` itself stays a plain marker)."""

        def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            if not bases:  # Record itself
                return super().__new__(mcls, name, bases, namespace)
            if bases != (Record,):
                raise TypeError(f"{name}: a Record derives from Record alone")
            annotations = dict(namespace.get("__annotations__", {}))
            fields = list(annotations)
            defaults = [namespace[field] for field in fields if field in namespace]
            if any(field not in namespace for field in fields[len(fields) - len(defaults):]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            record = collections.namedtuple(name, fields, defaults=defaults, module=namespace["__module__"])
            record.__annotations__ = record.__new__.__annotations__ = annotations
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"{name}: cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in annotations:
                    setattr(record, key, value)
            return record

    class Record(metaclass=_RecordMeta):
        """The base of a typed record (see the module's docstring)."""


__all__ = ["Record"]
