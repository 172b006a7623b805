"""Rules scenarios (conformance/FORMAT.md): one round written down, and its trace.

:func:`run_scenario` takes the parsed JSON and returns the trace, one dict per
action. A malformed scenario raises :class:`ScenarioError`; a refused action
is data (``ok: false`` and its error code).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

from president.rules.cards import CardSyntaxError, has_duplicates, names, parse_cards, to_mask
from president.rules.errors import Rejected, duplicate_card_rejection
from president.rules.options import OptionError, options_for
from president.rules.render import event_to_dict
from president.rules.round import (
    NOBODY,
    Command,
    Pass,
    PlayCards,
    ReturnCards,
    RoundPhase,
    RoundState,
    Timeout,
    decide,
    start_round,
    step,
)

_KNOWN_KEYS = {
    "name",
    "preset",
    "options",
    "hands",
    "round",
    "previous_standings",
    "scores",
    "leader",
    "actions",
    "expect",
    "description",
    "set_aside",
}


class ScenarioError(ValueError):
    """The scenario file itself is malformed."""


class DuplicateCards(NamedTuple):
    """A play or give as written, and whether it named a card twice."""

    command: Command
    twice: bool


def parse_action(text: str, seat_count: int) -> Command | DuplicateCards:
    """``"2 play 10H 10D"``, ``"1 pass"``, ``"0 give 4C"``, ``"3 play 7S @5"``, ``"timeout"``."""
    words = text.split()
    if words == ["timeout"]:
        return Timeout()
    if len(words) < 2:
        raise ScenarioError(f"action {text!r}: write SEAT VERB [CARDS...] [@VERSION] or timeout")
    seat_text, verb, *rest = words
    if not seat_text.isdigit() or int(seat_text) >= seat_count:
        raise ScenarioError(
            f"action {text!r}: seat {seat_text} is not a seat of 0..{seat_count - 1}"
        )
    seat = int(seat_text)
    version: int | None = None
    if rest and rest[-1].startswith("@"):
        if not rest[-1][1:].isdigit():
            raise ScenarioError(f"action {text!r}: a version is written @N")
        version = int(rest.pop()[1:])
    try:
        cards = parse_cards(rest)
    except CardSyntaxError as error:
        raise ScenarioError(f"action {text!r}: {error}") from None
    mask = to_mask(cards)
    if verb == "pass":
        if cards:
            raise ScenarioError(f"action {text!r}: a pass takes no cards")
        return Pass(seat, version)
    if verb in ("play", "give"):
        if verb == "play":
            return DuplicateCards(PlayCards(seat, mask, version), has_duplicates(cards))
        return DuplicateCards(ReturnCards(seat, mask), has_duplicates(cards))
    raise ScenarioError(f"action {text!r}: the verb is play, pass, give or timeout, not {verb!r}")


def load_round(
    scenario: Mapping[str, Any],
) -> tuple[RoundState, list[Command | DuplicateCards]]:
    """The round's starting state and its parsed actions."""
    unknown = set(scenario) - _KNOWN_KEYS
    if unknown:
        raise ScenarioError(f"unknown key(s) {', '.join(sorted(unknown))}")
    try:
        options = options_for(str(scenario.get("preset", "")), scenario.get("options") or {})
    except OptionError as error:
        raise ScenarioError(str(error)) from None
    raw_hands = scenario.get("hands")
    if not isinstance(raw_hands, list) or not raw_hands:
        raise ScenarioError("hands must be a list with one string of cards per seat")
    hands: list[int] = []
    seen: set[int] = set()
    for seat, text in enumerate(raw_hands):
        try:
            cards = parse_cards(text if isinstance(text, str) else list(text))
        except CardSyntaxError as error:
            raise ScenarioError(f"hand of seat {seat}: {error}") from None
        twice = seen.intersection(cards) or (set() if not has_duplicates(cards) else set(cards))
        if twice:
            raise ScenarioError(
                f"hand of seat {seat}: a card is held twice ({names(to_mask(twice))[0]})"
            )
        seen.update(cards)
        hands.append(to_mask(cards))
    round_no = scenario.get("round", 1) or 1
    standings = scenario.get("previous_standings")
    # [] above round 1: no standings carry over (the players changed), so no exchange.
    if round_no > 1 and standings is None:
        raise ScenarioError("a round above 1 needs previous_standings (seats, best first)")
    leader = scenario.get("leader")
    if leader is not None and not (isinstance(leader, int) and 0 <= leader < len(hands)):
        raise ScenarioError(f"leader {leader!r} is not a seat of 0..{len(hands) - 1}")
    try:
        state, _ = start_round(
            options,
            hands,
            round_no=int(round_no),
            previous_standings=standings,
            scores=scenario.get("scores"),
            leader=leader,
        )
    except OptionError as error:
        raise ScenarioError(str(error)) from None
    actions = scenario.get("actions", [])
    if not isinstance(actions, list):
        raise ScenarioError("actions must be a list of strings")
    return state, [parse_action(str(action), len(hands)) for action in actions]


def trace_line(index: int, state: RoundState) -> dict[str, Any]:
    """The trace keys every line carries, for the state after an action."""
    line: dict[str, Any] = {
        "i": index,
        "ok": True,
        "phase": state.phase,
        "to_act": None if state.to_act == NOBODY else state.to_act,
        "top": names(state.top),
        "trick_version": state.trick_version,
        "revolution": state.revolution,
        "hands": [names(hand) for hand in state.hands],
        "finished": list(state.finished),
    }
    if state.phase == RoundPhase.OVER and state.result is not None:
        result = state.result
        line["standings"] = list(result.standings)
        line["points"] = list(result.points)
        line["totals"] = list(result.totals)
        line["game_over"] = result.game_over
        if result.game_over:
            line["winners"] = list(result.winners)
    return line


def run_scenario(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The trace of a scenario: one dict per action."""
    state, commands = load_round(scenario)
    trace = []
    for index, command in enumerate(commands):
        try:
            if isinstance(command, DuplicateCards):
                if command.twice:
                    raise duplicate_card_rejection(partial(decide, state, command.command))
                command = command.command
            state, events = step(state, command)
        except Rejected as rejection:
            line = trace_line(index, state)
            line.update(ok=False, error=rejection.code.value, reason=rejection.reason)
        else:
            line = trace_line(index, state)
            line["events"] = [event_to_dict(event) for event in events]
        trace.append(line)
    return trace


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list) and expected and all(isinstance(x, list) for x in expected):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_same(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, list) and all(isinstance(x, str) for x in expected):
        return isinstance(actual, list) and sorted(map(str.upper, expected)) == sorted(actual)
    return bool(expected == actual)


def mismatches(
    trace: Sequence[Mapping[str, Any]], expect: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Where the trace differs from ``expect`` (card lists compare as sets)."""
    problems = []
    if len(expect) > len(trace):
        problems.append(f"expected {len(expect)} lines, the trace has {len(trace)}")
    for line, wanted in zip(trace, expect, strict=False):
        for key, value in wanted.items():
            if key not in line or not _same(value, line[key]):
                problems.append(
                    f"action {line['i']}: {key} is {line.get(key)!r}, expected {value!r}"
                    + (f" ({line.get('error')}: {line.get('reason')})" if not line["ok"] else "")
                )
    return problems
