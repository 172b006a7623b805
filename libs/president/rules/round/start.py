"""Starting a round: checking the deal, who opens, and the exchange's automatic gives."""

from __future__ import annotations

from collections.abc import Sequence

from president.rules.cards import JOKERS, strongest
from president.rules.options import OptionError, Options, check_player_count
from president.rules.round.events import CardsGiven, Event, PlayStarted, RoundStarted
from president.rules.round.evolution import evolve, initial_state
from president.rules.round.state import NOBODY, RoundState


def start_round(
    options: Options,
    hands: Sequence[int],
    *,
    round_no: int = 1,
    players: Sequence[int] | None = None,
    previous_standings: Sequence[int] | None = None,
    scores: Sequence[int] | None = None,
    leader: int | None = None,
    set_aside: int = 0,
) -> tuple[RoundState, list[Event]]:
    """Start a round from dealt hands; returns the state after the automatic gives."""
    seat_count = len(hands)
    seats = tuple(players) if players is not None else tuple(range(seat_count))
    check_player_count(options, len(seats))
    if any(not 0 <= seat < seat_count for seat in seats) or len(set(seats)) != len(seats):
        raise OptionError(
            f"the players {list(seats)} are not distinct seats of 0..{seat_count - 1}"
        )
    _check_deal(options, hands, set_aside)
    standings = tuple(previous_standings or ())
    if round_no > 1 and standings and sorted(standings) != sorted(seats):
        raise OptionError(
            f"previous_standings {list(standings)} must list every player of the round once"
        )
    totals = tuple(scores) if scores is not None else (0,) * seat_count
    if len(totals) != seat_count:
        raise OptionError(f"scores must give one total per seat ({seat_count}), not {len(totals)}")
    if leader is not None and leader not in seats:
        raise OptionError(f"leader {leader} is not a player of this round")
    first_leader, must_include = opening(options, hands, seats, round_no, standings, leader)
    started = RoundStarted(
        options=options,
        round_no=round_no,
        players=seats,
        hands=tuple(hands),
        set_aside=set_aside,
        previous_standings=standings,
        scores=totals,
        leader=first_leader,
        must_include=must_include,
    )
    state = initial_state(started)
    events: list[Event] = [started]
    if round_no > 1 and standings:
        for giver, receiver, count in _exchange_pairs(options, standings):
            given = CardsGiven(giver, receiver, strongest(state.hands[giver], count), True)
            events.append(given)
            state = evolve(state, given)
    if not state.pending:
        opened = PlayStarted(first_leader)
        events.append(opened)
        state = evolve(state, opened)
    return state, events


def _check_deal(options: Options, hands: Sequence[int], set_aside: int) -> None:
    seen = set_aside
    for seat, hand in enumerate(hands):
        if seen & hand:
            raise OptionError(f"seat {seat} holds a card that is dealt twice")
        seen |= hand
    if seen & JOKERS and not options.jokers:
        raise OptionError("a joker was dealt, but the option jokers is off")


def opening(
    options: Options,
    hands: Sequence[int],
    seats: tuple[int, ...],
    round_no: int,
    standings: tuple[int, ...],
    leader: int | None,
) -> tuple[int, int]:
    """The seat that opens (-1: anyone, in rapid mode) and the card it must play, if any."""
    if leader is not None:
        return leader, 0
    if options.rapid:
        return NOBODY, 0
    if round_no > 1 and standings:
        return (standings[0] if options.later_lead == "president" else standings[-1]), 0
    card_bit = 1 << options.first_lead
    for seat in seats:
        if hands[seat] & card_bit:
            return seat, (card_bit if options.first_lead_must_include else 0)
    lowest = min(
        (((hands[seat] & -hands[seat]).bit_length(), seat) for seat in seats if hands[seat]),
        default=(0, seats[0]),
    )
    return lowest[1], 0


def _exchange_pairs(options: Options, standings: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(giver, receiver, count) from the outside in: bottom to top, then second pair."""
    pairs = []
    count_players = len(standings)
    for depth, count in enumerate(options.exchange):
        bottom = count_players - 1 - depth
        if depth >= bottom or (depth >= 1 and count_players < 4):
            break
        pairs.append((standings[bottom], standings[depth], count))
    return pairs
