"""Kptfile merge: comments on functions follow the functions; local's layout is kept (#14 item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.kptfile.merge import merge_kptfile_text
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.modes import pipeline_merge, resource_merge

# 4-space mappings, wide sequences, comments everywhere, no final newline
LOCAL = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
    name: app # local name
pipeline:
    # the functions
    mutators:
        # labels for everything
        - image: gcr.io/kpt-fn/set-labels:v0.1
          configMap:
              app: web
        # the namespace
        - image: gcr.io/kpt-fn/set-namespace:v0.1 # pinned
          configMap:
              namespace: prod
    # validation below
    validators:
        # schema check
        - image: gcr.io/kpt-fn/kubeval:v0.3
    # end of pipeline"""

ORIGIN = LOCAL + "\n"

# upstream writes 2-space compact YAML: its comments must be re-indented into local's layout
UPSTREAM_ADDS = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  # the functions
  mutators:
  # a new first function
  - image: gcr.io/kpt-fn/apply-setters:v0.2
  # labels for everything
  - image: gcr.io/kpt-fn/set-labels:v0.1
    configMap:
      app: web
  # the namespace
  - image: gcr.io/kpt-fn/set-namespace:v0.1 # pinned
    configMap:
      namespace: prod
  # upstream's new last function
  - image: gcr.io/kpt-fn/ensure-name-substring:v0.2
  # validation below
  validators:
  # schema check
  - image: gcr.io/kpt-fn/kubeval:v0.3
  # end of pipeline
"""


def two_space(text: str) -> str:
    """The same Kptfile with 2-space mappings and kpt's wide sequences (what function mode sees)."""
    depth = {0: 0, 4: 2, 8: 4, 10: 6, 14: 8}
    out = []
    for line in text.split("\n"):
        n = len(line) - len(line.lstrip(" "))
        out.append(" " * depth[n] + line.lstrip(" ") if line.strip() else line)
    return "\n".join(out)


def comment_above(text: str, line_start: str) -> str:
    """The comment line right above the first line containing ``line_start``."""
    lines = text.splitlines()
    i = next(n for n, line in enumerate(lines) if line_start in line)
    return lines[i - 1].strip()


def modes_output(local: str, origin: str, upstream: str) -> list[str]:
    """The merged local Kptfile through the text API, then (2-space copies) pipeline-merge and resource-merge.

    The function modes read the item's path from its metadata, which the header
    scan does not yet find at a 4-space indent (#14 item 4, not this module's).
    """
    out = [merge_kptfile_text(local, origin, upstream).text]
    local, origin = two_space(local), two_space(origin)
    upstream = two_space(upstream) if "\n    name: app" in upstream else upstream
    for mode in (pipeline_merge, resource_merge):
        rl = ResourceList()
        rl.items = [
            KubeObject.from_text(local, path="local/Kptfile"),
            KubeObject.from_text(origin, path="origin/Kptfile"),
            KubeObject.from_text(upstream, path="upstream/Kptfile"),
        ]
        before = rl.items[0].text
        mode.run(rl, mode.config_from_configmap({}))
        (merged,) = [o for o in rl.items if o.path == "local/Kptfile"]
        out.append(merged.text)
        if upstream == origin:
            assert merged.text == before, mode  # a no-op keeps the item byte for byte
    return out


def test_no_op_keeps_local_bytes_in_every_entry_point() -> None:
    text, *_in_modes = modes_output(LOCAL, ORIGIN, ORIGIN)  # the modes assert it for their items
    assert text == LOCAL  # 4-space, wide, no final newline, every comment


def test_new_upstream_functions_bring_their_own_comments() -> None:
    outs = modes_output(LOCAL, ORIGIN, UPSTREAM_ADDS)
    for out in outs:
        # local's order first, upstream additions appended, each with its comment
        assert comment_above(out, "apply-setters") == "# a new first function"
        assert comment_above(out, "ensure-name-substring") == "# upstream's new last function"
        assert comment_above(out, "set-labels") == "# labels for everything"
        assert comment_above(out, "kubeval") == "# schema check"
        # nothing duplicated, nothing lost
        for comment in ("# the functions", "# labels for everything", "# the namespace", "# pinned",
                        "# validation below", "# schema check", "# end of pipeline", "# local name"):
            assert out.count(comment) == 1, (comment, out)
        assert out.rstrip().endswith("# end of pipeline")
    four = outs[0]  # local's layout: 4-space mappings, dashes 8 deep under `mutators`, comments at the dash
    assert "\n        # a new first function\n        - image: gcr.io/kpt-fn/apply-setters:v0.2\n" in four
    assert "\n          configMap:\n              app: web\n" in four
    assert not four.endswith("\n")
    for two in outs[1:]:
        assert "\n    # a new first function\n    - image: gcr.io/kpt-fn/apply-setters:v0.2\n" in two


def test_comment_upstream_added_or_changed_is_taken_unless_local_changed_it() -> None:
    upstream = ORIGIN.replace("# the namespace", "# the namespace (required)").replace(
        "        - image: gcr.io/kpt-fn/kubeval:v0.3", "        # schema check\n        # strict\n        - image: gcr.io/kpt-fn/kubeval:v0.3"
    ).replace("        # schema check\n        # schema check", "        # schema check")
    for out in modes_output(LOCAL, ORIGIN, upstream):
        assert comment_above(out, "set-namespace") == "# the namespace (required)"
        assert comment_above(out, "kubeval") == "# strict"
    local = LOCAL.replace("# the namespace", "# our namespace")
    for out in modes_output(local, ORIGIN, upstream):
        assert comment_above(out, "set-namespace") == "# our namespace"  # local's edit wins


def test_comment_goes_with_a_function_deleted_upstream() -> None:
    upstream = ORIGIN.replace(
        "        # labels for everything\n        - image: gcr.io/kpt-fn/set-labels:v0.1\n          configMap:\n              app: web\n", ""
    )
    for out in modes_output(LOCAL, ORIGIN, upstream):
        assert "set-labels" not in out and "# labels for everything" not in out
        assert comment_above(out, "set-namespace") == "# the namespace"
    assert "# the functions\n    mutators:\n        # the namespace\n" in modes_output(LOCAL, ORIGIN, upstream)[0]


def test_comments_follow_functions_local_moved() -> None:
    """Local swapped two functions; upstream edits one's comment: it lands on that function."""
    a = "        # labels for everything\n        - image: gcr.io/kpt-fn/set-labels:v0.1\n          configMap:\n              app: web\n"
    b = "        # the namespace\n        - image: gcr.io/kpt-fn/set-namespace:v0.1 # pinned\n          configMap:\n              namespace: prod\n"
    local = ORIGIN.replace(a + b, b + a)
    upstream = ORIGIN.replace("# labels for everything", "# labels (v0.2 soon)")
    for out in modes_output(local, ORIGIN, upstream):
        assert out.index("set-namespace") < out.index("set-labels")
        assert comment_above(out, "set-labels") == "# labels (v0.2 soon)"
        assert comment_above(out, "set-namespace") == "# the namespace"
    assert modes_output(local, ORIGIN, upstream)[0].endswith("# end of pipeline\n")  # local's final newline kept


@pytest.mark.parametrize("ending", ["", "\n"])
def test_update_command_keeps_layout_and_final_newline(tmp_path: Path, ending: str) -> None:
    from krm_merge.commands import update

    local_text = LOCAL + ending
    for name, text in (("local", local_text), ("origin", ORIGIN), ("upstream", ORIGIN)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "Kptfile").write_text(text)
    args = [str(tmp_path / "local"), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream")]
    assert update.main(args) == 0
    assert (tmp_path / "local" / "Kptfile").read_text() == local_text  # no-op: byte for byte
    (tmp_path / "upstream" / "Kptfile").write_text(UPSTREAM_ADDS)
    assert update.main(args) == 0
    out = (tmp_path / "local" / "Kptfile").read_text()
    assert out.endswith("# end of pipeline" + ending)
    assert "\n        # a new first function\n        - image: gcr.io/kpt-fn/apply-setters:v0.2\n" in out


def test_list_deleted_upstream_leaves_upstream_comments_once() -> None:
    """Upstream deleted every mutator: the comment above `validators` is upstream's, once."""
    upstream = ORIGIN.replace(ORIGIN[ORIGIN.index("    mutators:"):ORIGIN.index("    # validation below")], "")
    for out in modes_output(LOCAL, ORIGIN, upstream):
        assert "mutators" not in out and "set-labels" not in out
        assert comment_above(out, "validators:") == "# validation below"
        assert out.count("# validation below") == 1 and out.count("# the functions") == 1


def test_comments_follow_functions_upstream_moved() -> None:
    """Upstream swapped two functions and re-worded one's comment: local's order stays, comments follow."""
    a = "        # labels for everything\n        - image: gcr.io/kpt-fn/set-labels:v0.1\n          configMap:\n              app: web\n"
    b = "        # the namespace\n        - image: gcr.io/kpt-fn/set-namespace:v0.1 # pinned\n          configMap:\n              namespace: prod\n"
    upstream = ORIGIN.replace(a + b, b.replace("# the namespace", "# namespace first now") + a)
    for out in modes_output(LOCAL, ORIGIN, upstream):
        assert out.index("set-labels") < out.index("set-namespace")  # upstream re-ordering is ignored (kpt)
        assert comment_above(out, "set-namespace") == "# namespace first now"
        assert comment_above(out, "set-labels") == "# labels for everything"
