"""``did you mean --dry-run?``: the nearest known option for an unknown one (issue 34 item 7).

Runs only after a command's parser refused its arguments (exit code 2), so the plain
paths never pay for it.  The known options are read from the parser's own help text
(public argparse output), so the hint cannot name an option the command lacks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_MAX_EDITS = 2  # --dryrun, --dry_run, --dyr-run, --dry-rnu: typos, not other words


def options_in(help_text: str) -> list[str]:
    """The long options a command's ``--help`` names, in order, once each."""
    return list(dict.fromkeys(_OPTION.findall(help_text)))


def nearest(option: str, known: Iterable[str]) -> str | None:
    """The known option closest to ``option`` (spelling, ``-``/``_``, a unique prefix), if close enough."""
    name = option.split("=", 1)[0]
    candidates = [k for k in known if k != name]
    same = [k for k in candidates if _plain(k) == _plain(name)]
    if same:
        return same[0]
    prefixed = [k for k in candidates if k.startswith(name) and len(name) > 3]
    if len(prefixed) == 1:
        return prefixed[0]
    scored = sorted((_edits(_plain(name), _plain(k)), k) for k in candidates)
    if scored and scored[0][0] <= _MAX_EDITS and (len(scored) == 1 or scored[1][0] > scored[0][0]):
        return scored[0][1]
    return None


def hints(prog: str, argv: list[str], help_text: str) -> str:
    """One ``PROG: did you mean --x?`` line per unknown ``--option`` of ``argv`` that has a near known one."""
    known = options_in(help_text)
    lines = []
    for arg in argv:
        if arg == "--":
            break
        name = arg.split("=", 1)[0]
        if name.startswith("--") and name not in known:
            near = nearest(name, known)
            if near is not None:
                lines.append(f"{prog}: did you mean {near}? (not {name})\n")
    return "".join(lines)


def _plain(option: str) -> str:
    return option.lstrip("-").replace("-", "").replace("_", "")


def _edits(a: str, b: str) -> int:
    """Levenshtein distance with transpositions counted as one edit (optimal string alignment)."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, rows[-2][j - 2] + 1)
            row.append(cost)
        rows.append(row)
    return rows[-1][-1]


__all__ = ["hints", "nearest", "options_in"]
