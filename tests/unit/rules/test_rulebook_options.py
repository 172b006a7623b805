"""Options a preset's rulebook contradicts are refused with a sentence: house always lets an
equal rank answer, a club game is 5, 7 or 10 rounds for 4 to 7 players (7 rounds at practice
and public tables), and a range of one count is said as one count."""

from __future__ import annotations

import pytest

from president.rules import game as g
from president.rules.options import OptionError, check_table_rules, options_for


@pytest.mark.parametrize("preset", ["house", "house-rapid"])
def test_house_keeps_equal_rank(preset: str) -> None:
    with pytest.raises(OptionError, match="equal_rank cannot be switched off in house"):
        options_for(preset, {"equal_rank": "false"})
    assert options_for(preset, {"equal_rank": "true"}).equal_rank


@pytest.mark.parametrize("rounds", [5, 7, 10])
def test_a_club_game_is_five_seven_or_ten_rounds(rounds: int) -> None:
    assert options_for("club", {"game_end": f"rounds:{rounds}"}).round_limit == rounds


@pytest.mark.parametrize("game_end", ["rounds:6", "rounds:1", "unlimited", "target:11"])
def test_other_club_game_lengths_are_refused(game_end: str) -> None:
    with pytest.raises(OptionError, match=r"a club game is 5, 7 or 10 rounds \(rulebook 002\)"):
        options_for("club", {"game_end": game_end})


@pytest.mark.parametrize("players", ["3..7", "4..8", "2..3"])
def test_club_players_stay_within_four_to_seven(players: str) -> None:
    with pytest.raises(OptionError, match="club is played by 4 to 7 players"):
        options_for("club", {"players": players})
    assert options_for("club", {"players": "5..6"}).max_players == 6


def test_only_a_private_club_table_chooses_its_length() -> None:
    short = options_for("club", {"game_end": "rounds:5"})
    with pytest.raises(OptionError, match=r"7 rounds .* at a private table"):
        check_table_rules(short, private=False)
    check_table_rules(short, private=True)
    check_table_rules(options_for("club"), private=False)


def test_a_range_of_one_count_is_said_as_one() -> None:
    options = options_for("classic", {"players": "3..3"})
    with pytest.raises(OptionError) as refused:
        g.new_table(options, 4)
    assert "exactly 3 seats" in str(refused.value) and "3 to 3" not in str(refused.value)
    with pytest.raises(OptionError, match="club table has 4 to 7 seats, not 3"):
        g.new_table(options_for("club"), 3)


def test_only_a_practice_table_advances_by_itself() -> None:
    options = options_for("classic", {"advance_seconds": "5"})
    assert options.advance_seconds == 5
    check_table_rules(options, private=False, practice=True)
    for private in (False, True):
        with pytest.raises(OptionError, match="only a practice table moves on"):
            check_table_rules(options, private=private)
    with pytest.raises(OptionError, match=r"from 0 \(off\) to 3600"):
        options_for("classic", {"advance_seconds": "-1"})
    with pytest.raises(OptionError, match="milliseconds from 0 to 10000"):
        options_for("house-rapid", {"bot_delay_ms": "20000"})
