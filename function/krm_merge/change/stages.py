"""The stages of the change pipeline around its write, behind one door: the pull request and ``--push``.

:mod:`krm_merge.change.pipeline` loads this module only when a run has a stage (``--pull-request``:
:mod:`krm_merge.change.stage`; ``promote --push``: :mod:`krm_merge.change.push_stage`), so a plain run
never loads either, their words or git's steps.
"""

from __future__ import annotations

from krm_merge.change.push_stage import PushStep
from krm_merge.change.stage import ChangeText, PullRequestStep, promote_step

__all__ = ["ChangeText", "PullRequestStep", "PushStep", "promote_step"]
