"""Typed records: ``class Point(Record)`` is ``typing.NamedTuple``'s class syntax, built without its type checks.

``typing.NamedTuple`` checks every field's annotation when it creates the
class; with ``from __future__ import annotations`` each one is a string that
it compiles into a ``ForwardRef``.  krm-merge creates about sixty record
classes on every update's start-up, and those checks were ~2 ms of it (issue
33).  A :class:`Record` is the same ``collections.namedtuple`` with the class
body's defaults, methods and docstring; nothing reads the annotations at run
time.  Type checkers see ``typing.NamedTuple`` itself.  The class is built as
``collections.namedtuple`` builds it, but for its ``__new__``: namedtuple
compiles that constructor's source for every class, a Record compiles one a
field count and renames its arguments (issue 45: ~0.2M instructions a class).

The rules ``typing.NamedTuple`` enforces on the class body hold here too (a
field without a default after one with, a name the tuple reserves); ``Generic``
records and the functional form ``NamedTuple("P", [...])`` are not supported.
"""

from __future__ import annotations

import collections
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
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
            record = _namedtuple(name, fields, defaults, namespace["__module__"])
            record.__annotations__ = record.__new__.__annotations__ = annotations
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"{name}: cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in annotations:
                    setattr(record, key, value)
            return record

    _tuple_new = tuple.__new__
    _tuplegetter = collections._tuplegetter  # type: ignore[attr-defined]
    _function = type(lambda: None)
    _NEW_CODE: dict[int, Any] = {}  # field count -> the code of a __new__ with placeholder argument names

    def _new_code(fields: tuple[str, ...]) -> Any:
        """The code of ``lambda _cls, a, b: _tuple_new(_cls, (a, b))`` for these field names.

        ``collections.namedtuple`` compiles that source for every class (about half of its cost); the
        code of one field count is the same but for its local names, so it is compiled once a count
        and renamed (``code.replace(co_varnames=...)``: the body reads its arguments by position).
        """
        code = _NEW_CODE.get(len(fields))
        if code is None:
            names = ", ".join(f"_{n}" for n in range(len(fields))) + ("," if len(fields) == 1 else "")
            code = eval(f"lambda _cls, {names}: _tuple_new(_cls, ({names}))", {"_tuple_new": _tuple_new}).__code__
            _NEW_CODE[len(fields)] = code
        return code.replace(co_varnames=("_cls", *fields))

    def _namedtuple(typename: str, field_names: list[str], defaults: list[Any], module: str) -> Any:
        """``collections.namedtuple(typename, field_names, defaults=defaults, module=module)``, its ``__new__``
        made from :func:`_new_code`; the rest as the standard library builds it."""
        for field in field_names:
            if field.startswith("_"):
                raise ValueError(f"Field names cannot start with an underscore: {field!r}")
        fields = tuple(map(sys.intern, field_names))
        typename = sys.intern(typename)
        num_fields = len(fields)
        arg_list = ", ".join(fields) + ("," if num_fields == 1 else "")
        repr_fmt = "(" + ", ".join(f"{field}=%r" for field in fields) + ")"
        namespace = {"_tuple_new": _tuple_new, "__builtins__": {}, "__name__": f"namedtuple_{typename}"}
        __new__ = _function(_new_code(fields), namespace, "__new__", tuple(defaults) if defaults else None)
        __new__.__doc__ = f"Create new instance of {typename}({arg_list})"
        # The record's module, not namedtuple's "namedtuple_<name>": its annotations (strings) are names of
        # that module, where the API docs (pdoc) resolve them.
        __new__.__module__ = module

        @classmethod  # type: ignore[misc]
        def _make(cls: Any, iterable: Any) -> Any:
            result = _tuple_new(cls, iterable)
            if len(result) != num_fields:
                raise TypeError(f"Expected {num_fields} arguments, got {len(result)}")
            return result

        _make.__func__.__doc__ = f"Make a new {typename} object from a sequence or iterable"

        def _replace(self: Any, /, **kwds: Any) -> Any:
            result = self._make(map(kwds.pop, fields, self))
            if kwds:
                raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
            return result

        _replace.__doc__ = f"Return a new {typename} object replacing specified fields with new values"

        def __repr__(self: Any) -> str:
            """Return a nicely formatted representation string"""
            return self.__class__.__name__ + repr_fmt % self

        def _asdict(self: Any) -> dict[str, Any]:
            """Return a new dict which maps field names to their values."""
            return dict(zip(self._fields, self))

        def __getnewargs__(self: Any) -> tuple[Any, ...]:
            """Return self as a plain tuple.  Used by copy and pickle."""
            return tuple(self)

        for method in (__new__, _make.__func__, _replace, __repr__, _asdict, __getnewargs__):
            method.__qualname__ = f"{typename}.{method.__name__}"
        class_namespace = {
            "__doc__": f"{typename}({arg_list})", "__slots__": (), "_fields": fields,
            "_field_defaults": dict(zip(fields[num_fields - len(defaults):], defaults)) if defaults else {},
            "__new__": __new__, "_make": _make, "_replace": _replace, "__repr__": __repr__, "_asdict": _asdict,
            "__getnewargs__": __getnewargs__, "__match_args__": fields,
        }
        for index, field in enumerate(fields):
            class_namespace[field] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
        result = type(typename, (tuple,), class_namespace)
        result.__module__ = module
        return result

    class Record(metaclass=_RecordMeta):
        """The base of a typed record (see the module's docstring)."""


__all__ = ["Record"]
