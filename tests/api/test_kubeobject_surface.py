"""``krm_merge.sdk.KubeObject`` is small and documented; krm-merge's bookkeeping is the internal ``Item``.

``kubeobject_members.txt`` pins the public members, as ``public_names.txt``
pins the module names: adding or removing one is a deliberate edit of the
list.  Every object is an ``Item`` (the reader, writer and modes need its
bookkeeping also for objects a function made), but none of ``Item``'s own
members is part of the public class or its documentation.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from krm_merge.krm.kubeobject import Item
from krm_merge.sdk import KubeObject, ResourceList, run_text

PINNED = (Path(__file__).parent / "kubeobject_members.txt").read_text().split()


def _public_members(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_the_public_members_are_the_pinned_ones() -> None:
    public = _public_members(KubeObject)
    assert sorted(public) == PINNED, "edit tests/api/kubeobject_members.txt on purpose (and docs/api.md)"


@pytest.mark.parametrize("name", PINNED)
def test_every_public_member_is_documented(name: str) -> None:
    member = vars(KubeObject)[name]
    target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)  # a slot: its own
    assert (inspect.getdoc(target) or "").strip(), f"KubeObject.{name} has no docstring"


def test_the_internal_bookkeeping_is_not_on_the_public_class() -> None:
    internal = {"source_block", "set_text", "header", "text_header", "cache_header", "reader_annotations",
                "set_reader_annotations", "place", "text_with_reader_annotations", "rt", "commit_rt",
                "forget_data", "text_data", "has_tree", "rt_repaired"}
    assert internal <= _public_members(Item)
    assert not internal & set(dir(KubeObject))


def test_the_documented_members_are_the_public_ones() -> None:
    # The class docstring (pdoc's page) names no member it does not have.
    named = {word.split("`")[0] for word in (KubeObject.__doc__ or "").split(":attr:`")[1:]}
    named |= {word.split("`")[0] for word in (KubeObject.__doc__ or "").split(":meth:`")[1:]}
    assert named <= set(PINNED), named - set(PINNED)


def test_an_object_a_function_makes_is_written_like_a_read_one() -> None:
    # KubeObject(...) and from_data make the internal item, so the writer can place and print it.
    def add(rl: ResourceList) -> None:
        made = KubeObject.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made"}},
                                    path="made.yaml")
        assert isinstance(made, KubeObject) and isinstance(KubeObject("a: 1\n"), Item)
        rl.add(made)

    out, code = run_text(add, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
    assert code == 0 and "name: made" in out and "  config.kubernetes.io/path: made.yaml" in out
