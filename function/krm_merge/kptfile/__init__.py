"""Kptfile helpers: function identities and the 3-way Kptfile (pipeline) merge."""

from .functions import function_identity, image_without_tag
from .merge import KptfileMergeResult, merge_kptfile, merge_kptfile_text

__all__ = ["KptfileMergeResult", "function_identity", "image_without_tag", "merge_kptfile", "merge_kptfile_text"]
