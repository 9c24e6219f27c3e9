"""The fast editor is compared with the ruamel path often enough to mean something.

``test_fast_edit_matches_ruamel_on_corpus`` compares texts only where the
ruamel path is a valid reference (the document re-prints unchanged, its
output reads back).  If a change made those conditions rare, that test would
pass while comparing nothing; this one counts the comparisons it would make.
"""

from __future__ import annotations

from krm_merge.krm import yamlio

from .test_fastyaml import EDITABLE, canon, edit_both_ways, read, ruamel_correct, ruamel_stable

SEEDS = 30
MINIMUM_COMPARED = 30  # 47 on the corpus of this commit (30 seeds)


def test_enough_edits_are_compared_with_ruamel() -> None:
    compared = 0
    for path in EDITABLE:
        text = read(path)
        if not ruamel_stable(text):
            continue
        for seed in range(SEEDS):
            fast, slow, took_fast = edit_both_ways(text, seed, 1 + seed % 4)
            if took_fast and ruamel_correct(slow):
                assert canon(yamlio.load_data(fast.text)) == canon(fast.data)
                compared += 1
    assert compared >= MINIMUM_COMPARED, f"only {compared} fast edits had a ruamel reference"
