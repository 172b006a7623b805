"""Stored rounds exported as rules scenarios (conformance/FORMAT.md), for ``audit replay --json``.

:func:`round_scenarios` turns each dealt round of a table's stream into a
scenario anyone's engine can re-run, with where it comes from (table, game,
round, fingerprint and secret).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from president.audit.commands import command_groups, decode
from president.audit.explain import card_words
from president.hosting.events import DealCommitted, DealRevealed, TableEvent
from president.hosting.streams import table_id_of
from president.rules import round as rnd
from president.rules.cards import names
from president.rules.options import Options, options_for
from president.rules.scenario import run_scenario
from president.store import StoredEvent


@dataclass(frozen=True)
class RoundScenario:
    """A stored round as a rules scenario (conformance/FORMAT.md).

    The scenario's seats are the round's players, in table order: scenario
    seat ``k`` is table seat ``seats[k]`` (empty seats are left out).
    """

    table_id: str
    game_no: int
    round_no: int
    seats: tuple[int, ...]
    fingerprint: str | None
    secret_hex: str | None
    scenario: dict[str, Any]
    ended: rnd.RoundEnded | None
    """The stored ``RoundEnded`` in scenario seats (None: the round did not end)."""

    def trace(self) -> list[dict[str, Any]]:
        """The scenario's trace, by :func:`president.rules.scenario.run_scenario`."""
        return run_scenario(self.scenario)

    def to_json(self) -> dict[str, Any]:
        """The scenario with its trace and where it comes from, as one JSON-ready object."""
        return {
            "table": self.table_id,
            "game": self.game_no,
            "round": self.round_no,
            "seats": list(self.seats),
            "fingerprint": self.fingerprint,
            "secret": self.secret_hex,
            "scenario": self.scenario,
            "trace": self.trace(),
        }


def round_scenarios(events: Sequence[StoredEvent]) -> list[RoundScenario]:
    """Every dealt round of a table's stream as a scenario (verify the log first)."""
    scenarios: list[RoundScenario] = []
    table_id = table_id_of(events[0].stream_id) if events else ""
    fingerprint: str | None = None
    current: dict[str, Any] | None = None
    game_no = 0
    for start, end in command_groups(events):
        first = decode(events[start])
        if isinstance(first, DealCommitted):
            fingerprint = first.fingerprint
            game_no = first.game_no
            continue
        if isinstance(first, DealRevealed):
            for item in reversed(scenarios):
                if (item.game_no, item.round_no) == (first.game_no, first.round_no):
                    index = scenarios.index(item)
                    scenarios[index] = replace(item, secret_hex=first.secret_hex)
                    break
            continue
        if isinstance(first, rnd.RoundStarted):
            players = first.players
            where = {seat: index for index, seat in enumerate(players)}
            standings = [where[s] for s in first.previous_standings if s in where]
            scenario: dict[str, Any] = {
                "name": f"table {table_id}, game {game_no}, round {first.round_no}",
                "preset": first.options.preset,
                "options": _option_overrides(first.options),
                "hands": [" ".join(names(first.hands[seat])) for seat in players],
                "round": first.round_no,
                "previous_standings": standings if first.round_no > 1 else None,
                "scores": [first.scores[seat] for seat in players],
                "actions": [],
            }
            if first.set_aside:
                scenario["set_aside"] = " ".join(names(first.set_aside))
            current = {"where": where, "scenario": scenario, "players": players}
            scenarios.append(
                RoundScenario(
                    table_id, game_no, first.round_no, players, fingerprint, None, scenario, None
                )
            )
            continue
        if current is None:
            continue
        where = current["where"]
        action = _action(first, where)
        if action is not None:
            current["scenario"]["actions"].append(action)
        for index in range(start, end):
            event = first if index == start else decode(events[index])
            if isinstance(event, rnd.RoundEnded):
                mapped = _mapped_result(event, current["players"], where)
                scenarios[-1] = replace(scenarios[-1], ended=mapped)
                current = None
                break
    return scenarios


def _option_overrides(options: Options) -> dict[str, Any]:
    """The options that differ from their preset's, by name (the scenario's ``options``)."""
    defaults = options_for(options.preset).to_dict()
    return {
        name: value
        for name, value in options.to_dict().items()
        if name != "preset" and defaults.get(name) != value
    }


def _action(first: TableEvent, where: Mapping[int, int]) -> str | None:
    """The scenario action of a command's first event, in scenario seats (None: no action)."""
    if isinstance(first, rnd.CardsPlayed):
        return f"{where[first.seat]} play {card_words(first.cards)}"
    if isinstance(first, rnd.Passed):
        return f"{where[first.seat]} pass"
    if isinstance(first, rnd.CardsGiven) and not first.automatic:
        return f"{where[first.giver]} give {card_words(first.cards)}"
    if isinstance(first, rnd.TimedOut):
        return "timeout"
    return None


def _mapped_result(
    ended: rnd.RoundEnded, players: Sequence[int], where: Mapping[int, int]
) -> rnd.RoundEnded:
    """The stored ``RoundEnded`` with table seats turned into scenario seats."""
    return rnd.RoundEnded(
        standings=tuple(where[seat] for seat in ended.standings),
        points=tuple(ended.points[seat] for seat in players),
        totals=tuple(ended.totals[seat] for seat in players),
        game_over=ended.game_over,
        winners=tuple(where[seat] for seat in ended.winners),
    )
