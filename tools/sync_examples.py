#!/usr/bin/env python3
"""Write each update example's ``setup.sh`` from ``tools/templates/update-example-setup.sh``.

The examples that need a git upstream build it with the same script.  Each keeps its own copy, so an
example copied out of the repository still runs on its own; this tool keeps the copies equal to the one
template (``--check`` exits 1 and names the copies that differ; tests/update/test_example.py runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "tools" / "templates" / "update-example-setup.sh"
EXAMPLES = ("update-from-local-git", "update-conflicts-mark", "update-conflict-rules")


def stale_copies() -> list[Path]:
    """The examples' setup.sh files whose text is not the template's."""
    want = TEMPLATE.read_bytes()
    copies = [ROOT / "examples" / name / "setup.sh" for name in EXAMPLES]
    return [path for path in copies if not path.is_file() or path.read_bytes() != want]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report copies that differ (exit 1)")
    args = parser.parse_args(argv)
    stale = stale_copies()
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} differs from {TEMPLATE.relative_to(ROOT)}: run tools/sync_examples.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_bytes(TEMPLATE.read_bytes())
        path.chmod(0o755)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
