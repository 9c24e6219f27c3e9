"""Many kill trials (SIGKILL/SIGTERM at random instants during run, update, promote); see tests/reliability/killing.py.

    python tools/kill_trials.py --trials 200 --files 3000 [--seed N]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reliability.killing import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
