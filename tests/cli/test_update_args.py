"""``krm-merge update PKG[@REF]`` is read without argparse, exactly as the parser would read it."""

from __future__ import annotations

import pytest

from krm_merge.commands import update


@pytest.mark.parametrize("argv", [["pkg"], ["pkg@v2"], ["./a/b@refs/tags/x"], ["pkg@"], [""], ["@v1"]])
def test_the_plain_form_reads_as_the_parser_reads_it(argv: list[str]) -> None:
    assert vars(update.parse_args(argv)) == vars(update.parser().parse_args(argv))


def test_the_parser_gives_every_default_of_the_table_and_no_other() -> None:
    parsed = vars(update.parser().parse_args(["pkg"]))
    assert parsed == {"package": "pkg", **update.DEFAULTS}


@pytest.mark.parametrize("argv", [["pkg", "--dry-run"], ["--dry-run", "pkg"], ["pkg", "--conflicts", "mark"]])
def test_any_option_goes_through_the_parser(argv: list[str]) -> None:
    args = update.parse_args(argv)
    assert vars(args) == vars(update.parser().parse_args(argv))
    assert vars(args) != {"package": "pkg", **update.DEFAULTS}


@pytest.mark.parametrize("argv", [["-h"], ["--bogus"], ["a", "b"], []])
def test_help_and_mistakes_are_the_parser_s(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        update.parse_args(argv)
    assert stopped.value.code == (0 if argv == ["-h"] else 2)
    if argv != ["-h"]:
        assert "krm-merge update: error:" in capsys.readouterr().err
