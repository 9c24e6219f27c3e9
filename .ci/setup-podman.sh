#!/usr/bin/env bash
# Prepare a Debian 12 machine (run as root) to build and run the krm-merge
# OCI image with rootful podman, without a Docker engine or a registry.
#
# Idempotent: safe to run again; it only installs what is missing and
# rewrites its own config file.
#
# Why each piece is needed on these machines:
#   runc         crun cannot start containers on the hybrid cgroup v1/v2 setup.
#   ulimits      podman's default rlimits exceed what the VM allows, and every
#                container start fails with "setrlimit ... Operation not
#                permitted"; we pin them at or below the current limits.
#   debootstrap  builds the local Debian base image (no registry to pull from).
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "setup-podman.sh: must run as root" >&2
    exit 1
fi

readonly PACKAGES=(podman runc debootstrap uidmap fuse-overlayfs slirp4netns git)
readonly CONF_DIR=/etc/containers/containers.conf.d
readonly CONF_FILE=$CONF_DIR/50-krm-merge.conf

missing_packages() {
    local pkg
    for pkg in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
            || echo "$pkg"
    done
}

install_packages() {
    local missing
    missing=$(missing_packages)
    if [[ -z $missing ]]; then
        echo "setup-podman: packages already installed"
        return
    fi
    echo "setup-podman: installing" $missing
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # With recommends (netavark, catatonit, ...): the set this was verified with.
    # shellcheck disable=SC2086  # word splitting of the package list is intended
    apt-get install -y -qq $missing >/dev/null
}

# The smaller of a current limit and a ceiling ("unlimited" maps to the
# ceiling), so containers never ask for more than the host allows.
capped_limit() {
    local current=$1 ceiling=$2
    if [[ $current == unlimited ]] || (( current > ceiling )); then
        echo "$ceiling"
    else
        echo "$current"
    fi
}

write_containers_conf() {
    local nofile=$1 nproc=$2
    mkdir -p "$CONF_DIR"
    cat >"$CONF_FILE.tmp" <<CONF
# Written by krm-merge .ci/setup-podman.sh; rewritten on every run.
# runc: crun fails on this hybrid cgroup setup. The ulimits must not exceed
# what the host lets runc set, or every container start fails with
# "error setting rlimit ... operation not permitted".
[containers]
default_ulimits = [
  "nofile=${nofile}:${nofile}",
  "nproc=${nproc}:${nproc}",
]

[engine]
runtime = "runc"
CONF
    mv "$CONF_FILE.tmp" "$CONF_FILE"
}

scratch_image() {
    local name=localhost/krm-merge-scratch:latest
    if ! podman image exists "$name"; then
        tar -cf - -T /dev/null | podman import --quiet - "$name" >/dev/null
    fi
    echo "$name"
}

# Start a container from an empty image with the host's /bin/true
# bind-mounted: proves the runtime and the ulimits work, without a registry.
container_starts() {
    podman run --rm --network none --pull never \
        -v /usr/bin/true:/true:ro -v /lib:/lib:ro -v /lib64:/lib64:ro \
        --entrypoint /true "$(scratch_image)" >/tmp/setup-podman-smoke.log 2>&1
}

# Without CAP_SYS_RESOURCE runc may not even set the current limits (here
# nproc above kernel.pid_max is refused although `ulimit -u` is higher), so
# start from the current limits and halve until a container starts.
configure_ulimits() {
    local nofile nproc pid_max
    pid_max=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 32768)
    nofile=$(capped_limit "$(ulimit -Sn)" 1048576)
    nproc=$(capped_limit "$(ulimit -Su)" "$pid_max")
    while :; do
        write_containers_conf "$nofile" "$nproc"
        if container_starts; then
            echo "setup-podman: $CONF_FILE: runtime=runc nofile=$nofile nproc=$nproc"
            echo "setup-podman: container runtime works ($(podman --version))"
            return
        fi
        if (( nofile <= 1024 && nproc <= 1024 )); then
            echo "setup-podman: cannot start a container even with low ulimits:" >&2
            cat /tmp/setup-podman-smoke.log >&2
            exit 1
        fi
        nofile=$(( nofile > 1024 ? nofile / 2 : nofile ))
        nproc=$(( nproc > 1024 ? nproc / 2 : nproc ))
    done
}

install_packages
configure_ulimits
