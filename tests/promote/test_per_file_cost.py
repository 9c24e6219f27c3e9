"""What a promote run pays per file (issue 45: promote over 5,000 files within 2x ``grep -rl``).

A file without a marker costs a read and one ``bytes.find`` per screening token, never
``bytes.__contains__``: CPython 3.11 and 3.12 read that operand as an integer first and
format and clear a TypeError before searching, which cost more than the search on each of
the thousands of files a large run passes by.  The tests run the real command in-process,
its reads handing out bytes that count how they are searched.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from krm_merge.commands import promote as promote_command
from krm_merge.promote import files as promote_files

from .test_entry_points import M, RELEASE

SEARCHES: Counter[str] = Counter()


class CountedBytes(bytes):
    """The bytes of a file as the screen reads them, counting how they are searched."""

    def __contains__(self, token: Any) -> bool:
        SEARCHES["contains"] += 1
        return super().__contains__(token)

    def find(self, *args: Any) -> int:
        SEARCHES["find"] += 1
        return super().find(*args)


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    real = promote_files._read_fd
    monkeypatch.setattr(promote_files, "_read_fd", lambda fd: CountedBytes(real(fd)))
    SEARCHES.clear()
    return SEARCHES


def _tree(root: Path, plain: int) -> None:
    for n in range(plain):
        (root / f"cm-{n}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{n}\n")
    (root / "marked.yaml").write_text(RELEASE.format(name="a", m=M))


@pytest.mark.parametrize("plain", [3, 30])
def test_a_file_without_a_marker_costs_one_find_per_token(tmp_path: Path, counted: Counter[str], plain: int,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _tree(tmp_path, plain)
    assert promote_command.main([str(tmp_path), "--set", "default:podinfo:prod=6.3.0", "--dry-run"]) == 0
    assert "+      version: 6.3.0 # {" in capsys.readouterr().out  # it did find and promote the marked file
    assert counted["contains"] == 0
    # --set screens for the marker key and the Pipeline API group: two finds a plain file; the marked one holds
    # the key (one find), then the plan's test for the key and the Pipeline lookup's for the group
    assert counted["find"] == 2 * plain + 3


def test_holds_is_a_substring_test() -> None:
    assert promote_files.holds(b'x: 1 # {"$promotion": "a:b:c"}\n', (b"$imagepolicy", b"$promotion"))
    assert not promote_files.holds(b"x: 1\n", (b"$promotion",)) and not promote_files.holds(b"x", ())

