"""``python -m krm_merge`` entry point."""

from krm_merge.cli import entry

entry()
