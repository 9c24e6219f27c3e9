#!/usr/bin/env bash
# Build the krm-merge OCI image with podman, without a registry.
#
#   tools/build-image.sh [TAG]
#   INSTALL_FROM=lock tools/build-image.sh [TAG]
#
# Produces localhost/krm-merge:TAG and localhost/krm-merge:VERSION, where
# VERSION is __version__ from function/krm_merge/__init__.py (TAG defaults to
# VERSION), and next to it the fleet image localhost/krm-merge-fleet:TAG and
# :VERSION (the Dockerfile's fleet target: the same plus git, for a fleet
# update's Kubernetes Job; FLEET=0 skips it).
#
# Steps:
#   1. Base image: BASE_IMAGE if set (e.g. docker.io/library/python:3.11-slim
#      where a registry is reachable); otherwise a minimal Debian bookworm with
#      python3 + python3-venv, made with debootstrap and cached as
#      localhost/krm-merge-base:bookworm (REBUILD_BASE=1 forces a rebuild).
#   2. Wheelhouse on the host (build/image/wheelhouse): the project's wheel
#      plus the binary wheels of requirements/lock-runtime.txt (hash-checked)
#      for the base image's Python, so the image build itself downloads
#      nothing (containers here do not trust the host's TLS interception).
#   3. podman build --network none with the Dockerfile (INSTALL_FROM=wheelhouse).
#   4. podman build --target fleet --network host: the same stages (cached)
#      plus git from the base's Debian archive (DEBIAN_MIRROR's, for the
#      debootstrapped base), the only step that needs a network.
#
# INSTALL_FROM=lock builds the way a plain `docker build .` does instead (the
# Dockerfile's default: the lock installed from an index, the project from the
# source), with the index served from the wheelhouse (plus setuptools, the
# build backend) on 127.0.0.1 and podman build --network host: this is how CI
# tests the plain build without a registry.
#
# Environment: PYTHON (host interpreter with pip, default python3),
# BASE_IMAGE, DEBIAN_MIRROR, IMAGE_NAME (default localhost/krm-merge),
# FLEET_IMAGE_NAME (default IMAGE_NAME-fleet), FLEET (1, the default, or 0),
# REBUILD_BASE, INSTALL_FROM (wheelhouse, the default, or lock).
set -euo pipefail

readonly ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly PYTHON=${PYTHON:-python3}
readonly IMAGE_NAME=${IMAGE_NAME:-localhost/krm-merge}
readonly FLEET_IMAGE_NAME=${FLEET_IMAGE_NAME:-$IMAGE_NAME-fleet}
readonly LOCAL_BASE=localhost/krm-merge-base:bookworm
readonly DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly OUT_DIR=$ROOT/build/image
readonly WHEELHOUSE=$OUT_DIR/wheelhouse
readonly INDEX_DIR=$OUT_DIR/index
readonly INSTALL_FROM=${INSTALL_FROM:-wheelhouse}

log() { printf 'build-image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

project_version() {
    local version
    version=$(sed -n 's/^__version__ *= *["'\'']\([^"'\'']*\)["'\''].*/\1/p' \
        "$ROOT/function/krm_merge/__init__.py")
    [[ -n $version ]] || die "no __version__ in function/krm_merge/__init__.py"
    echo "$version"
}

# Debian minbase + python3 + python3-venv, stripped of caches and docs.
build_local_base() {
    command -v debootstrap >/dev/null || die "debootstrap missing (run .ci/setup-podman.sh)"
    [[ $(id -u) -eq 0 ]] || die "building the base image needs root (debootstrap)"
    local rootfs
    rootfs=$(mktemp -d /var/tmp/krm-merge-rootfs.XXXXXX)
    # shellcheck disable=SC2064  # expand now: the path is fixed
    trap "rm -rf '$rootfs'" RETURN
    log "debootstrap bookworm (minbase, python3, python3-venv) from $DEBIAN_MIRROR"
    debootstrap --variant=minbase --include=python3,python3-venv \
        bookworm "$rootfs" "$DEBIAN_MIRROR" >"$OUT_DIR/debootstrap.log" 2>&1 \
        || { tail -20 "$OUT_DIR/debootstrap.log" >&2; die "debootstrap failed"; }
    rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/log/* \
        "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* \
        "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
        "$rootfs"/tmp/* "$rootfs"/var/tmp/*
    grep -q '^nobody:' "$rootfs/etc/passwd" || die "base has no nobody user"
    tar --numeric-owner -C "$rootfs" -cf - . | podman import --quiet \
        --change 'CMD ["/usr/bin/python3"]' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        - "$LOCAL_BASE" >/dev/null
    log "created $LOCAL_BASE"
}

ensure_base() {
    local base=$1
    if [[ $base == "$LOCAL_BASE" ]]; then
        if [[ ${REBUILD_BASE:-0} == 1 ]] || ! podman image exists "$base"; then
            build_local_base
        else
            log "reusing cached $base"
        fi
    elif ! podman image exists "$base"; then
        log "pulling $base"
        podman pull --quiet "$base" >/dev/null
    fi
}

# "3.11 x86_64" as seen by the base image's python3: the wheels must match it.
base_python_target() {
    podman run --rm --network none --pull never --entrypoint python3 "$1" \
        -c 'import platform, sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}", platform.machine())'
}

# Copy the files git knows about (tracked and untracked-but-not-ignored), so a
# stale build/ or egg-info in the working tree cannot leak into the wheel.
snapshot_source() {
    local dest=$1
    if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
            -- pyproject.toml setup.cfg setup.py README.md LICENSE function \
            | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ \
            | tar --null -T - -cf -) | tar -C "$dest" -xf -
    else
        cp -r "$ROOT/pyproject.toml" "$ROOT/function" "$dest"/
        [[ -f $ROOT/README.md ]] && cp "$ROOT/README.md" "$dest"/
    fi
    # pyproject names README.md as the long description; tolerate its absence.
    [[ -f $dest/README.md ]] || echo "krm-merge" >"$dest/README.md"
}

build_wheelhouse() {
    local py_version=$1 machine=$2 src
    rm -rf "$WHEELHOUSE"
    mkdir -p "$WHEELHOUSE"
    src=$(mktemp -d "${TMPDIR:-/tmp}/krm-merge-src.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$src'" RETURN
    snapshot_source "$src"
    log "building the project wheel"
    "$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$WHEELHOUSE" "$src" >&2
    log "fetching the locked dependency wheels for CPython $py_version on $machine"
    download_wheels "$py_version" "$machine" "$WHEELHOUSE" --require-hashes -r "$ROOT/requirements/lock-runtime.txt"
    ls "$WHEELHOUSE" | sed 's/^/build-image:   /' >&2
}

# Binary wheels for the base image's Python: download_wheels VERSION MACHINE DEST PIP_ARGS...
download_wheels() {
    local py_version=$1 machine=$2 dest=$3
    shift 3
    local abi="cp${py_version/./}"
    "$PYTHON" -m pip download --quiet --only-binary=:all: \
        --implementation cp --python-version "$py_version" --abi "$abi" --abi abi3 --abi none \
        --platform "manylinux2014_$machine" --platform "manylinux_2_17_$machine" \
        --platform "manylinux_2_28_$machine" --platform any \
        --dest "$dest" "$@" >&2
}

# A PEP 503 simple index of the wheelhouse and the build backend, for INSTALL_FROM=lock.
build_index() {
    local py_version=$1 machine=$2
    rm -rf "$INDEX_DIR"
    mkdir -p "$INDEX_DIR/files"
    cp "$WHEELHOUSE"/*.whl "$INDEX_DIR/files/"
    rm -f "$INDEX_DIR"/files/krm_merge-*.whl  # the plain build installs the project from its source
    download_wheels "$py_version" "$machine" "$INDEX_DIR/files" \
        "$(sed -n 's/^requires = \["\([^"]*\)"\]/\1/p' "$ROOT/pyproject.toml")"
    "$PYTHON" - "$INDEX_DIR" <<'PY'
import hashlib, html, pathlib, re, sys
root = pathlib.Path(sys.argv[1])
projects: dict[str, list[pathlib.Path]] = {}
for wheel in sorted((root / "files").glob("*.whl")):
    name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
    projects.setdefault(name, []).append(wheel)
for name, wheels in projects.items():
    page = root / "simple" / name / "index.html"
    page.parent.mkdir(parents=True)
    links = "".join(
        f'<a href="../../files/{html.escape(w.name)}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">'
        f"{html.escape(w.name)}</a>\n" for w in wheels)
    page.write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
PY
}

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# podman build: offline from the wheelhouse, or from the lock through a local index.
build_image() {
    local base=$1 version=$2 tag=$3 py_version=$4 machine=$5
    local -a way=(--network none --build-arg INSTALL_FROM=wheelhouse)
    if [[ $INSTALL_FROM == lock ]]; then
        build_index "$py_version" "$machine"
        local port server
        port=$(free_port)
        "$PYTHON" -m http.server --bind 127.0.0.1 --directory "$INDEX_DIR" "$port" >"$OUT_DIR/index.log" 2>&1 &
        server=$!
        # shellcheck disable=SC2064  # expand now: the pid is fixed
        trap "kill $server 2>/dev/null || true" RETURN EXIT
        # No INSTALL_FROM: the Dockerfile's defaults, as in a plain docker build.
        way=(--network host --build-arg "PIP_INDEX_URL=http://127.0.0.1:$port/simple/")
    elif [[ $INSTALL_FROM != wheelhouse ]]; then
        die "INSTALL_FROM must be wheelhouse or lock, not $INSTALL_FROM"
    fi
    log "podman build $IMAGE_NAME:$tag (base $base, version $version, from the $INSTALL_FROM)"
    podman build --quiet --pull=never "${way[@]}" \
        --build-arg "BASE_IMAGE=$base" \
        --build-arg "VERSION=$version" \
        --tag "$IMAGE_NAME:$tag" --tag "$IMAGE_NAME:$version" \
        --file "$ROOT/Dockerfile" "$ROOT" >/dev/null
}

# The fleet image: the Dockerfile's fleet target, from the wheelhouse (its stages are the function
# image's, cached) plus git from the Debian archive, so this build alone has a network.
build_fleet_image() {
    local base=$1 version=$2 tag=$3
    log "podman build $FLEET_IMAGE_NAME:$tag (--target fleet: the function image plus git)"
    podman build --quiet --pull=never --network host --target fleet \
        --build-arg INSTALL_FROM=wheelhouse \
        --build-arg "BASE_IMAGE=$base" \
        --build-arg "VERSION=$version" \
        --tag "$FLEET_IMAGE_NAME:$tag" --tag "$FLEET_IMAGE_NAME:$version" \
        --file "$ROOT/Dockerfile" "$ROOT" >/dev/null
}

report_size() {
    local size
    size=$(podman image inspect --format '{{.Size}}' "$1")
    printf 'image %s size %s bytes (%.1f MB)\n' "$1" "$size" "$(awk -v s="$size" 'BEGIN { print s / 1000000 }')"
}

main() {
    local version tag base target
    version=$(project_version)
    tag=${1:-$version}
    base=${BASE_IMAGE:-$LOCAL_BASE}
    command -v podman >/dev/null || die "podman missing (run .ci/setup-podman.sh)"
    mkdir -p "$OUT_DIR"

    ensure_base "$base"
    target=$(base_python_target "$base") || die "cannot run python3 in $base"
    # shellcheck disable=SC2086  # "3.11 x86_64" -> two arguments
    build_wheelhouse $target

    # shellcheck disable=SC2086  # "3.11 x86_64" -> two arguments
    build_image "$base" "$version" "$tag" $target
    [[ ${FLEET:-1} == 0 ]] || build_fleet_image "$base" "$version" "$tag"
    # Superseded builds of this image and the build stage are left dangling.
    podman image prune --force --filter label=dev.krm-merge.image=true >/dev/null || true
    log "built $IMAGE_NAME:$tag and $IMAGE_NAME:$version"
    report_size "$IMAGE_NAME:$tag"
    [[ ${FLEET:-1} == 0 ]] || report_size "$FLEET_IMAGE_NAME:$tag"
}

main "$@"
