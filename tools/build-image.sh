#!/usr/bin/env bash
# Build the krm-merge OCI image with podman, without a registry.
#
#   tools/build-image.sh [TAG]
#
# Produces localhost/krm-merge:TAG and localhost/krm-merge:VERSION, where
# VERSION is __version__ from function/krm_merge/__init__.py (TAG defaults to
# VERSION).
#
# Steps:
#   1. Base image: BASE_IMAGE if set (e.g. docker.io/library/python:3.11-slim
#      where a registry is reachable); otherwise a minimal Debian bookworm with
#      python3 + python3-venv, made with debootstrap and cached as
#      localhost/krm-merge-base:bookworm (REBUILD_BASE=1 forces a rebuild).
#   2. Wheelhouse on the host (build/image/wheelhouse): the project's wheel
#      plus binary wheels of its dependencies for the base image's Python, so
#      the image build itself downloads nothing (containers here do not trust
#      the host's TLS interception).
#   3. podman build --network none with the Dockerfile.
#
# Environment: PYTHON (host interpreter with pip, default python3),
# BASE_IMAGE, DEBIAN_MIRROR, IMAGE_NAME (default localhost/krm-merge),
# REBUILD_BASE.
set -euo pipefail

readonly ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly PYTHON=${PYTHON:-python3}
readonly IMAGE_NAME=${IMAGE_NAME:-localhost/krm-merge}
readonly LOCAL_BASE=localhost/krm-merge-base:bookworm
readonly DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly OUT_DIR=$ROOT/build/image
readonly WHEELHOUSE=$OUT_DIR/wheelhouse

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
    log "fetching dependency wheels for CPython $py_version on $machine"
    local abi="cp${py_version/./}"
    "$PYTHON" -m pip download --quiet --only-binary=:all: \
        --implementation cp --python-version "$py_version" --abi "$abi" --abi abi3 --abi none \
        --platform "manylinux2014_$machine" --platform "manylinux_2_17_$machine" \
        --platform "manylinux_2_28_$machine" --platform any \
        --dest "$WHEELHOUSE" "$WHEELHOUSE"/krm_merge-*.whl >&2
    ls "$WHEELHOUSE" | sed 's/^/build-image:   /' >&2
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

    log "podman build $IMAGE_NAME:$tag (base $base, version $version)"
    podman build --quiet --network none --pull=never \
        --build-arg "BASE_IMAGE=$base" \
        --build-arg "VERSION=$version" \
        --build-arg "WHEELHOUSE=build/image/wheelhouse" \
        --tag "$IMAGE_NAME:$tag" --tag "$IMAGE_NAME:$version" \
        --file "$ROOT/Dockerfile" "$ROOT" >/dev/null
    # Superseded builds of this image and the build stage are left dangling.
    podman image prune --force --filter label=dev.krm-merge.image=true >/dev/null || true
    local size
    size=$(podman image inspect --format '{{.Size}}' "$IMAGE_NAME:$tag")
    log "built $IMAGE_NAME:$tag and $IMAGE_NAME:$version"
    printf 'image %s:%s size %s bytes (%.1f MB)\n' "$IMAGE_NAME" "$tag" "$size" \
        "$(awk -v s="$size" 'BEGIN { print s / 1000000 }')"
}

main "$@"
