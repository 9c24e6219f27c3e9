"""Conflict rules declared in the package (``krm-merge.dev/conflicts``) against a small model of the rule.

The model: a field changed differently on both sides is decided by the
most specific rule naming it or a parent (the resource's own rules before
its package's; more path segments first, then fewer wildcards), else by
``--conflicts``; local-wins and mark keep local's value, upstream-wins
takes upstream's, and mark also leaves a marker on a field local has.
Every other field merges exactly as it does without rules.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.merge3.conflicts import ConflictPolicy
from krm_merge.outcomes.kinds import ConflictOutcome
from krm_merge.commands import conflicts
from krm_merge.update import plan as update_plan, planner
from krm_merge.krm import yamlio
from krm_merge.krm.values import same

from .test_conflict_markers import ABSENT, LEAVES, LISTS, ORIGIN, VALUES, build, changed, package, run_update

PATTERNS = ("*", "spec.*", "spec.a", "spec.b", "spec.nested", "spec.nested.c", "spec.items[*].v", "spec.items[name=x]")
POLICY = st.sampled_from(["local-wins", "upstream-wins", "mark"])


def covers(pattern: str, leaf: str) -> bool:
    rx = re.escape(pattern).replace(r"\[\*\]", r"\[[^\]]*\]").replace(r"\*", r"[^.\[]+")
    return re.fullmatch(rx + r"([.\[].*)?", leaf) is not None


def chosen(rules: dict[str, str], leaf: str, default: str) -> str:
    """The model: the policy deciding ``leaf``."""
    found = [p for p in rules if covers(p, leaf)]
    if not found:
        return default
    return rules[max(found, key=lambda p: (p.count(".") + p.count("[") + 1, -p.count("*")))]


def leaf_of(data: dict[str, Any], leaf: str) -> Any:
    spec = data["spec"]
    if leaf.startswith("spec.items"):
        name = leaf[len("spec.items[name="):][0]
        element = next(e for e in spec["items"] if e["name"] == name)
        return element.get("v", ABSENT)
    node: Any = spec
    for part in leaf.split(".")[1:]:
        if not isinstance(node, dict) or part not in node:
            return ABSENT
        node = node[part]
    return node


def with_rules(values: dict[str, Any], rules: dict[str, str]) -> dict[str, Any]:
    resource = build(values)
    if rules:
        resource["metadata"]["annotations"] = {"krm-merge.dev/conflicts": "".join(f"{json.dumps(p)}: {v}\n" for p, v in rules.items())}
    return resource


def merged(tmp: Path, name: str, local: dict[str, Any], o: Any, u: Any, policy: str) -> tuple[Path, update_plan.UpdatePlan]:
    for side, values in (("origin", o), ("upstream", u)):
        (tmp / side).mkdir(exist_ok=True)
        (tmp / side / "thing.yaml").write_text(yamlio.dump_data(build(values)))
    (tmp / name).mkdir()
    (tmp / name / "thing.yaml").write_text(yamlio.dump_data(local))
    plan = planner.plan_update(tmp / name, tmp / "origin", tmp / "upstream", conflicts=ConflictPolicy(policy))
    update_plan.apply_plan(tmp / name, plan)
    return tmp / name, plan


leaf_values = st.fixed_dictionaries({leaf: LISTS if leaf == "spec.b" else VALUES for leaf in LEAVES})


@settings(max_examples=examples(120), deadline=None)
@given(leaf_values, leaf_values, leaf_values, st.dictionaries(st.sampled_from(PATTERNS), POLICY, max_size=4),
       st.sampled_from(["upstream-wins", "local-wins"]))
def test_each_conflicting_field_gets_the_value_its_rule_says(l: Any, o: Any, u: Any, rules: dict[str, str], default: str) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        ruled, plan = merged(tmp, "ruled", with_rules(l, rules), o, u, default)
        plain, _ = merged(tmp, "plain", with_rules(l, {}), o, u, default)
        got, without = yamlio.load_data((ruled / "thing.yaml").read_text()), yamlio.load_data((plain / "thing.yaml").read_text())
        marked = {m.field for m in conflicts.find_all(ruled)}
        for leaf in LEAVES:
            both = changed(l[leaf], o[leaf]) and changed(u[leaf], o[leaf]) and changed(l[leaf], u[leaf])
            if not both:
                assert same(leaf_of(got, leaf), leaf_of(without, leaf)), leaf
                assert leaf not in marked
            elif l[leaf] is not ABSENT:  # (a field local deleted gets no marker: the marker has no line)
                policy = chosen(rules, leaf, default)
                want = u[leaf] if policy == "upstream-wins" else l[leaf]
                assert (leaf_of(got, leaf) is ABSENT) if want is ABSENT else same(leaf_of(got, leaf), want), (leaf, policy)
                assert (leaf in marked) == (policy == "mark"), (leaf, policy)
        reasons = {o.field: f"a rule: {o.rule}" if o.rule else None for o in plan.outcomes if isinstance(o, ConflictOutcome)}
        for field, reason in reasons.items():  # the report names the rule that decided, and only then
            match = [p for p in rules if covers(p, field)]
            assert reason == (f"a rule: {max(match, key=lambda p: (p.count('.') + p.count('[') + 1, -p.count('*')))}: "
                              f"{chosen(rules, field, default)}" if match else None)


# -- end to end --------------------------------------------------------------------------------

RULES = """\
  annotations:
    krm-merge.dev/conflicts: |
{rules}"""


def annotated(text: str, rules: str) -> str:
    block = RULES.format(rules="".join(f"      {line}\n" for line in rules.splitlines()))
    return text.replace("  namespace: shop\n", "  namespace: shop\n" + block, 1)


def both_changed(tmp: Path, local_rules: str = "", upstream_rules: str = "") -> Path:
    local = ORIGIN.replace("replicas: 2", "replicas: 5").replace("app:1", "app:9").replace("[a]", "[c]")
    upstream = ORIGIN.replace("replicas: 2", "replicas: 3").replace("app:1", "app:2").replace("[a]", "[b]")
    if local_rules:
        local = annotated(local, local_rules)
    if upstream_rules:
        upstream = annotated(upstream, upstream_rules)
    return package(tmp, local, upstream)


def test_resource_rules_decide_their_fields_and_the_flag_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = both_changed(tmp_path, "spec.replicas: local-wins\nspec.template.spec.containers[*].args: mark")
    out = tmp_path / "report.json"
    assert run_update(pkg, "--report", "json", str(out)) == 3  # a rule left a marker: merged, conflicts left
    text = (pkg / "app.yaml").read_text()
    assert "  replicas: 5\n" in text and "image: app:2 # pinned\n" in text
    assert re.search(r"args: \[c\] +# krm-merge:conflict upstream=\[\"b\"\] origin=\[\"a\"\]\n", text)
    assert [m.field for m in conflicts.find_all(pkg)] == ["spec.template.spec.containers[name=app].args"]
    assert "1 conflict(s) marked" in capsys.readouterr().err
    report = out.read_text()
    assert "a rule: spec.replicas: local-wins" in report
    assert "a rule: spec.template.spec.containers[*].args: mark" in report


def test_what_rules_decide_under_mark_is_not_counted_as_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31: with every conflict decided by a rule, ``--conflicts mark`` said "3 conflict(s) marked" and exited 3
    with no marker written."""
    pkg = both_changed(tmp_path, "spec.replicas: upstream-wins\nspec.template: local-wins")
    assert run_update(pkg, "--conflicts", "mark") == 0
    err = capsys.readouterr().err  # every human line: the conflicts, each decided by its rule, and the summary
    assert "marked" not in err and "krm-merge:conflict" not in (pkg / "app.yaml").read_text()
    assert not (pkg / ".krm-merge.conflicts").exists() and conflicts.main([str(pkg)]) == 0


def test_markdown_report_names_the_rule_that_decided_a_conflict(tmp_path: Path) -> None:
    pkg = both_changed(tmp_path, "spec.replicas: local-wins")
    out = tmp_path / "report.md"
    assert run_update(pkg, "--report", "markdown", str(out)) == 0
    [line] = [line for line in out.read_text().splitlines() if "`spec.replicas`" in line and line.startswith("| ")]
    # upstream-wins was the policy; the rule kept local's value, and the row says both what and why
    assert line.endswith("| local's value; a rule: spec.replicas: local-wins |")


def test_package_rules_name_a_kind_and_resource_rules_come_first(tmp_path: Path) -> None:
    pkg = both_changed(tmp_path, "spec.replicas: upstream-wins")
    for side in ("local", "origin", "upstream"):
        (tmp_path / side / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: local\n")
    (pkg / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: local\n  annotations:\n    krm-merge.dev/conflicts: |\n"
        "      Deployment:spec.replicas: local-wins\n      Deployment:spec.template.spec.containers[*].image: local-wins\n"
        "      Service:spec.template: mark\n"
    )
    assert run_update(pkg) == 0
    text = (pkg / "app.yaml").read_text()
    assert "  replicas: 3\n" in text  # the resource's own rule beats the package's
    assert "image: app:9 # pinned\n" in text  # the package's rule for Deployments
    assert "args: [b]" in text  # no rule (the Service rule names another Kind): --conflicts upstream-wins
    assert "krm-merge:conflict" not in text


def test_only_locals_rules_count(tmp_path: Path) -> None:
    """An upstream-authored rule must not override the user's choice: upstream's annotation is not read."""
    pkg = both_changed(tmp_path, upstream_rules="spec.replicas: upstream-wins\n\"*\": mark")
    assert run_update(pkg, "--conflicts", "local-wins") == 0
    text = (pkg / "app.yaml").read_text()
    assert "  replicas: 5\n" in text and "krm-merge:conflict" not in text


def test_a_fail_rule_fails_the_update_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = both_changed(tmp_path, "spec.replicas: fail")
    before = (pkg / "app.yaml").read_text()
    assert run_update(pkg) == 1
    assert "1 conflicting field(s); nothing written" in capsys.readouterr().err
    assert (pkg / "app.yaml").read_text() == before


@pytest.mark.parametrize(("rules", "message"), [
    ("spec.replicas: local-win", "rule 'spec.replicas': invalid conflicts policy 'local-win'"),
    ("spec..replicas: mark", "rule 'spec..replicas': malformed field path"),
    ("- spec.replicas", "expected a map of field path -> policy"),
])
def test_a_bad_rule_is_an_error_naming_resource_and_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str], rules: str, message: str) -> None:
    pkg = both_changed(tmp_path, rules)
    before = (pkg / "app.yaml").read_text()
    assert run_update(pkg) == 1
    err = capsys.readouterr().err
    assert "Deployment/shop/app: metadata.annotations.krm-merge.dev/conflicts: " in err and message in err
    assert "Traceback" not in err
    assert (pkg / "app.yaml").read_text() == before


# -- real kpt reads a package carrying rules ---------------------------------------------------

def test_kpt_updates_and_renders_a_package_carrying_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import require_binary

    from .world import World, cm, kptfile

    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    world.commit({"Kptfile": kptfile("pkg"), "cm.yaml": cm("settings", "1")}, tag="v1")
    world.get("v1")
    rules = "  annotations:\n    krm-merge.dev/conflicts: |\n      ConfigMap:data.a: local-wins\n      \"*\": mark\n"
    local_kptfile = (world.our_pkg / "Kptfile").read_text()  # kpt's own, with upstream and upstreamLock
    assert "  name: local\n" in local_kptfile
    world.edit_local({"Kptfile": local_kptfile.replace("  name: local\n", "  name: local\n" + rules, 1),
                      "cm.yaml": cm("settings", "5").replace("  name: settings\n", "  name: settings\n" + rules.replace("ConfigMap:", ""))})
    world.commit({"cm.yaml": cm("settings", "2")}, tag="v2")
    kpt_run = world.update_kpt("v2")
    assert kpt_run.returncode == 0, kpt_run.stderr  # kpt reads the annotations without complaint
    assert world.update_ours("v2") == 0
    text = (world.our_pkg / "cm.yaml").read_text()
    assert 'a: "5"\n' in text and "krm-merge:conflict" not in text  # the rule beats "*": mark
    assert 'a: "2"' in (world.kpt_pkg / "cm.yaml").read_text()  # kpt: upstream wins (the rules are ours)
    world.kpt("fn", "render", str(world.our_pkg))
    assert "krm-merge.dev/conflicts" in (world.our_pkg / "Kptfile").read_text()


def test_the_worked_example(tmp_path: Path) -> None:
    """examples/update-conflict-rules, as its README runs it (real kpt renders the package with its rules and marker)."""
    import os
    import subprocess
    import sys

    from tests.conftest import require_binary

    require_binary("git")
    require_binary("kpt")
    example = Path(__file__).resolve().parents[2] / "examples" / "update-conflict-rules"
    tool = str(Path(sys.executable).parent / "krm-merge")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), GIT_CONFIG_GLOBAL="/dev/null", HOME=str(tmp_path), TMPDIR=str(tmp_path))
    dest = tmp_path / "demo"
    subprocess.run(["sh", str(example / "setup.sh"), str(dest)], env=env, check=True, capture_output=True, timeout=60)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), env=env, cwd=dest, capture_output=True, text=True, timeout=120)

    assert run(tool, "update", f"{dest}/local@v2").returncode == 3
    text = (dest / "local" / "deployment.yaml").read_text()
    assert "  replicas: 3\n" in text and "image: nginx:1.27\n" in text
    assert 'value: staging # krm-merge:conflict upstream="production" origin="prod"\n' in text
    render = run("kpt", "fn", "render", "local")
    assert render.returncode == 0, render.stderr
    assert "# krm-merge:conflict" in (dest / "local" / "deployment.yaml").read_text()
    assert run(tool, "resolve", str(dest / "local"), "--take", "upstream").returncode == 0
    assert "value: production\n" in (dest / "local" / "deployment.yaml").read_text()
