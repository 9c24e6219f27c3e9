#!/bin/sh
# Builds the example's world in DEST (default: ./demo, in the current directory; it must not hold
# anything yet, so a second run never mixes with the first):
#   DEST/upstream  a git repository whose pkg/ holds each upstream-vN folder of this example in turn,
#                  one commit tagged vN each (v1 first)
#   DEST/local     the package as `kpt pkg get file://DEST/upstream.git/pkg@v1 local` leaves it,
#                  plus this example's local edits (local/)
# Needs only git.  Prints DEST.
# (Generated from tools/templates/update-example-setup.sh by tools/sync_examples.py; each example keeps
# its own copy so that it still runs when copied out of the repository.)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
DEST=${1:-demo}
if [ -n "$(ls -A "$DEST" 2>/dev/null)" ]; then
    echo "setup.sh: $DEST is not empty: remove it, or name another directory (setup.sh DIR)" >&2
    exit 1
fi
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)  # the Kptfile names the upstream by an absolute file:// URL
mkdir -p "$DEST/upstream/pkg"
export GIT_AUTHOR_NAME=example GIT_AUTHOR_EMAIL=example@example.invalid
export GIT_COMMITTER_NAME=example GIT_COMMITTER_EMAIL=example@example.invalid
g() { git -C "$DEST/upstream" "$@"; }
g init -q -b main
# upstream-v1, upstream-v2, ... in version order (the glob sorts v10 before v2: keep under ten)
for dir in "$HERE"/upstream-v*; do
  v=${dir##*/upstream-}
  rm -f "$DEST"/upstream/pkg/*
  cp "$dir"/* "$DEST/upstream/pkg/"
  g add -A && g commit -qm "$v" && g tag "$v"
done
V1=$(g rev-parse v1)
mkdir -p "$DEST/local"
cp "$HERE"/local/* "$DEST/local/"
# the upstream/upstreamLock sections kpt pkg get writes, after metadata
REPO="file://$DEST/upstream"
awk -v repo="$REPO" -v commit="$V1" '
  { print }
  /^  name: local$/ && !done {
    print "upstream:\n  type: git\n  git:\n    repo: " repo "\n    directory: /pkg\n    ref: v1\n  updateStrategy: resource-merge"
    print "upstreamLock:\n  type: git\n  git:\n    repo: " repo "\n    directory: /pkg\n    ref: v1\n    commit: " commit
    done = 1
  }' "$HERE/local/Kptfile" > "$DEST/local/Kptfile"
echo "$DEST"
