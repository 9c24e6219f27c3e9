"""``krm-merge update PKG[@REF]`` is read without argparse, exactly as the parser would read it."""

from __future__ import annotations

import pytest

from krm_merge.commands import update
from krm_merge.kptfile.document import Strategy
from krm_merge.merge3.conflicts import ConflictPolicy
from krm_merge.update.result import FilesPolicy, UpdateRequest


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


def test_the_request_holds_the_policies_as_their_types_parsed_once() -> None:
    argv = ["pkg@v2", "--strategy", "fast-forward", "--conflicts", "mark", "--files", "merge", "--no-recursive",
            "--dry-run"]
    request = update.request_from(update.parse_args(argv))
    assert request == UpdateRequest("pkg", "v2", None, None, Strategy.FAST_FORWARD, ConflictPolicy.MARK,
                                    FilesPolicy.MERGE, None, False, False, True)
    assert update.request_from(update.parse_args(["pkg"])) == UpdateRequest("pkg")  # every default, the Kptfile's ref


def test_with_origin_the_package_is_taken_as_given_and_a_fleet_package_as_named() -> None:
    argv = ["a@b", "--origin", "o", "--upstream", "u"]
    assert update.request_from(update.parse_args(argv)) == UpdateRequest("a@b", None, "o", "u")
    fleet = update.parse_args(["root", "--upstream", "https://example.com/r", "--ref", "v3", "--conflicts", "fail"])
    # a fleet's package: its path and the fleet's ref; the fleet's --upstream is the repository, not a directory
    assert update.request_from(fleet, package="root/app", ref="v3") == UpdateRequest(
        "root/app", "v3", conflicts=ConflictPolicy.FAIL)
