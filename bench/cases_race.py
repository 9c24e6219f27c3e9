"""Promotions racing on one repository (issue #47 point 3), each answer checked before any figure is printed.

    python bench/cases_race.py                          # 20 different markers, 10 on one field
    python bench/cases_race.py --racers 20 --one-field 10 --record bench/results.json

One bare repository served over ``git http-backend`` (``tests/git_http.py``); every racer is a
clone of its own over HTTP running ``krm-merge promote apps --set ... --push``, all started at
once (``tests/change/raceworld.py``, shared with ``tests/change/test_promote_race.py``).

* ``different markers``: ``--racers`` promotions of different markers.  Checked: every run
  exits 0, main gains exactly that many commits, each file byte-exact with its one value set.
* ``one field``: ``--one-field`` promotions of the same field to ``1.1.0`` ... ``1.N.0``,
  started in a shuffled order.  Checked: every run exits 0, the field ends at the highest version
  (the documented rule, docs/promote-races.md).

Printed (and kept by ``--record`` as ``promote_race`` in the results JSON, the rest of the file
kept): the wall time from the first start to the last end, and the pushes each run took
(of the runs that pushed a commit: median, most, total; a run's pushes beyond the first are its
re-plans).  A wrong answer is
``bench: error:`` and exit code 1, with no figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]

from tests.change.raceworld import (  # noqa: E402
    RaceWorld, Racer, check_different_markers, check_one_field, different_markers, one_field)


def figures(runs: list[Racer], wall: float) -> dict[str, Any]:
    pushes = [r.pushes for r in runs if r.landed] or [0]
    return {"racers": len(runs), "landed": sum(r.landed for r in runs), "wall_s": round(wall, 2),
            "pushes_median": statistics.median(pushes), "pushes_most": max(pushes), "pushes_total": sum(pushes),
            "failed": sum(r.code != 0 for r in runs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--racers", type=int, default=20)
    parser.add_argument("--one-field", type=int, default=10)
    parser.add_argument("--record", type=Path, help="keep the run as `promote_race` in this results JSON")
    args = parser.parse_args()
    started_at = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()[0]
    row: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-race-") as tmp:
            world = RaceWorld(Path(tmp) / "markers", apps=args.racers)
            try:
                runs, wall = different_markers(world, args.racers)
                check_different_markers(world, runs, args.racers)
            finally:
                world.close()
            row["different_markers"] = {**figures(runs, wall), "commits": args.racers}
            versions = [f"1.{minor}.0" for minor in range(1, args.one_field + 1)]
            random.Random(47).shuffle(versions)
            world = RaceWorld(Path(tmp) / "field", apps=0)
            try:
                runs, wall = one_field(world, versions)
                check_one_field(world, runs, versions, versions and max(versions, key=lambda v: int(v.split(".")[1])))
                commits = world.commits_since_initial()
            finally:
                world.close()
            row["one_field"] = {**figures(runs, wall), "winner": f"1.{args.one_field}.0", "commits": commits}
    except AssertionError as err:
        print(f"bench: error: {err}", file=sys.stderr)
        return 1
    for name, r in row.items():
        print(f"{name}: {r['racers']} promote --push at once, none failed, {r['landed']} pushed a commit, "
              f"{r['racers'] - r['landed']} found a higher version standing; wall {r['wall_s']:.1f} s; pushes per "
              f"landed run median {r['pushes_median']}, most {r['pushes_most']}, total {r['pushes_total']}; "
              f"{r['commits']} commit(s) on main" + (f"; the field ends at {r['winner']}" if "winner" in r else ""))
    print(f"load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {os.cpu_count()} CPUs")
    if args.record:
        results = json.loads(args.record.read_text()) if args.record.exists() else {}
        results["promote_race"] = {
            "date": started_at.strftime("%Y-%m-%d %H:%M UTC"),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2)},
            **row}
        args.record.write_text(json.dumps(results, indent=1) + "\n")
        print(f"recorded in {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
