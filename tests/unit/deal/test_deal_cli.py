"""``president deal``: one JSON object on stdout; bad input is exit code 2 and one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from president import deal as deal_mod
from president.cli.main import app
from president.rules.cards import card_name

VECTOR_HEX = bytes(range(32)).hex()
VECTOR_FINGERPRINT = "d44b6082c4a07621beb646bc263416d507194c5cbe936ee6a514b85243cd9c07"
VECTOR_HANDS = [
    ["5D", "KS", "JH", "8C", "9C", "7C", "QC", "9H", "2C", "10C", "QH", "8S", "7H"],
    ["6H", "4D", "5H", "AH", "QD", "KC", "7S", "JC", "10D", "AS", "4S", "3C", "JD"],
    ["9D", "10H", "KD", "6D", "5S", "10S", "QS", "7D", "3H", "KH", "6S", "8H", "3D"],
    ["9S", "2H", "4H", "3S", "2D", "2S", "AD", "JS", "5C", "6C", "AC", "4C", "8D"],
]

runner = CliRunner()


def test_the_deal_md_vector() -> None:
    result = runner.invoke(app, ["deal", "--secret", VECTOR_HEX, "--order", "0,1,2,3"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "version": "president-deal-v1",
        "fingerprint": VECTOR_FINGERPRINT,
        "hands": VECTOR_HANDS,
        "set_aside": [],
    }
    assert result.stdout.count("\n") == 1  # one JSON object, one line


def test_jokers_order_and_hand_size_match_the_library() -> None:
    secret = bytes(range(100, 132))
    result = runner.invoke(
        app,
        ["deal", "--secret", secret.hex().upper(), "--order", "4, 3,2,1,0", "--jokers"]
        + ["--hand-size", "10"],
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    dealt = deal_mod.deal(secret, [4, 3, 2, 1, 0], jokers=True, hand_size=10)
    assert printed["fingerprint"] == dealt.fingerprint
    assert printed["hands"] == [[card_name(card) for card in hand] for hand in dealt.hands]
    assert printed["set_aside"] == [card_name(card) for card in dealt.set_aside]
    assert len(printed["set_aside"]) == 4
    assert printed["version"] == "president-deal-v1"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--secret", "zz" * 32, "--order", "0,1"],
            "--secret must be written in hex digits (0-9, a-f), two per byte; got '" + "zz" * 32,
        ),
        (
            ["--secret", VECTOR_HEX[:-2], "--order", "0,1"],
            "--secret must be 32 bytes (64 hex digits); this one is 31 bytes.",
        ),
        (
            ["--secret", VECTOR_HEX + "00", "--order", "0,1"],
            "--secret must be 32 bytes (64 hex digits); this one is 33 bytes.",
        ),
        (
            ["--secret", VECTOR_HEX[:-1], "--order", "0,1"],
            "--secret must be written in hex digits",
        ),
        (
            ["--secret", VECTOR_HEX, "--order", "0,1,1,3"],
            "The deal order must name each seat from 0 to 3 exactly once; got [0, 1, 1, 3].",
        ),
        (
            ["--secret", VECTOR_HEX, "--order", "0;1"],
            "--order must be seat numbers separated by commas, as 0,1,2,3; got '0;1'.",
        ),
        (
            ["--secret", VECTOR_HEX, "--order", "0"],
            "A deal needs at least 2 players; got 1.",
        ),
        (
            ["--secret", VECTOR_HEX, "--order", "0,1,2,3", "--hand-size", "14"],
            "A hand size of 14 is too large for 4 players",
        ),
        (
            ["--secret", VECTOR_HEX, "--order", "0,1,2,3", "--hand-size", "many"],
            "--hand-size must be a whole number; got 'many'.",
        ),
        (["--order", "0,1"], "--secret is required"),
        (["--secret", VECTOR_HEX], "--order is required"),
    ],
)
def test_bad_input_is_exit_2_and_one_line(arguments: list[str], message: str) -> None:
    result = runner.invoke(app, ["deal", *arguments])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1


def _president() -> Path:
    return Path(sys.executable).with_name("president")


@pytest.mark.skipif(not _president().exists(), reason="the president script is not installed")
def test_the_installed_command() -> None:
    ok = subprocess.run(
        [_president(), "deal", "--secret", VECTOR_HEX, "--order", "0,1,2,3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["hands"] == VECTOR_HANDS
    bad = subprocess.run(
        [_president(), "deal", "--secret", "abc", "--order", "0,1,2,3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.count("\n") == 1
