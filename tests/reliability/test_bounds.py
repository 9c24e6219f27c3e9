"""Bounded resources: alias bombs, deep nesting, huge lists, 100 MB inputs.

Every case runs the real console script in a subprocess and checks the
answer (a clean error result, or a correct output), the wall time and the
process's own peak RSS against the bounds documented in docs/reliability.md:

* refusals (alias bombs, nesting deeper than the limit) stay < 800 MB even
  for the 100 MB deep-nesting text;
* accepted inputs take CPU time proportional to their size (checked as a
  ratio between a 10x smaller and the full input) and peak RSS
  <= 150 MB + 15 x input bytes + 400 bytes per parsed YAML node.

Wall-clock limits are hang guards only (:func:`bigdata.hang_guard`, ten times
the time on a quiet machine): the suite runs on busy 2-core machines.
``KRM_MERGE_TIME_FACTOR`` scales them further.  The 100 MB case is marked
``slow`` (about 25 s on a quiet machine).
"""

from __future__ import annotations

import pytest

from .bigdata import (
    alias_bomb, deep_block_maps, deep_flow, hang_guard, long_list, many_items, measure, reorder_fc, rl,
    target_item,
)
from .harness import check_output, configmap, load_output

MB = 1024 * 1024


def _bound_rss(input_bytes: int, parsed_nodes: int = 0) -> float:
    return 150 + 15 * input_bytes / MB + 400 * parsed_nodes / MB


def _clean(m, given: bytes):  # type: ignore[no-untyped-def]
    return check_output(m.stdout.decode(), m.code, m.stderr.decode(), given.decode())


BOMB_PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n" + alias_bomb().replace("\n    ", "\n  ")[2:]


@pytest.mark.parametrize("where", ["targeted item", "patch", "functionConfig", "items list", "general reader"])
def test_alias_bomb_is_refused_quickly(where: str) -> None:
    if where == "targeted item":
        data = rl(target_item(alias_bomb()))
    elif where == "patch":
        data = rl(target_item(""), reorder_fc(BOMB_PATCH))
    elif where == "functionConfig":
        data = rl(target_item(""), "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n"
                  + alias_bomb().replace("\n", "\n  ")[:-2] + "  mode: reorder-merge\n")
    elif where == "items list":
        data = rl("".join(f"- &a{i} [" + ",".join([f"*a{i - 1}"] * 10 if i else ["lol"] * 10) + "]\n" for i in range(9)))
    else:  # JSON-ish flow input goes through the general reader, which composes the whole list
        data = ('{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"a": &a0 [1,1,1,1,1,1,1,1,1,1]'
                + "".join(f', "b{i}": &a{i} [' + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)) + "}]}\n").encode()
    m = measure(data)
    out = _clean(m, data)
    assert m.code == 1
    assert any("aliases that expand" in e or "not an object" in e for e in out.errors), out.errors
    assert m.seconds < hang_guard(0.5)  # expanding the aliases would take hours
    assert m.max_rss_mb < _bound_rss(len(data)), m.max_rss_mb


@pytest.mark.parametrize("shape", ["flow sequences", "flow mappings", "block mappings", "block sequences"])
def test_ten_thousand_deep_nesting_is_refused(shape: str) -> None:
    depth = 10_000
    if shape == "flow sequences":
        extra = deep_flow(depth)
    elif shape == "flow mappings":
        extra = "  deep: " + "{a: " * depth + "1" + "}" * depth + "\n"
    elif shape == "block mappings":
        extra = deep_block_maps(depth)  # 100 MB of indentation
    else:
        extra = "  deep:\n" + "".join("  " * (i + 2) + "-\n" for i in range(depth))
    data = rl(target_item(extra))
    m = measure(data)
    out = _clean(m, data)
    assert m.code == 1
    assert any("nested" in e and "deep" in e for e in out.errors), out.errors
    assert m.seconds < hang_guard(5)  # the 100 MB block case; parsing a deep flow to its end is quadratic
    assert m.max_rss_mb < 800, m.max_rss_mb


def test_deep_nesting_in_the_patch_is_refused() -> None:
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata: " + "[" * 10_000 + "]" * 10_000 + "\n"
    data = rl(target_item(""), reorder_fc(patch))
    m = measure(data)
    out = _clean(m, data)
    assert m.code == 1 and any("nested" in e for e in out.errors), out.errors


def test_deep_nesting_in_an_untouched_item_passes_through_byte_identical() -> None:
    other = "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: other\n" + deep_flow(10_000)
    data = rl(other + target_item(""))
    m = measure(data)
    assert m.code == 0, m.stdout[-2000:]
    assert other.encode() in m.stdout
    assert m.seconds < hang_guard(0.5)


def test_million_item_list_is_linear() -> None:
    times = {}
    for n in (100_000, 1_000_000):
        data = rl(target_item(long_list(n)))
        m = measure(data)
        out = _clean(m, data)
        assert m.code == 0, out.errors
        times[n] = m.cpu_seconds
        assert m.max_rss_mb < _bound_rss(len(data), n), (n, m.max_rss_mb)
    doc = load_output(m.stdout.decode())
    web = doc["items"][0]
    assert len(web["list"]) == 1_000_000 and web["data"] == {"patched": "yes"}
    assert m.seconds < hang_guard(4)
    assert times[1_000_000] < 20 * max(times[100_000], 0.2), times  # 10x the input, not 100x the time


def test_hundred_thousand_items_are_linear() -> None:
    times = {}
    for n in (10_000, 100_000):
        data = rl(many_items(n) + target_item(""))
        m = measure(data)
        assert m.code == 0, m.stdout[-2000:]
        times[n] = m.cpu_seconds
        assert m.max_rss_mb < _bound_rss(len(data)), (n, m.max_rss_mb)
    assert m.stdout.count(b"\n- apiVersion: v1\n") == 100_001  # and the target
    assert times[100_000] < 20 * max(times[10_000], 0.2), times


@pytest.mark.slow
def test_hundred_megabyte_input() -> None:
    data = rl(many_items(800_000) + target_item(""))
    assert len(data) > 95 * MB
    m = measure(data, timeout=600)
    assert m.code == 0, m.stdout[-2000:]
    # Untouched items keep their bytes; only the target changed.
    assert m.stdout.startswith(data[: data.index(b"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: web\n")])
    assert b'patched: "yes"' in m.stdout
    assert m.seconds < hang_guard(25)
    assert m.max_rss_mb < _bound_rss(len(data)), m.max_rss_mb


def test_huge_scalar_value() -> None:
    big = "x" * (50 * MB)
    data = rl(target_item(f"  data:\n    big: {big}\n"))
    m = measure(data)
    assert m.code == 0
    assert m.stdout.count(big.encode()) >= 1
    assert m.max_rss_mb < _bound_rss(len(data)), m.max_rss_mb


def test_configmap_functionconfig_with_huge_key_count() -> None:
    data = {"mode": "reorder-merge", **{f"k{i}": "v" for i in range(100_000)}}
    fc = "functionConfig:\n" + "".join("  " + line + "\n" for line in configmap(data).rstrip("\n").split("\n"))
    given = rl(target_item(""), fc)
    m = measure(given)
    out = _clean(m, given)
    assert m.code == 1 and any("unknown key" in e for e in out.errors)
    assert m.seconds < hang_guard(1)
