#!/usr/bin/env bash
# Build the release files, the wheel and the sdist, and check them as a user meets them.
#
#   tools/build-dist.sh [OUT]        (default: dist)
#
# 1. `python -m build`: OUT/krm_merge-VERSION-py3-none-any.whl and OUT/krm_merge-VERSION.tar.gz,
#    VERSION being __version__ of function/krm_merge/__init__.py (the one version string).
# 2. The wheel installed into a clean virtual environment (the locked runtime dependencies,
#    hash-checked, then the wheel alone), outside the checkout: `krm-merge --version` says
#    VERSION, `krm-merge --help` runs, and the README's quick start runs on a copy of the
#    shipped example and prints its diff.
# 3. The sdist installed into another clean environment (built from source there): `--help` runs.
#
# The release workflow (.github/workflows/release.yml) runs this command to make what it
# publishes; CI (.ci/run) runs the same command, so a release builds the way CI checked.
# Environment: PYTHON (an interpreter with `build`: requirements/lock.txt has it; default python3),
# RELEASE_TAG (the tag being released, vVERSION: refused when it is not the package's version or
# CHANGELOG.md has no section for it).
set -euo pipefail

readonly ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly PYTHON=${PYTHON:-python3}
readonly OUT=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)

log() { printf 'build-dist: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

version=$(sed -n 's/^__version__ *= *["'\'']\([^"'\'']*\)["'\''].*/\1/p' "$ROOT/function/krm_merge/__init__.py")
[[ -n $version ]] || die "no __version__ in function/krm_merge/__init__.py"
if [[ -n ${RELEASE_TAG:-} && $RELEASE_TAG != "v$version" ]]; then
    die "tag $RELEASE_TAG is not the package's version v$version (function/krm_merge/__init__.py)"
fi
if [[ -n ${RELEASE_TAG:-} ]] && ! grep -q "^## \[$version\]" "$ROOT/CHANGELOG.md"; then
    die "CHANGELOG.md has no section '## [$version]': move [Unreleased] under it (CONTRIBUTING.md#releasing)"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/krm-merge-dist.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

log "python -m build -> $OUT"
rm -f "$OUT"/krm_merge-*
"$PYTHON" -m build --outdir "$OUT" "$ROOT" >"$scratch/build.log" 2>&1 || { tail -30 "$scratch/build.log" >&2; die "python -m build failed"; }
wheel=$OUT/krm_merge-$version-py3-none-any.whl
sdist=$OUT/krm_merge-$version.tar.gz
[[ -f $wheel && -f $sdist ]] || die "expected $wheel and $sdist; got: $(ls "$OUT")"
listing=$(tar -tzf "$sdist")  # not piped into grep -q: tar would die of SIGPIPE under pipefail
grep -qx "krm_merge-$version/LICENSE" <<<"$listing" || die "the sdist has no LICENSE"

log "the wheel in a clean environment"
"$PYTHON" -m venv "$scratch/wheel-env"
"$scratch/wheel-env/bin/python" -m pip install --quiet --require-hashes -r "$ROOT/requirements/lock-runtime.txt"
"$scratch/wheel-env/bin/python" -m pip install --quiet --no-deps "$wheel"
cd "$scratch"  # nothing of the checkout on the path: the installed package answers
said=$("$scratch/wheel-env/bin/krm-merge" --version)
[[ $said == "krm-merge $version" ]] || die "krm-merge --version says '$said', not 'krm-merge $version'"
"$scratch/wheel-env/bin/krm-merge" --help >/dev/null
cp -r "$ROOT/examples" "$scratch/examples"
"$scratch/wheel-env/bin/krm-merge" run examples/reorder-merge-env-order \
    --fn-config examples/reorder-merge-env-order/patch.yaml --dry-run >"$scratch/quick-start.diff"
grep -q '^+        - name: ENV6$' "$scratch/quick-start.diff" || die "the quick start printed no ENV6 line"

log "the sdist in a clean environment"
"$PYTHON" -m venv "$scratch/sdist-env"
"$scratch/sdist-env/bin/python" -m pip install --quiet --require-hashes -r "$ROOT/requirements/lock-runtime.txt"
"$scratch/sdist-env/bin/python" -m pip install --quiet --no-deps "$sdist"
"$scratch/sdist-env/bin/krm-merge" --help >/dev/null

log "ok: $(cd "$OUT" && ls krm_merge-"$version"*)"
