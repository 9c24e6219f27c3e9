"""``python -m krm_merge`` entry point."""

import sys

from krm_merge.cli import main

sys.exit(main())
