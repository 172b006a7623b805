"""What one seat may know: ``view_for`` never holds another seat's cards."""

from __future__ import annotations

from typing import Any

from president.rules.cards import names
from president.rules.game import GameState
from president.rules.round import NOBODY, RoundPhase, RoundState, legal_actions, role_key

ROLE_NAMES: dict[str, dict[str, str]] = {
    "house": {
        "top": "President",
        "second": "Vice-president",
        "middle": "Neutral",
        "second_bottom": "Vice-asshole",
        "bottom": "Asshole",
    },
    "club": {
        "top": "President",
        "second": "Vice President",
        "middle": "Citizen",
        "second_bottom": "Vice Peasant",
        "bottom": "Peasant",
    },
    "classic": {
        "top": "President",
        "second": "Vice-President",
        "middle": "Citizen",
        "second_bottom": "Vice-Scum",
        "bottom": "Scum",
    },
    "traditional": {
        "top": "President",
        "second": "Vice-President",
        "middle": "Neutral",
        "second_bottom": "Vice-Asshole",
        "bottom": "Asshole",
    },
}


def role_name(preset: str, place: int, players: int) -> str:
    """The title of ``place`` (0 = first) for the preset's rulebook."""
    book = "house" if preset.startswith("house") else preset
    return ROLE_NAMES[book][role_key(place, players)]


def roles(preset: str, standings: tuple[int, ...]) -> dict[int, str]:
    """Seat to title for a finishing order."""
    return {seat: role_name(preset, place, len(standings)) for place, seat in enumerate(standings)}


def round_view(state: RoundState, seat: int | None) -> dict[str, Any]:
    """The round as ``seat`` sees it (``None``: a spectator, who sees no hand)."""
    view: dict[str, Any] = {
        "round": state.round_no,
        "phase": state.phase,
        "to_act": None if state.to_act == NOBODY else state.to_act,
        "top": names(state.top),
        "top_seat": None if state.top_seat == NOBODY else state.top_seat,
        "trick_version": state.trick_version,
        "timer_key": state.timer_key,
        "revolution": state.revolution,
        "card_counts": [hand.bit_count() for hand in state.hands],
        "out_of_trick": [s for s in range(state.seat_count) if state.sat_out >> s & 1],
        "finished": list(state.finished),
        "players": list(state.players),
    }
    if seat is not None and 0 <= seat < state.seat_count:
        view["seat"] = seat
        view["hand"] = names(state.hands[seat])
        view["new_cards"] = names(state.new_cards[seat] & state.hands[seat])
        view["same_or_nothing"] = state.same_or_nothing and state.to_act == seat
        if state.phase == RoundPhase.EXCHANGE:
            owed = [p for p in state.pending if p.giver == seat]
            view["return_owed"] = owed[0].size if owed else 0
        view["legal"] = [
            {"verb": verb, "cards": names(cards)} for verb, cards in legal_actions(state, seat)
        ]
    if state.phase == RoundPhase.OVER and state.result is not None:
        result = state.result
        view["standings"] = list(result.standings)
        view["points"] = list(result.points)
        view["totals"] = list(result.totals)
        view["roles"] = {
            str(s): title for s, title in roles(state.options.preset, result.standings).items()
        }
    return view


def view_for(game: GameState, seat: int | None) -> dict[str, Any]:
    """The table as ``seat`` sees it: its own cards only, everyone's counts, the scores."""
    view: dict[str, Any] = {
        "phase": game.phase,
        "preset": game.options.preset,
        "game": game.game_no,
        "round_no": game.round_no,
        "seats": [
            {"player": s.player, "name": s.display_name, "bot": s.is_bot, "left": s.leaving}
            for s in game.seats
        ],
        "scores": list(game.scores),
        "last_standings": list(game.standings),
        "winners": list(game.winners),
        "stopped": game.stopped,
    }
    if game.standings:
        view["roles"] = {
            str(s): title for s, title in roles(game.options.preset, game.standings).items()
        }
    if game.round is not None:
        view["round"] = round_view(game.round, seat)
    return view
