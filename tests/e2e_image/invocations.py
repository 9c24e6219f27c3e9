"""Running one package through the image and through the host exec alike."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .tools import Completed, Orchestrators, diff_since, kpt_env, run, snapshot_package

# A mode name no version will ever implement: exercises the error path.
UNKNOWN_MODE = "no-such-mode"

# kpt prints "[PASS] "name" in 1.2s" / "[FAIL] ..." and the function name.
_TIMING = re.compile(r" in \d+(\.\d+)?(ns|µs|us|ms|s|m\d+(\.\d+)?s)")


@dataclass(frozen=True)
class PackageOutcome:
    """What a kpt run did to a package."""

    done: Completed
    diff: str
    files: dict[str, str]


def read_files(pkg: Path) -> dict[str, str]:
    """Every file of the package except git's, by relative path."""
    return {
        str(p.relative_to(pkg)): p.read_text()
        for p in sorted(pkg.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(pkg).parts
    }


def run_on_package(tools: Orchestrators, pkg: Path, argv: list[str], host_bin: Path) -> PackageOutcome:
    """Commit ``pkg``, run ``argv`` (kpt with podman, host krm-merge on PATH), collect the outcome."""
    commit = snapshot_package(tools, pkg)
    done = run(argv, cwd=pkg, env=kpt_env(path_prefix=[host_bin]))
    return PackageOutcome(done, diff_since(tools, pkg, commit), read_files(pkg))


def kpt_messages(output: str, function_name: str) -> str:
    """kpt's console output with timings and the function's name normalised."""
    return _TIMING.sub(" in 0s", output).replace(function_name, "FUNCTION")
