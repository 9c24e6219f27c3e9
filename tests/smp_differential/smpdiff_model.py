"""Hypothesis strategies: small Deployments, Services, Pods and SMP patches for them.

A tiny type model of the fields we exercise drives both the objects and the
patches.  The patches use every directive (``$setElementOrder``,
``$deleteFromPrimitiveList``, ``$patch: delete/replace``, ``$retainKeys``,
null deletes) but avoid the inputs where kubectl keeps leftovers our engine
strips on purpose (see ``smp-algorithm.md`` §14): content that is *new* to
the object never holds nulls or directives, and ``$retainKeys`` only goes on
maps the object already has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# ---------------------------------------------------------------- type model


@dataclass(frozen=True)
class Scalar:
    """A scalar field drawn from a small pool (so equal values happen)."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class Struct:
    """A map with known fields; ``required`` fields are always present in objects."""

    fields: dict[str, Any]
    required: tuple[str, ...] = ()
    retain_keys: bool = False


@dataclass(frozen=True)
class StringMap:
    """A map of strings with arbitrary keys (labels, selectors)."""

    keys: tuple[str, ...]
    values: tuple[str, ...]


@dataclass(frozen=True)
class MergeList:
    """A list of maps merged by ``key`` (``patchStrategy: merge``)."""

    element: Struct
    key: str
    key_values: tuple[Any, ...]


@dataclass(frozen=True)
class SetList:
    """A list of scalars with ``patchStrategy: merge`` (set union)."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class AtomicList:
    """A list replaced as a whole."""

    element: Any
    max_size: int = 3


NAMES = ("a", "b", "c", "d", "e")
WORDS = ("x", "y", "z", "w")

ENV = Struct({"name": Scalar(NAMES), "value": Scalar(WORDS)}, required=("name",))
CONTAINER_PORT = Struct(
    {"containerPort": Scalar((1, 80, 443, 8080)), "name": Scalar(("http", "web", "tls"))},
    required=("containerPort",),
)
VOLUME_MOUNT = Struct(
    {"mountPath": Scalar(("/a", "/b", "/c", "/d")), "name": Scalar(NAMES), "readOnly": Scalar((True, False))},
    required=("mountPath",),
)
CONTAINER = Struct(
    {
        "name": Scalar(NAMES),
        "image": Scalar(("nginx", "redis", "busybox:1", "app:2")),
        "args": AtomicList(Scalar(WORDS)),
        "env": MergeList(ENV, "name", NAMES),
        "ports": MergeList(CONTAINER_PORT, "containerPort", (1, 80, 443, 8080)),
        "volumeMounts": MergeList(VOLUME_MOUNT, "mountPath", ("/a", "/b", "/c", "/d")),
        "workingDir": Scalar(("/", "/srv")),
    },
    required=("name",),
)
VOLUME = Struct(
    {
        "name": Scalar(NAMES),
        "configMap": Struct({"name": Scalar(WORDS), "optional": Scalar((True, False))}),
        "emptyDir": Struct({"medium": Scalar(("", "Memory"))}),
        "secret": Struct({"secretName": Scalar(WORDS)}),
    },
    required=("name",),
    retain_keys=True,
)
TOLERATION = Struct({"key": Scalar(WORDS), "operator": Scalar(("Exists", "Equal")), "effect": Scalar(("NoSchedule",))})
POD_SPEC = Struct(
    {
        "containers": MergeList(CONTAINER, "name", NAMES),
        "initContainers": MergeList(CONTAINER, "name", NAMES),
        "volumes": MergeList(VOLUME, "name", NAMES),
        "tolerations": AtomicList(TOLERATION),
        "imagePullSecrets": MergeList(Struct({"name": Scalar(WORDS)}, required=("name",)), "name", WORDS),
        "nodeSelector": StringMap(("zone", "disk", "os"), WORDS),
        "serviceAccountName": Scalar(WORDS),
        "hostname": Scalar(WORDS),
    },
    required=("containers",),
)
METADATA = Struct(
    {
        "name": Scalar(("obj",)),
        "labels": StringMap(("app", "tier", "env"), WORDS),
        "annotations": StringMap(("note", "owner"), WORDS),
        "finalizers": SetList(("f1", "f2", "f3", "f4", "f5")),
    },
    required=("name",),
)
DEPLOYMENT = Struct(
    {
        "metadata": METADATA,
        "spec": Struct(
            {
                "replicas": Scalar((1, 2, 3)),
                "strategy": Struct(
                    {
                        "type": Scalar(("RollingUpdate", "Recreate")),
                        "rollingUpdate": Struct(
                            {"maxSurge": Scalar((1, "25%")), "maxUnavailable": Scalar((0, "50%"))}
                        ),
                    },
                    retain_keys=True,
                ),
                "selector": Struct({"matchLabels": StringMap(("app", "tier"), WORDS)}),
                "template": Struct(
                    {"metadata": Struct({"labels": StringMap(("app", "tier"), WORDS)}), "spec": POD_SPEC},
                    required=("spec",),
                ),
            },
            required=("template", "strategy"),
        ),
    },
    required=("metadata", "spec"),
)
SERVICE_PORT = Struct(
    {
        "port": Scalar((80, 443, 8080, 9090)),
        "targetPort": Scalar((80, "http", 8443)),
        "name": Scalar(("http", "https", "metrics")),
        "protocol": Scalar(("TCP", "UDP")),
    },
    required=("port",),
)
SERVICE = Struct(
    {
        "metadata": METADATA,
        "spec": Struct(
            {
                "type": Scalar(("ClusterIP", "NodePort")),
                "selector": StringMap(("app", "tier"), WORDS),
                "ports": MergeList(SERVICE_PORT, "port", (80, 443, 8080, 9090)),
                "externalIPs": AtomicList(Scalar(("10.0.0.1", "10.0.0.2"))),
                "sessionAffinity": Scalar(("None", "ClientIP")),
            }
        ),
    },
    required=("metadata", "spec"),
)
POD = Struct({"metadata": METADATA, "spec": POD_SPEC}, required=("metadata", "spec"))

DIRECTIVES = (
    "$setElementOrder",
    "$deleteFromPrimitiveList",
    "$patch: delete",
    "$patch: delete (element)",
    "$patch: replace",
    "$patch: replace (list)",
    "$retainKeys",
    "null",
)

# Inputs outside everyday use, each the focus of some examples: duplicate
# keys in live lists, a patched unknown field (a lookup error on both
# sides), invalid `$patch` values, list elements without their merge key,
# merge keys of the wrong JSON type ("80" for 80), list elements holding
# `$patch: replace`, directives on atomic lists, `$retainKeys` on any map.
ODDITIES = (
    "duplicates",
    "unknown field",
    "bad $patch",
    "missing merge key",
    "key type",
    "element $patch: replace",
    "directive on atomic list",
    "$retainKeys elsewhere",
)

KINDS: dict[tuple[str, str], Struct] = {
    ("apps/v1", "Deployment"): DEPLOYMENT,
    ("v1", "Service"): SERVICE,
    ("v1", "Pod"): POD,
}

# ---------------------------------------------------------------- objects


@dataclass(frozen=True)
class ObjectStyle:
    """Unusual but legal object content, switched on for some examples."""

    duplicates: bool = False  # merge lists and sets with repeated keys/values
    unknown_fields: bool = False  # maps carry a field the schema does not know


PLAIN = ObjectStyle()
UNKNOWN_FIELD = "extraField"
UNKNOWN_LIST = "extraList"


def values_of(model: Any, draw: Any, depth: int = 0, style: ObjectStyle = PLAIN) -> Any:
    """Draw a clean value (no nulls, no directives) of ``model``."""
    if isinstance(model, Scalar):
        return draw(st.sampled_from(model.values))
    if isinstance(model, StringMap):
        keys = draw(st.lists(st.sampled_from(model.keys), unique=True, max_size=len(model.keys)))
        return {k: draw(st.sampled_from(model.values)) for k in keys}
    if isinstance(model, SetList):
        return draw(st.lists(st.sampled_from(model.values), unique=not style.duplicates, max_size=4))
    if isinstance(model, AtomicList):
        count = draw(st.integers(0, model.max_size))
        return [values_of(model.element, draw, depth + 1, style) for _ in range(count)]
    if isinstance(model, MergeList):
        low = 1 if draw(st.integers(0, 9)) >= 2 else 0
        keys = draw(
            st.lists(st.sampled_from(model.key_values), unique=not style.duplicates, min_size=low, max_size=3)
        )
        return [element_with_key(model, k, draw, depth + 1, style) for k in keys]
    if isinstance(model, Struct):
        result: dict[str, Any] = {}
        for name, sub in model.fields.items():
            if name in model.required or draw(st.integers(0, 9)) >= 4:
                result[name] = values_of(sub, draw, depth + 1, style)
        if style.unknown_fields and draw(st.booleans()):
            result[UNKNOWN_FIELD] = {"a": draw(st.sampled_from(WORDS))}
        if style.unknown_fields and draw(st.booleans()):
            result[UNKNOWN_LIST] = [draw(st.sampled_from(WORDS))]
        return result
    raise TypeError(model)


def element_with_key(
    model: MergeList, key: Any, draw: Any, depth: int, style: ObjectStyle = PLAIN
) -> dict[str, Any]:
    """A clean list element carrying merge key ``key``."""
    element = values_of(model.element, draw, depth, style)
    element[model.key] = key
    return element


@st.composite
def kube_object(draw: Any, kind: tuple[str, str], style: ObjectStyle = PLAIN) -> dict[str, Any]:
    """A small object of one of :data:`KINDS`."""
    body = values_of(KINDS[kind], draw, 0, style)
    return {"apiVersion": kind[0], "kind": kind[1], **body}


# ---------------------------------------------------------------- patches


def _interest(model: Any) -> int:
    """How much a patch of this field exercises strategic merging (a sampling weight)."""
    if isinstance(model, MergeList):
        return 6
    if isinstance(model, Struct):
        return 2 + sum(isinstance(sub, (MergeList, SetList, Struct)) for sub in model.fields.values())
    if isinstance(model, SetList):
        return 3
    return 1


def _hosts(model: Any, directive: str | None, live: Any) -> bool:
    """Whether a patch of this field, whose live value is ``live``, can use ``directive`` inside.

    Directives only go where the live object has content (new content is clean).
    """
    if directive is None or live is None:
        return False
    if isinstance(model, MergeList):
        if not live:
            return False
        return (
            directive in ("$setElementOrder", "$patch: delete (element)", "$patch: replace (list)", "null")
            or (directive == "$retainKeys" and model.element.retain_keys)
            or (directive == "key type" and isinstance(model.key_values[0], int))
            or directive == "element $patch: replace"
            or any(_hosts(model.element, directive, element) for element in live)
        )
    if isinstance(model, SetList):
        return bool(live) and directive in ("$setElementOrder", "$deleteFromPrimitiveList", "null")
    if isinstance(model, AtomicList):
        return directive in ("null", "directive on atomic list") and isinstance(model.element, Scalar) and bool(live)
    if isinstance(model, Struct):
        return (
            directive in ("$patch: delete", "$patch: replace", "null", "$retainKeys elsewhere")
            or (directive == "$retainKeys" and model.retain_keys)
            or any(_hosts(sub, directive, live.get(name)) for name, sub in model.fields.items())
        )
    return directive == "null"


@dataclass
class PatchDraw:
    """Draws a patch for a live value of a model; ``draw`` is hypothesis's."""

    draw: Any
    focus: str | None = None  # a directive made likely in this example
    directives: list[str] = field(default_factory=list)  # which directives were used (for stats)

    def coin(self, p: float) -> bool:
        """True with probability about ``p``; shrinks towards False."""
        # sampled_from draws evenly; bounded integers lean towards small values.
        yes = round(p * 20)
        return self.draw(st.sampled_from((False,) * (20 - yes) + (True,) * yes))

    def chance(self, directive: str, p: float) -> bool:
        """Whether to use ``directive`` here: likely if it is this example's focus."""
        return self.coin(0.9 if directive == self.focus else p)

    def pick_fields(self, model: Struct, live: dict[str, Any] | None, at_least_one: bool) -> list[str]:
        """Fields to patch: mostly fields the live object has, lists and nested maps first.

        That is where strategic merging happens; scalars and whole-list
        replacements are plain JSON merge patch.
        """
        if not model.fields:
            return []
        present = [name for name in model.fields if live and name in live]
        weighted = [
            name
            for name in present
            for _ in range(_interest(model.fields[name]) * (12 if _hosts(model.fields[name], self.focus, live.get(name) if live else None) else 1))
        ]
        count = self.draw(st.integers(1 if at_least_one else 0, 3))
        chosen: list[str] = []
        for _ in range(count):
            pool = weighted if weighted and not self.coin(0.25) else list(model.fields)
            name = self.draw(st.sampled_from(pool))
            if name not in chosen:
                chosen.append(name)
        return chosen

    def struct(self, model: Struct, live: dict[str, Any] | None, root: bool = False) -> dict[str, Any]:
        """A patch for a map field of ``model`` whose live value is ``live``."""
        if not root and live is not None and self.chance("$patch: delete", 0.05):
            self.directives.append("$patch: delete")
            return {"$patch": "delete"}
        if not root and self.chance("$patch: replace", 0.05):
            self.directives.append("$patch: replace")
            replacement = values_of(model, self.draw, 3)
            return {"$patch": "replace", **replacement}
        if not root and live is not None and self.chance("bad $patch", 0.0):
            self.directives.append("bad $patch")
            return {"$patch": self.draw(st.sampled_from(("merge", "bogus")))}
        patch: dict[str, Any] = {}
        if live and UNKNOWN_FIELD in live and self.chance("unknown field", 0.0):
            self.directives.append("unknown field")
            patch[UNKNOWN_FIELD] = {"b": "x"} if self.coin(0.8) else None  # map: lookup error; null: fine
        if live and UNKNOWN_LIST in live and self.chance("unknown field", 0.0):
            self.directives.append("unknown field")
            patch[UNKNOWN_LIST] = ["y"]  # list on both sides: a list lookup, an error
        for name in self.pick_fields(model, live, at_least_one=root or live is not None):
            if root and name == "metadata":
                # Keep the object identifiable: never touch metadata.name.
                patch[name] = self.struct_without(model.fields[name], live.get(name) if live else None, "name")
                continue
            self.field(patch, name, model.fields[name], live.get(name) if live else None)
        if not (root or model.retain_keys) and live is not None and patch and self.chance("$retainKeys elsewhere", 0.0):
            # The directive works whatever the schema says.
            self.directives.append("$retainKeys elsewhere")
            patch["$retainKeys"] = sorted(k for k in patch if not k.startswith("$"))
        if model.retain_keys and live is not None and patch and self.chance("$retainKeys", 0.4):
            keys = [k for k in patch if not k.startswith("$")]
            extra = [k for k in live if k not in keys and self.coin(0.3)]
            if keys and self.coin(0.1):
                keys = keys[1:]  # a patched key that is not retained: an error on both sides
            self.directives.append("$retainKeys")
            patch["$retainKeys"] = sorted(keys + extra)
        return patch

    def struct_without(self, model: Struct, live: dict[str, Any] | None, frozen: str) -> dict[str, Any]:
        """Like :meth:`struct` but never touching field ``frozen``."""
        reduced = Struct({k: v for k, v in model.fields.items() if k != frozen})
        return self.struct(reduced, live, root=True)

    def field(self, patch: dict[str, Any], name: str, model: Any, live: Any) -> None:
        """Add a patch for one field to ``patch``."""
        if live is not None and self.chance("null", 0.08):
            self.directives.append("null")
            patch[name] = None
            return
        if isinstance(model, Struct):
            patch[name] = self.struct(model, live) if live is not None else values_of(model, self.draw, 3)
        elif isinstance(model, StringMap):
            patch[name] = self.string_map(model, live)
        elif isinstance(model, MergeList):
            self.merge_list(patch, name, model, live)
        elif isinstance(model, SetList):
            self.set_list(patch, name, model, live)
        elif (
            isinstance(model, AtomicList)
            and isinstance(model.element, Scalar)
            and live
            and self.chance("directive on atomic list", 0.0)
        ):
            # `$deleteFromPrimitiveList` works on any list; `$setElementOrder` with
            # a replacing list must list exactly the patch's items.
            self.directives.append("directive on atomic list")
            if self.coin(0.5):
                patch[f"$deleteFromPrimitiveList/{name}"] = [live[0]]
            else:
                values = values_of(model, self.draw, 3)
                patch[f"$setElementOrder/{name}"] = list(values)
                patch[name] = values
        else:  # Scalar or AtomicList: replaced
            patch[name] = values_of(model, self.draw, 3)

    def string_map(self, model: StringMap, live: dict[str, Any] | None) -> dict[str, Any]:
        """Set, change or null some keys of a string map."""
        patch: dict[str, Any] = {}
        for key in self.pick_keys(model.keys, list(live or ())):
            if live and key in live and self.coin(0.25):
                patch[key] = None
            else:
                patch[key] = self.draw(st.sampled_from(model.values))
        return patch

    def pick_keys(self, pool: tuple[Any, ...], live_keys: list[Any]) -> list[Any]:
        """1-3 distinct list keys, mostly ones the live list has."""
        keys: list[Any] = []
        for _ in range(self.draw(st.integers(1, 3))):
            key = self.draw(st.sampled_from(live_keys if live_keys and not self.coin(0.3) else pool))
            if key not in keys:
                keys.append(key)
        return keys

    def merge_list(self, patch: dict[str, Any], name: str, model: MergeList, live: list[Any] | None) -> None:
        """Patch a merge list: merge/add/delete elements, maybe reorder, maybe replace."""
        live_keys = [element[model.key] for element in live or []]
        elements: list[dict[str, Any]] = []
        deleted: list[Any] = []
        for key in self.pick_keys(model.key_values, live_keys):
            if isinstance(key, int) and self.chance("key type", 0.0):
                # "80", 80.0 and true are not 80 or 1 for Go: a new element on both sides.
                self.directives.append("key type")
                variant = self.draw(st.sampled_from((str(key), float(key), key == 1)))
                elements.append(element_with_key(model, variant, self.draw, 3))
            elif key in live_keys and self.chance("element $patch: replace", 0.0):
                # An element holding `$patch: replace` turns the whole list into a replacement.
                self.directives.append("element $patch: replace")
                elements.append({**element_with_key(model, key, self.draw, 3), "$patch": "replace"})
            elif key in live_keys:
                if self.chance("$patch: delete (element)", 0.2):
                    self.directives.append("$patch: delete (element)")
                    elements.append({model.key: key, "$patch": "delete"})
                    deleted.append(key)
                else:
                    current = live[live_keys.index(key)]  # type: ignore[index]
                    reduced = Struct({k: v for k, v in model.element.fields.items() if k != model.key})
                    element = {model.key: key, **self.struct(reduced, current, root=True)}
                    if model.element.retain_keys and self.chance("$retainKeys", 0.3):
                        self.directives.append("$retainKeys")
                        element["$retainKeys"] = sorted(k for k in element if not k.startswith("$"))
                    elements.append(element)
            else:
                elements.append(element_with_key(model, key, self.draw, 3))
        if live and self.chance("missing merge key", 0.0):
            self.directives.append("missing merge key")
            element = element_with_key(model, live_keys[0], self.draw, 3)
            del element[model.key]
            elements.append(element)
        if live and self.chance("bad $patch", 0.0):
            self.directives.append("bad $patch")
            elements.append({"$patch": self.draw(st.sampled_from(("merge", "bogus")))})
        if self.chance("$patch: replace (list)", 0.06):
            self.directives.append("$patch: replace (list)")
            marker = {"$patch": "replace"}
            # kubectl stores a replacing list verbatim (leftover directives and
            # nulls included), our engine cleans it: use clean elements only.
            kept = [e[model.key] for e in elements if "$patch" not in e and model.key in e]
            elements = [element_with_key(model, key, self.draw, 3) for key in kept]
            elements.insert(0, marker)
            patch[name] = elements
            return
        if live and self.chance("$setElementOrder", 0.4):
            self.directives.append("$setElementOrder")
            kept = [e[model.key] for e in elements if "$patch" not in e and model.key in e]
            others = [k for k in live_keys if k not in kept and k not in deleted and self.coin(0.6)]
            order = self.draw(st.permutations(kept + others))
            patch[f"$setElementOrder/{name}"] = [{model.key: k} for k in order]
            if not self.coin(0.05):  # else: patch order disagrees now and then (an error)
                position = {k: i for i, k in enumerate(order)}
                elements.sort(key=lambda e: position.get(e.get(model.key), len(position)))
        if elements or not live or self.coin(0.2):
            patch[name] = elements

    def set_list(self, patch: dict[str, Any], name: str, model: SetList, live: list[Any] | None) -> None:
        """Patch a primitive merge list: add, delete from, reorder."""
        current = live or []
        deletions: list[Any] = []
        if current and self.chance("$deleteFromPrimitiveList", 0.4):
            self.directives.append("$deleteFromPrimitiveList")
            deletions = self.draw(st.lists(st.sampled_from(model.values), unique=True, min_size=1, max_size=2))
            patch[f"$deleteFromPrimitiveList/{name}"] = deletions
        candidates = [v for v in model.values if v not in deletions]
        added = self.pick_keys(tuple(candidates), [v for v in current if v in candidates]) if candidates else []
        if current and self.chance("$setElementOrder", 0.4):
            self.directives.append("$setElementOrder")
            others = [v for v in current if v not in added and v not in deletions and self.coin(0.6)]
            order = self.draw(st.permutations(added + others))
            patch[f"$setElementOrder/{name}"] = order
            position = {v: i for i, v in enumerate(order)}
            added.sort(key=lambda v: position[v])
        if added or not deletions:
            patch[name] = added


FOCI: tuple[str | None, ...] = (None, *DIRECTIVES, *ODDITIES)


@st.composite
def object_and_patch(draw: Any, focus: str | None = None) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(object, patch, directives used) for one of :data:`KINDS`.

    ``focus`` (one of :data:`FOCI`) makes that directive or oddity likely
    wherever the object allows it.
    """
    kind = draw(st.sampled_from(sorted(KINDS)))
    style = ObjectStyle(duplicates=focus == "duplicates", unknown_fields=focus == "unknown field")
    obj = draw(kube_object(kind, style))
    drawer = PatchDraw(draw, focus=focus)
    if style.duplicates:
        drawer.directives.append("duplicates")
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    patch = drawer.struct(KINDS[kind], body, root=True)
    return obj, patch, drawer.directives
