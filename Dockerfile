# krm-merge KRM function image.
#
#   docker build -t krm-merge .          (or podman build; needs a registry and PyPI)
#
# installs the runtime dependencies pinned and hash-checked in
# requirements/lock-runtime.txt from PyPI (PIP_INDEX_URL changes the index),
# then the project from this directory.
#
# tools/build-image.sh builds without any network instead
# (--build-arg INSTALL_FROM=wheelhouse): it prepares the wheelhouse on the host
# (the project's wheel and the locked dependencies' wheels) and picks the base.
#
# Default base: the official slim Python 3.11 image. Without a registry,
# tools/build-image.sh passes --build-arg BASE_IMAGE=localhost/krm-merge-base:bookworm
# (a debootstrapped Debian 12 with python3 and python3-venv).
#
# Two images: the KRM function (the last stage, the default target) and, with
# --target fleet, the same plus git for fleet updates in a Kubernetes Job
# (krm-merge fetches an upstream with git; docs/fleet.md). The fleet stage
# installs git from the base's Debian archive (it needs that network), so the
# function image's layers stay exactly the same.
ARG BASE_IMAGE=docker.io/library/python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
# lock (from an index, the default) or wheelhouse (offline).
ARG INSTALL_FROM=lock
ARG PIP_INDEX_URL=https://pypi.org/simple
# Lets tools/build-image.sh prune its own superseded images and no others.
LABEL dev.krm-merge.image=true
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
# One stage for both ways, not a stage per way chosen by FROM install-${INSTALL_FROM}:
# buildah does not resolve such a FROM from an ARG's default. The glob lets
# the copy find no wheelhouse (a plain build has none).
COPY requirements/lock-runtime.txt build/image/wheelhous[e] /wheelhouse/
COPY pyproject.toml README.md /src/
COPY function/ /src/function/
# Wheels only, hash-checked: the image has no compiler, and the lock names
# every wheel's hash. pip and setuptools are not needed at run time.
# Bytecode is compiled here with unchecked hashes: the function runs as
# nobody and cannot write __pycache__, and the image is immutable, so
# skipping the per-import source stat is safe.
RUN set -e; \
    python3 -m venv /opt/krm-merge; \
    pip="/opt/krm-merge/bin/python -m pip install --quiet"; \
    case "$INSTALL_FROM" in \
      lock) $pip --require-hashes --only-binary :all: -r /wheelhouse/lock-runtime.txt; \
            $pip --no-deps /src ;; \
      wheelhouse) $pip --no-index --find-links /wheelhouse --require-hashes -r /wheelhouse/lock-runtime.txt; \
            $pip --no-index --find-links /wheelhouse --no-deps krm-merge ;; \
      *) echo "INSTALL_FROM must be lock or wheelhouse, not $INSTALL_FROM" >&2; exit 1 ;; \
    esac; \
    /opt/krm-merge/bin/python -m pip uninstall --quiet --yes pip setuptools; \
    find /opt/krm-merge -name '__pycache__' -type d -prune -exec rm -rf {} +; \
    /opt/krm-merge/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/krm-merge/lib; \
    /opt/krm-merge/bin/krm-merge --help >/dev/null

FROM ${BASE_IMAGE} AS runtime
# The package's __version__ (tools/build-image.sh passes it; a test keeps this default equal to it).
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="krm-merge" \
      org.opencontainers.image.description="KRM function (kpt function) for safe YAML merges: strategic merge patch, kpt 3-way package merge, GitOps promotion" \
      org.opencontainers.image.source="https://github.com/krm-merge/krm-merge" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      dev.krm-merge.image="true"
# The standard library's bytecode must exist too (compileall only writes
# what is missing, so this layer stays tiny on bases that ship .pyc files).
# kpt and kustomize run the container as --user nobody: make sure it exists.
RUN python3 -m compileall -q -j 0 "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')" >/dev/null 2>&1 || true \
 && (grep -q '^nobody:' /etc/passwd \
     || echo 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >>/etc/passwd)
COPY --from=build /opt/krm-merge /opt/krm-merge
ENV PATH=/opt/krm-merge/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LANG=C.UTF-8
USER nobody
WORKDIR /tmp
ENTRYPOINT ["/opt/krm-merge/bin/krm-merge"]

# The fleet image: the function image plus git (and the CA certificates and ssh
# an https:// or ssh:// upstream needs); tagged krm-merge-fleet by tools/build-image.sh.
FROM runtime AS fleet
USER root
RUN set -e; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends git ca-certificates openssh-client >/dev/null; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /usr/share/doc/* /usr/share/man/* /usr/share/locale/*; \
    git --version
USER nobody

# The default target: the KRM function image (runtime, nothing added).
FROM runtime
