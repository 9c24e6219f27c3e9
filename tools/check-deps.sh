#!/usr/bin/env bash
# Run the test suite against other versions of the dependencies than the lock's,
# in a venv of its own (build/deps-MODE):
#
#   tools/check-deps.sh lowest [PYTEST_ARGS...]   requirements/lowest.txt: the floors pyproject.toml declares
#   tools/check-deps.sh newest [PYTEST_ARGS...]   the newest releases inside the declared ranges (no lock)
#
# PYTEST_ARGS default to -m 'not image' (the image is built from the lock
# either way). The versions that matter are printed first. .ci/run runs
# `lowest` as a blocking step (a fixed lock: it cannot turn red by itself)
# and `newest` as a report that does not fail CI (a new upstream release can
# change behaviour any day; a failure there is an issue to file).
set -euo pipefail

readonly ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly PYTHON=${PYTHON:-python3}

mode=${1:-}
[[ $mode == lowest || $mode == newest ]] || { echo "usage: $0 lowest|newest [PYTEST_ARGS...]" >&2; exit 2; }
shift
(($#)) || set -- -m 'not image'

venv=$ROOT/build/deps-$mode
rm -rf "$venv"
"$PYTHON" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
cd "$ROOT"
if [[ $mode == lowest ]]; then
    "${pip[@]}" -r requirements/lowest.txt
    "${pip[@]}" --no-deps -e .
else
    # --upgrade-strategy eager: the newest release of every dependency, not
    # whatever satisfies the range first.
    "${pip[@]}" --upgrade --upgrade-strategy eager -e '.[test,docs]'
fi
"$venv/bin/python" - <<'PY'
import importlib.metadata as md
names = ("PyYAML", "ruamel.yaml", "ruamel.yaml.clib", "pytest", "hypothesis", "import-linter", "pdoc")
found = []
for name in names:
    try:
        found.append(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        pass
print("check-deps:", ", ".join(found))
PY
# The fuzzer's long CI budget (here 5 s), and every property test's whole count of examples, are spent once,
# by the main suite; here each property test draws a fifth of its examples (tests/conftest.examples), the
# structured fuzzer and the kubectl differential fewer too: the same questions asked of these dependencies.
env -u KRM_MERGE_FUZZ_RUNS PATH="$venv/bin:$PATH" KRM_MERGE_FUZZ_SECONDS="${KRM_MERGE_DEPS_FUZZ_SECONDS:-5}" \
    KRM_MERGE_EXAMPLES_SCALE="${KRM_MERGE_EXAMPLES_SCALE:-0.2}" KRM_MERGE_FUZZ_EXAMPLES="${KRM_MERGE_FUZZ_EXAMPLES:-10}" \
    KRM_MERGE_SMPDIFF_EXAMPLES="${KRM_MERGE_SMPDIFF_EXAMPLES:-50}" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
