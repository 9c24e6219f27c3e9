"""Random Deployments and strategic merge patches for differential tests against kubectl."""

from __future__ import annotations

import random
from typing import Any

NAMES = ["A", "B", "C", "D", "E", "F"]


class DocGenerator:
    """Seeded generator of live objects and patches exercising every directive."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def env_list(self) -> list[dict[str, str]]:
        rng = self.rng
        names = rng.sample(NAMES, rng.randint(0, 5))
        if names and rng.random() < 0.1:  # duplicate names exist in real clusters
            names.insert(rng.randrange(len(names) + 1), rng.choice(names))
        return [{"name": n, "value": rng.choice(["1", "2", "3"])} for n in names]

    def deployment(self) -> dict[str, Any]:
        rng = self.rng
        containers = []
        for name in rng.sample(["c1", "c2", "c3"], rng.randint(1, 3)):
            container: dict[str, Any] = {"name": name, "image": rng.choice(["nginx", "redis"])}
            if rng.random() < 0.8:
                container["env"] = self.env_list()
            if rng.random() < 0.3:
                container["args"] = rng.sample(["x", "y", "z"], rng.randint(0, 3))
            containers.append(container)
        obj: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"replicas": rng.randint(1, 3), "template": {"spec": {"containers": containers}}},
        }
        if rng.random() < 0.7:
            obj["metadata"]["finalizers"] = rng.sample(["a", "b", "c", "d", "e"], rng.randint(0, 4))
        if rng.random() < 0.3:
            obj["metadata"]["labels"] = {"x": rng.choice(["1", "2"])}
        if rng.random() < 0.3:
            obj["spec"]["strategy"] = rng.choice(
                [{"type": "Recreate"}, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}]
            )
        return obj

    def _ordered_superset(self, keep: list[str], extra: list[str]) -> list[str]:
        order = list(keep)
        for name in extra:
            order.insert(self.rng.randrange(len(order) + 1), name)
        return order

    def container_patch(self, container: dict[str, Any]) -> dict[str, Any]:
        rng = self.rng
        patch: dict[str, Any] = {"name": container["name"]}
        if rng.random() < 0.3:
            patch["image"] = "busybox"
        if rng.random() < 0.8:
            live_names = [e["name"] for e in container.get("env", [])]
            pool = list(dict.fromkeys(live_names + rng.sample(NAMES, 2)))
            items: list[dict[str, Any]] = []
            for name in rng.sample(pool, rng.randint(0, len(pool))):
                if rng.random() < 0.2:
                    items.append({"name": name, "$patch": "delete"})
                else:
                    items.append({"name": name, "value": rng.choice(["7", "8"])})
            patch["env"] = items
            if rng.random() < 0.6:
                keep = [i["name"] for i in items if "$patch" not in i]
                extra = [n for n in pool if n not in keep]
                order = self._ordered_superset(keep, rng.sample(extra, rng.randint(0, len(extra))))
                if rng.random() < 0.1:
                    rng.shuffle(order)  # usually invalid: both tools must refuse it
                patch["$setElementOrder/env"] = [{"name": n} for n in order]
        return patch

    def patch(self, live: dict[str, Any]) -> dict[str, Any]:
        """A hand-made patch (directives included) for ``live``."""
        rng = self.rng
        patch: dict[str, Any] = {}
        if rng.random() < 0.3:
            patch["spec"] = {"replicas": rng.randint(1, 5)}
        containers = live["spec"]["template"]["spec"]["containers"]
        items: list[dict[str, Any]] = []
        for container in containers:
            if rng.random() < 0.6:
                items.append(self.container_patch(container))
            elif rng.random() < 0.15:
                items.append({"name": container["name"], "$patch": "delete"})
        if rng.random() < 0.2:
            items.append({"name": "c9", "image": "new", "env": [{"name": "A", "value": "1"}]})
        if items:
            spec = patch.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
            spec["containers"] = items
            if rng.random() < 0.5:
                keep = [i["name"] for i in items if "$patch" not in i]
                others = [c["name"] for c in containers if c["name"] not in keep]
                spec["$setElementOrder/containers"] = [{"name": n} for n in self._ordered_superset(keep, others)]
        if rng.random() < 0.6:
            metadata = patch.setdefault("metadata", {})
            added = rng.sample(["a", "b", "f", "g"], rng.randint(1, 2)) if rng.random() < 0.3 else []
            if added:
                metadata["finalizers"] = added
            if rng.random() < 0.4:
                # Never delete what the same patch adds: Go's map order would decide.
                metadata["$deleteFromPrimitiveList/finalizers"] = rng.sample(
                    [f for f in ["a", "b", "c"] if f not in added], 1
                )
            if rng.random() < 0.4:
                others = [f for f in rng.sample(list("abcdefg"), rng.randint(0, 5)) if f not in added]
                metadata["$setElementOrder/finalizers"] = self._ordered_superset(added, others)
            if rng.random() < 0.15:
                metadata["labels"] = None
        if rng.random() < 0.15:
            patch.setdefault("spec", {})["strategy"] = {"$retainKeys": ["type"], "type": "Recreate"}
        return patch

    def add_config_directives(self, desired: dict[str, Any]) -> dict[str, Any]:
        """Sometimes put directives into a configuration (users do write them)."""
        rng = self.rng
        if rng.random() < 0.3:
            desired["metadata"]["labels"] = {"$patch": rng.choice(["replace", "delete"]), "q": "1"}
        containers = desired["spec"]["template"]["spec"]["containers"]
        if rng.random() < 0.3:
            containers[0]["resources"] = {"$patch": "replace", "limits": {"cpu": "3"}}
        if rng.random() < 0.2:
            containers.append({"name": rng.choice(["c1", "c2", "c3"]), "$patch": "delete"})
        return desired
