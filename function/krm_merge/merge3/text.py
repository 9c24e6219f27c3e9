"""Printing merged trees in the layout of the file they replace: now :mod:`krm_merge.krm.yamlio`'s.

Kept so the modules that import ``dump_like``/``load`` from here keep working
until they import them from :mod:`krm_merge.krm.yamlio` (then this module goes).
"""

from __future__ import annotations

from krm_merge.krm.yamlio import dump_like as dump_like
from krm_merge.krm.yamlio import load_rt as load
