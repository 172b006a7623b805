"""The conformance suite: every scenario of ``scenarios/`` against the rules engine.

Each scenario file is one round written in the format of
``shared/conformance/FORMAT.md``; its ``expect`` list was derived by hand from
the rulebooks, before the engine's output was looked at.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from president.rules.errors import MOVE_CODES
from president.rules.options import OPTION_NAMES, options_for
from president.rules.scenario import mismatches, run_scenario

HERE = Path(__file__).parent
SCENARIOS = sorted((HERE / "scenarios").glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def _president() -> list[str]:
    """The ``president`` command of the environment running the tests."""
    beside = Path(sys.executable).with_name("president")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("president")
    if found:
        return [found]
    return [sys.executable, "-m", "president.cli.main"]  # pragma: no cover


# --------------------------------------------------------------------------- the scenarios
def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) >= 100


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    scenario = _load(path)
    expect = scenario.get("expect")
    assert expect, f"{path.name} has no expect"
    assert len(expect) == len(scenario["actions"]), f"{path.name}: one expect per action"
    assert scenario.get("name"), f"{path.name} has no name"
    trace = run_scenario(scenario)
    assert mismatches(trace, expect) == []


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_file_name_starts_with_its_preset(path: Path) -> None:
    preset = _load(path)["preset"]
    words = path.stem.replace("_", "-")
    assert words == preset or words.startswith(preset + "-")


# --------------------------------------------------------------------------- coverage
def test_every_error_code_is_produced() -> None:
    produced = {
        line["error"] for path in SCENARIOS for line in _load(path)["expect"] if "error" in line
    }
    assert produced == {code.value for code in MOVE_CODES}


#: Options set at table or game level, or timers: not exercised by round scenarios.
NOT_IN_ROUND_SCENARIOS = {
    "change_seats",
    "deal_extras",
    "turn_seconds",
    "rapid_seconds",
    "advance_seconds",
    "bot_delay_ms",
    "bot_pace_ms",
    "takeover_seconds",
    "leaderboards",  # who counts the rounds, not how they are played
    "players",
}

#: Presets whose defaults already turn on the behaviour an option names (RULES.md,
#: "presets that use it"), so a scenario of that preset exercises it without overrides.
DEFAULT_IN_PRESET = {
    "first_lead": {"classic", "club", "house", "house-rapid", "traditional"},
    "first_lead_must_include": {"classic"},
    "later_lead": {"classic", "club", "house", "house-rapid", "traditional"},
    "equal_rank": {"house", "house-rapid"},
    "count_rule": {"classic", "club", "house", "house-rapid", "traditional"},
    "pass_rule": {"classic", "club", "house", "house-rapid", "traditional"},
    "revolution": {"house", "house-rapid"},
    "skip_on_match": {"house"},
    "four_closes": {"house", "house-rapid"},
    "strongest_closes": {"house", "house-rapid"},
    "finish_with_two": {"house", "house-rapid"},
    "exchange": {"classic", "club", "house", "house-rapid", "traditional"},
    "rapid": {"house-rapid"},
    "scoring": {"classic", "club", "house", "house-rapid", "traditional"},
    "game_end": {"classic", "club", "house", "house-rapid", "traditional"},
}

#: Option name -> scenario files that exercise it (by override or preset default).
OPTION_SCENARIOS = {
    "first_lead": [
        "classic_first_lead_3c_must_include",
        "classic_first_lead_nobody_holds_3c",
        "traditional_first_lead_lowest_card_clubs_first",
        "traditional_first_lead_option",
        "house_first_lead_qh",
        "house_first_lead_nobody_holds_qh",
    ],
    "first_lead_must_include": [
        "classic_first_lead_3c_must_include",
        "classic_first_lead_must_include_off",
        "classic_timeout_must_include",
    ],
    "later_lead": [
        "classic_later_lead_president",
        "classic_later_lead_bottom",
        "club_later_lead_peasant",
        "traditional_exchange_two_only",
    ],
    "equal_rank": [
        "house_equal_rank_no_skip",
        "traditional_equal_rank_option",
    ],
    "count_rule": [
        "classic_count_exact",
        "traditional_more_beats_fewer",
        "traditional_more_beats_fewer_equal_counts",
    ],
    "must_match_type": ["traditional_must_match_type"],
    "pass_rule": [
        "club_pass_reenter",
        "club_pass_sit_out",
        "house_pass_sit_out",
        "house_pass_reenter",
    ],
    "one_lap": ["traditional_one_lap"],
    "revolution": [
        "house_revolution_reverses_order",
        "house_revolution_counter",
        "house_revolution_accumulated_no_trigger",
        "house_revolution_off",
        "house_revolution_four_closes_keeps",
        "house_revolution_exchange_normal_order",
    ],
    "skip_on_match": [
        "house_same_or_nothing_keep_turn",
        "house_same_or_nothing_skip_unable",
        "house_same_or_nothing_nobody_remains",
        "house_same_or_nothing_off",
        "traditional_must_pass_skip",
        "traditional_must_pass_two_players",
        "house-rapid_skip_off",
    ],
    "four_closes": [
        "house_four_closes_one_play",
        "house_four_closes_several_plays",
        "house_four_closes_reset",
        "house_four_closes_off",
    ],
    "strongest_closes": [
        "house_strongest_closes_two",
        "house_strongest_closes_revolution_three",
        "house_strongest_closes_before_play_twos",
        "house_strongest_closes_off",
    ],
    "finish_with_two": [
        "house_finish_with_two_reserved_bottom",
        "house_finish_with_two_several",
        "house_finish_with_two_last_becomes_president",
        "house_finish_with_two_revolution",
        "house_finish_with_two_off",
    ],
    "jokers": ["traditional_jokers", "traditional_jokers_pair", "traditional_joker_lead"],
    "twos": ["traditional_twos_up_a_count", "traditional_twos_only_twos_beat_two"],
    "poker_hands": [
        "traditional_poker_hands",
        "traditional_poker_hands_order",
        "traditional_poker_hands_bare_four_whole_hand",
    ],
    "suit_order": ["traditional_suit_order", "traditional_suit_order_pairs"],
    "social": [
        "traditional_social_out_of_turn",
        "traditional_social_lost",
        "traditional_social_special_cards",
        "traditional_social_lead_four",
    ],
    "exchange": [
        "classic_later_lead_president",
        "traditional_exchange_two_only",
        "traditional_exchange_one_card",
        "house_exchange_three_players",
    ],
    "rapid": ["house-rapid_anyone_opens", "house-rapid_rapid_off"],
    "scoring": [
        "classic_scoring_round_end",
        "club_scoring_below",
        "house_scoring_six_players",
        "traditional_scoring_below",
    ],
    "game_end": [
        "classic_game_end_target_sole_leader",
        "classic_game_end_target_tie_continues",
        "club_game_end_rounds_seven_tie",
        "club_game_end_rounds_five",
        "house_game_end_unlimited",
        "house_game_end_rounds",
    ],
}


def test_every_option_is_mapped_to_scenarios() -> None:
    assert set(OPTION_SCENARIOS) == set(OPTION_NAMES) - NOT_IN_ROUND_SCENARIOS


@pytest.mark.parametrize("option", sorted(OPTION_SCENARIOS))
def test_option_is_exercised(option: str) -> None:
    files = OPTION_SCENARIOS[option]
    assert files
    for stem in files:
        path = HERE / "scenarios" / f"{stem}.json"
        assert path.exists(), f"{option}: {path.name} is missing"
        scenario = _load(path)
        overrides = scenario.get("options") or {}
        assert option in overrides or scenario["preset"] in DEFAULT_IN_PRESET.get(option, set()), (
            f"{path.name} neither sets {option} nor uses a preset whose default does"
        )
        options_for(scenario["preset"], overrides)  # valid as written


# --------------------------------------------------------------------------- malformed files
_GOOD: dict[str, Any] = {
    "name": "a well formed scenario",
    "preset": "classic",
    "options": {},
    "hands": ["3C 9D", "4D 5S", "10H KS", "QS 7C"],
    "actions": ["0 play 3C"],
}


def _variant(**changes: Any) -> dict[str, Any]:
    return {**_GOOD, **changes}


MALFORMED = {
    "unknown_option": _variant(options={"no_such_option": True}),
    "bad_option_value": _variant(options={"pass_rule": "sometimes"}),
    "unknown_preset": _variant(preset="poker"),
    "card_held_twice_across_hands": _variant(hands=["3C 9D", "4D 9D", "10H KS", "QS 7C"]),
    "card_held_twice_in_a_hand": _variant(hands=["3C 3C", "4D 5S", "10H KS", "QS 7C"]),
    "seat_out_of_range": _variant(actions=["4 play QS"]),
    "bad_card_text_in_hand": _variant(hands=["3C 1D", "4D 5S", "10H KS", "QS 7C"]),
    "bad_card_text_in_action": _variant(actions=["0 play 3X"]),
    "unknown_verb": _variant(actions=["0 discard 3C"]),
    "classic_two_players": _variant(hands=["3C 9D", "4D 5S"]),
    "classic_eight_players": _variant(
        hands=["3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C"], actions=[]
    ),
    "club_three_players": _variant(preset="club", hands=["3C 9D", "4D 5S", "10H KS"]),
    "club_eight_players": _variant(
        preset="club", hands=["3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C"]
    ),
    "house_two_players": _variant(preset="house", hands=["3C 9D", "4D 5S"]),
    "house_seven_players": _variant(
        preset="house", hands=["3C", "4C", "5C", "6C", "7C", "8C", "9C"]
    ),
    "house_rapid_seven_players": _variant(
        preset="house-rapid", hands=["3C", "4C", "5C", "6C", "7C", "8C", "9C"], actions=[]
    ),
    "traditional_two_players": _variant(preset="traditional", hands=["3C 9D", "4D 5S"]),
    "traditional_nine_players": _variant(
        preset="traditional",
        hands=["3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC"],
    ),
    # Rulebook 000 always lets an equal rank answer: switching it off contradicts house.
    "house_equal_rank_off": _variant(
        preset="house", options={"equal_rank": False}, hands=["7S 9C", "7H KD", "7D 8C"]
    ),
    "club_game_of_six_rounds": _variant(preset="club", options={"game_end": "rounds:6"}),
    "players_option_excludes_count": _variant(
        preset="house", options={"players": "4..6"}, hands=["3C 9D", "4D 5S", "10H KS"]
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_scenario_exits_2(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(MALFORMED[case]))
    result = subprocess.run(
        [*_president(), "scenario", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_well_formed_base_runs(tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(_GOOD))
    result = subprocess.run(
        [*_president(), "scenario", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0])["ok"] is True


@pytest.mark.parametrize(
    ("preset", "players"),
    [
        ("classic", 3),
        ("classic", 7),
        ("club", 4),
        ("club", 7),
        ("house", 3),
        ("house", 6),
        ("traditional", 3),
        ("traditional", 8),
    ],
)
def test_player_counts_inside_the_range_are_accepted(preset: str, players: int) -> None:
    ranks = ["3", "4", "5", "6", "7", "8", "9", "10"]
    scenario = {
        "preset": preset,
        "hands": [f"{rank}C {rank}D" for rank in ranks[:players]],
        "actions": [],
    }
    assert run_scenario(scenario) == []
