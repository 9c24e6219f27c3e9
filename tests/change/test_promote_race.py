"""Promotions started at once against one repository never lose a race (issue #47 point 3).

Twenty ``promote --push`` runs, each from its own clone over ``git http-backend``, each promoting a
different marker: all twenty land, twenty commits on main, none lost, none failed.  Ten racing on
one field: all end with exit code 0 and the field holds the highest version (the documented rule).
No wall time is asserted; each run has a hang guard.  The same races are the bench's
(``bench/cases_race.py``), which reports their figures.
"""

from __future__ import annotations

import random
from pathlib import Path

from tests.change.raceworld import RaceWorld, check_different_markers, check_one_field, different_markers, one_field


def test_twenty_promotions_of_different_markers_all_land(tmp_path: Path) -> None:
    world = RaceWorld(tmp_path, apps=20)
    try:
        runs, _ = different_markers(world, 20)
        check_different_markers(world, runs, 20)
        assert sum(r.pushes for r in runs) > 20  # they did race: some pushes were refused and planned again
    finally:
        world.close()


def test_ten_promotions_of_one_field_end_at_the_highest_version(tmp_path: Path) -> None:
    world = RaceWorld(tmp_path, apps=0)
    versions = [f"1.{minor}.0" for minor in range(1, 11)]
    random.Random(47).shuffle(versions)
    try:
        runs, _ = one_field(world, versions)
        check_one_field(world, runs, versions, "1.10.0")
        assert any("stands over" in r.stderr for r in runs)  # a report said which value won
    finally:
        world.close()
