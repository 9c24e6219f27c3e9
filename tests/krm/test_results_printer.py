"""The results printer (krm/yamlio.dump_results) writes what the libyaml dumper writes, without loading PyYAML.

Issue 45: a function run that reports results (every promote run) imported PyYAML (~99M instructions)
to print them.  dump_results prints a results document itself whenever every value is one it writes
exactly as the dumper does, and hands the rest to the dumper: the two must never differ.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm import yamlio
from krm_merge.krm.results import Field, File, ResourceRef, Result

# Words the quoting rules single out, between ordinary text: types, indicators, document markers.
_TRICKY = ["", "y", "n", "yes", "No", "null", "~", "true", "1", "0x1f", "1.5", ".inf", "2024-01-02", "=", "<<", "-",
           "--v=2", "---x", "...", "- x", "? x", ":x", "a: b", "a:b", "#x", "a #b", "a#b", "'q'", '"q"', "x:", "@x",
           "`x`", " lead", "trail ", "tab\there", "back\\slash", "caf\u00e9", "\u2028", "\ufeff", "emoji \U0001F600",
           "a\nb", "x" * 130, "set a.b to '1' (was '2') for marker 'ns:pipe:env'"]
_TEXT = st.one_of(st.sampled_from(_TRICKY), st.text(max_size=12))
_SCALAR = st.one_of(_TEXT, st.integers(-10**20, 10**20), st.booleans(), st.none())
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(_TEXT, inner, max_size=3)), max_leaves=6)
_RESULTS = st.lists(st.builds(
    Result, _TEXT, st.sampled_from(["error", "warning", "info"]),
    st.one_of(st.none(), st.builds(ResourceRef, _TEXT, _TEXT, _TEXT, _TEXT)),
    st.one_of(st.none(), st.builds(Field, _TEXT, _VALUE, _VALUE)),
    st.one_of(st.none(), st.builds(File, _TEXT, st.integers(0, 9))),
    st.dictionaries(_TEXT, _TEXT, max_size=3)), max_size=4)


@settings(max_examples=examples(400), deadline=None)
@given(_RESULTS)
def test_the_results_are_printed_as_the_dumper_prints_them(results: list[Result]) -> None:
    assert yamlio.dump_results(results) == yamlio.dump_data({"results": [r.to_dict() for r in results]})


def _printed_in_a_fresh_process(results: str) -> tuple[str, bool]:
    code = ("import sys\nfrom krm_merge.krm import yamlio\nfrom krm_merge.krm.results import *\n"
            f"sys.stdout.write(yamlio.dump_results({results}))\nsys.stderr.write(str('yaml' in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout, done.stderr == "True"


def test_a_modes_results_are_printed_without_pyyaml() -> None:
    results = ("[Result(\"set spec.image to 'app:1.2' (was 'app:1.1') for marker 'default:app:prod'\", 'info', "
               "ResourceRef('apps/v1', 'Deployment', 'web', 'prod'), Field('spec.image', 'app:1.1', 'app:1.2'), "
               "File('web.yaml', 1), {'kind': 'fieldSet'}), Result('no match', 'warning')]")
    printed, loaded = _printed_in_a_fresh_process(results)
    assert not loaded and printed.startswith("results:\n- message: set spec.image to 'app:1.2' ")
    expected: Any = eval(results, {"Result": Result, "ResourceRef": ResourceRef, "Field": Field, "File": File})
    assert printed == yamlio.dump_data({"results": [r.to_dict() for r in expected]})
