"""One round of President: exchange, tricks, places and points.

Commands go in, events come out: ``decide(state, command)`` checks the
command and returns the events it causes (or raises :class:`Rejected`, and
nothing changes); ``evolve(state, event)`` folds one event into the state and
holds no rules of its own. ``step`` does both. The state is an immutable
named tuple; hands are bitmasks (see :mod:`president.rules.cards`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from president.rules import bots
from president.rules.cards import (
    JOKER_RANK,
    JOKERS,
    RANK_MASKS,
    RANK_THREE,
    RANK_TWO,
    RANK_WORDS,
    card_name,
    names,
    strongest,
)
from president.rules.combos import SET, Combo, check_beats, classify, set_rank
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import OptionError, Options, check_player_count

EXCHANGE = "exchange"
PLAY = "play"
OVER = "over"
NOBODY = -1


# --------------------------------------------------------------------------- commands
class PlayCards(NamedTuple):
    """``seat`` plays ``cards`` (a mask); ``version`` is the trick version it answers."""

    seat: int
    cards: int
    version: int | None = None


class Pass(NamedTuple):
    """``seat`` passes."""

    seat: int
    version: int | None = None


class ReturnCards(NamedTuple):
    """``seat`` returns ``cards`` in the exchange."""

    seat: int
    cards: int


class Timeout(NamedTuple):
    """The running timer expired; ``expected`` is the timer key it was started on."""

    expected: int | None = None


Command = PlayCards | Pass | ReturnCards | Timeout


# --------------------------------------------------------------------------- events
class RoundStarted(NamedTuple):
    """A round was dealt: the hands as dealt, before any exchange."""

    options: Options
    round_no: int
    players: tuple[int, ...]
    hands: tuple[int, ...]
    set_aside: int
    previous_standings: tuple[int, ...]
    scores: tuple[int, ...]
    leader: int
    must_include: int


class CardsGiven(NamedTuple):
    """Cards changed hands in the exchange: automatically, or a free return."""

    giver: int
    receiver: int
    cards: int
    automatic: bool


class PlayStarted(NamedTuple):
    """Every return is in (or there was no exchange); ``leader`` opens (-1: anyone)."""

    leader: int


class CardsPlayed(NamedTuple):
    """An accepted play; ``next_to_act`` is -1 when nobody has the turn."""

    seat: int
    cards: int
    trick_version: int
    next_to_act: int
    skipped: tuple[int, ...]
    same_or_nothing: bool


class Passed(NamedTuple):
    """An accepted pass."""

    seat: int
    next_to_act: int
    skipped: tuple[int, ...]


class TrickClosed(NamedTuple):
    """The trick was won by ``winner``; ``leader`` opens the next (-1: anyone)."""

    trick_version: int
    winner: int
    leader: int


class RevolutionChanged(NamedTuple):
    """Four of a kind reversed the order (``active``) or restored it."""

    active: bool


class PlayerWentOut(NamedTuple):
    """``seat`` emptied their hand; ``penalised`` when it was with 2s (finish_with_two)."""

    seat: int
    penalised: bool


class RoundEnded(NamedTuple):
    """Only one player holds cards: the places, points and whether the game ended."""

    standings: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
    game_over: bool
    winners: tuple[int, ...]


class TimedOut(NamedTuple):
    """The timer ran out; the events that follow are what the server did for ``seat``."""

    seat: int


Event = (
    RoundStarted
    | CardsGiven
    | PlayStarted
    | CardsPlayed
    | Passed
    | TrickClosed
    | RevolutionChanged
    | PlayerWentOut
    | RoundEnded
    | TimedOut
)


# --------------------------------------------------------------------------- state
class Pending(NamedTuple):
    """A return still owed in the exchange."""

    giver: int
    receiver: int
    size: int


class RoundState(NamedTuple):
    """Everything about one round. Never mutated: every change makes a new one."""

    options: Options
    round_no: int
    players: tuple[int, ...]
    scores: tuple[int, ...]
    previous_standings: tuple[int, ...]
    phase: str
    hands: tuple[int, ...]
    to_act: int
    top: int
    top_seat: int
    trick_leader: int
    trick_version: int
    moves: int
    sat_out: int
    run_rank: int
    run_count: int
    same_or_nothing: bool
    revolution: bool
    finished: tuple[int, ...]
    penalised: tuple[int, ...]
    pending: tuple[Pending, ...]
    new_cards: tuple[int, ...]
    must_include: int
    set_aside: int
    dealt: tuple[int, ...]
    result: RoundEnded | None

    @property
    def seat_count(self) -> int:
        return len(self.hands)

    @property
    def timer_key(self) -> int:
        """What a timer started now expires on: rapid's trick version, else the move count."""
        return self.trick_version if self.options.rapid else self.moves


_FIELDS = RoundState._fields
_I = {name: index for index, name in enumerate(_FIELDS)}
_tuple_new = tuple.__new__


def _make(values: list[Any]) -> RoundState:
    return _tuple_new(RoundState, values)


I_PHASE = _I["phase"]
I_HANDS = _I["hands"]
I_TO_ACT = _I["to_act"]
I_TOP = _I["top"]
I_TOP_SEAT = _I["top_seat"]
I_TRICK_LEADER = _I["trick_leader"]
I_TRICK_VERSION = _I["trick_version"]
I_MOVES = _I["moves"]
I_SAT_OUT = _I["sat_out"]
I_RUN_RANK = _I["run_rank"]
I_RUN_COUNT = _I["run_count"]
I_SAME = _I["same_or_nothing"]
I_REVOLUTION = _I["revolution"]
I_FINISHED = _I["finished"]
I_PENALISED = _I["penalised"]
I_PENDING = _I["pending"]
I_NEW = _I["new_cards"]
I_MUST_INCLUDE = _I["must_include"]
I_RESULT = _I["result"]


def _bit(seat: int) -> int:
    return 1 << seat


# --------------------------------------------------------------------------- starting
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
    first_leader, must_include = _opening(options, hands, seats, round_no, standings, leader)
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


def _opening(
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


def initial_state(started: RoundStarted) -> RoundState:
    """The state a :class:`RoundStarted` event describes."""
    seat_count = len(started.hands)
    return RoundState(
        options=started.options,
        round_no=started.round_no,
        players=started.players,
        scores=started.scores,
        previous_standings=started.previous_standings,
        phase=EXCHANGE,
        hands=started.hands,
        to_act=NOBODY,
        top=0,
        top_seat=NOBODY,
        trick_leader=NOBODY,
        trick_version=0,
        moves=0,
        sat_out=0,
        run_rank=-1,
        run_count=0,
        same_or_nothing=False,
        revolution=False,
        finished=(),
        penalised=(),
        pending=(),
        new_cards=(0,) * seat_count,
        must_include=started.must_include,
        set_aside=started.set_aside,
        dealt=started.hands,
        result=None,
    )


# --------------------------------------------------------------------------- evolve
def evolve(state: RoundState, event: Event) -> RoundState:
    """Fold one event into the state. Holds no rules: events say what happened."""
    evolved: RoundState = _EVOLVE[type(event)](state, event)  # type: ignore[operator]
    return evolved


def _with(state: RoundState, changes: dict[int, object]) -> RoundState:
    values: list[Any] = list(state)
    for index, value in changes.items():
        values[index] = value
    return _make(values)


def _evolve_started(state: RoundState | None, event: RoundStarted) -> RoundState:
    return initial_state(event)


def _evolve_given(state: RoundState, event: CardsGiven) -> RoundState:
    hands = list(state.hands)
    hands[event.giver] &= ~event.cards
    hands[event.receiver] |= event.cards
    new_cards = list(state.new_cards)
    new_cards[event.giver] &= ~event.cards
    new_cards[event.receiver] |= event.cards
    if event.automatic:
        pending = (*state.pending, Pending(event.receiver, event.giver, event.cards.bit_count()))
        moves = state.moves
    else:
        pending = tuple(p for p in state.pending if p.giver != event.giver)
        moves = state.moves + 1
    return _with(
        state,
        {I_HANDS: tuple(hands), I_NEW: tuple(new_cards), I_PENDING: pending, I_MOVES: moves},
    )


def _evolve_play_started(state: RoundState, event: PlayStarted) -> RoundState:
    return _with(state, {I_PHASE: PLAY, I_TO_ACT: event.leader})


def _evolve_played(state: RoundState, event: CardsPlayed) -> RoundState:
    seat = event.seat
    cards = event.cards
    values: list[Any] = list(state)
    hands = list(state.hands)
    hands[seat] &= ~cards
    values[I_HANDS] = tuple(hands)
    rank = ((cards & -cards).bit_length() - 1) >> 2
    if cards & ~RANK_MASKS[rank]:
        rank = -1
    if rank >= 0 and rank == state.run_rank and state.top:
        values[I_RUN_COUNT] = state.run_count + cards.bit_count()
    else:
        values[I_RUN_COUNT] = cards.bit_count() if rank >= 0 else 0
    values[I_RUN_RANK] = rank
    if not state.top:
        values[I_TRICK_LEADER] = seat
    values[I_TOP] = cards
    values[I_TOP_SEAT] = seat
    values[I_TRICK_VERSION] = event.trick_version
    values[I_MOVES] = state.moves + 1
    values[I_TO_ACT] = event.next_to_act
    values[I_SAME] = event.same_or_nothing
    values[I_MUST_INCLUDE] = 0
    if state.new_cards[seat]:
        new_cards = list(state.new_cards)
        new_cards[seat] = 0
        values[I_NEW] = tuple(new_cards)
    return _tuple_new(RoundState, values)


def _evolve_passed(state: RoundState, event: Passed) -> RoundState:
    values: list[Any] = list(state)
    values[I_MOVES] = state.moves + 1
    if state.options.sit_out:
        values[I_SAT_OUT] = state.sat_out | 1 << event.seat
    values[I_TO_ACT] = event.next_to_act
    values[I_SAME] = False
    return _make(values)


def _evolve_closed(state: RoundState, event: TrickClosed) -> RoundState:
    values: list[Any] = list(state)
    values[I_TOP] = 0
    values[I_TOP_SEAT] = NOBODY
    values[I_TRICK_LEADER] = NOBODY
    values[I_TRICK_VERSION] = event.trick_version
    values[I_SAT_OUT] = 0
    values[I_RUN_RANK] = -1
    values[I_RUN_COUNT] = 0
    values[I_SAME] = False
    values[I_TO_ACT] = event.leader
    return _make(values)


def _evolve_revolution(state: RoundState, event: RevolutionChanged) -> RoundState:
    return _with(state, {I_REVOLUTION: event.active})


def _evolve_out(state: RoundState, event: PlayerWentOut) -> RoundState:
    changes: dict[int, object] = {I_FINISHED: (*state.finished, event.seat)}
    if event.penalised:
        changes[I_PENALISED] = (*state.penalised, event.seat)
    return _with(state, changes)


def _evolve_ended(state: RoundState, event: RoundEnded) -> RoundState:
    return _with(state, {I_PHASE: OVER, I_TO_ACT: NOBODY, I_RESULT: event, I_SAME: False})


def _evolve_timed_out(state: RoundState, event: TimedOut) -> RoundState:
    return state


_EVOLVE = {
    RoundStarted: _evolve_started,
    CardsGiven: _evolve_given,
    PlayStarted: _evolve_play_started,
    CardsPlayed: _evolve_played,
    Passed: _evolve_passed,
    TrickClosed: _evolve_closed,
    RevolutionChanged: _evolve_revolution,
    PlayerWentOut: _evolve_out,
    RoundEnded: _evolve_ended,
    TimedOut: _evolve_timed_out,
}


def replay(events: Sequence[Event]) -> RoundState:
    """The state after a whole list of events, the first being :class:`RoundStarted`."""
    first = events[0]
    if not isinstance(first, RoundStarted):
        raise ValueError("a round's events begin with RoundStarted")
    state = initial_state(first)
    for event in events[1:]:
        state = evolve(state, event)
    return state


# --------------------------------------------------------------------------- decide
def decide(state: RoundState, command: Command) -> list[Event]:
    """The events ``command`` causes, or :class:`Rejected` (nothing changes)."""
    kind = type(command)
    if kind is PlayCards:
        return _decide_play(state, command.seat, command.cards, command.version)  # type: ignore[union-attr]
    if kind is Pass:
        return _decide_pass(state, command.seat, command.version)  # type: ignore[union-attr]
    if kind is ReturnCards:
        return _decide_return(state, command.seat, command.cards)  # type: ignore[union-attr]
    if kind is Timeout:
        return _decide_timeout(state, command.expected)  # type: ignore[union-attr]
    raise TypeError(f"not a round command: {command!r}")


def step(state: RoundState, command: Command) -> tuple[RoundState, list[Event]]:
    """``decide`` then ``evolve``: the new state and the events."""
    events = decide(state, command)
    for event in events:
        state = _EVOLVE[type(event)](state, event)  # type: ignore[operator]
    return state, events


def check_play(state: RoundState, seat: int, cards: int, version: int | None = None) -> Combo:
    """Raise :class:`Rejected` unless ``seat`` may play ``cards`` now; returns its combination.

    The checks run in the order of precedence of FORMAT.md, so the first that
    fails is the code reported.
    """
    options = state.options
    if state.phase != PLAY:
        raise _wrong_phase(state, "play")
    if version is not None and version != state.trick_version:
        raise Rejected(
            ErrorCode.STALE,
            f"the trick moved on: your play answered version {version}, "
            f"it is now at version {state.trick_version}; your cards stay in your hand",
        )
    hands = state.hands
    if not 0 <= seat < len(hands) or not hands[seat]:
        raise Rejected(ErrorCode.NOT_YOUR_TURN, f"seat {seat} holds no cards in this round")
    social = False
    if options.rapid:
        if state.sat_out >> seat & 1:
            raise Rejected(ErrorCode.SAT_OUT, "you passed: you are out of this trick")
    elif seat != state.to_act:
        social = options.social and _completes_four(state, seat, cards)
        if not social:
            raise Rejected(ErrorCode.NOT_YOUR_TURN, lambda: f"it is seat {state.to_act}'s turn")
    elif state.sat_out >> seat & 1:  # pragma: no cover - the turn never reaches a sat-out seat
        raise Rejected(ErrorCode.SAT_OUT, "you passed: you are out of this trick")
    if cards & ~hands[seat]:
        missing = cards & ~hands[seat]
        raise Rejected(ErrorCode.NOT_IN_HAND, lambda: f"you do not hold {' '.join(names(missing))}")
    combo = classify(cards, options, state.revolution)
    if (
        options.poker_hands
        and combo.kind == SET
        and combo.size == 4
        and combo.rank != JOKER_RANK
        and cards != hands[seat]
    ):
        raise Rejected(
            ErrorCode.INVALID_COMBINATION,
            "with poker hands, four of a kind is played with a fifth card of your choice",
        )
    if state.must_include and not cards & state.must_include:
        raise Rejected(
            ErrorCode.MUST_INCLUDE,
            f"the first play of the game must include the {card_name(options.first_lead)}",
        )
    if social:
        return combo
    if state.same_or_nothing and seat == state.to_act and combo.rank != state.run_rank:
        raise Rejected(
            ErrorCode.SAME_OR_NOTHING,
            lambda: (
                f"same or nothing: you may only answer with {RANK_WORDS[state.run_rank]}s "
                "of the same count, or pass"
            ),
        )
    top = state.top
    if top:
        top_combo = classify(top, options, state.revolution)
        if options.plain_compare and combo.size == top_combo.size:
            # The common case, inline: one rank against one rank, same count.
            if state.revolution:
                mine, theirs = 12 - combo.rank, 12 - top_combo.rank
            else:
                mine, theirs = combo.rank, top_combo.rank
            if mine > theirs or (mine == theirs and options.equal_rank_answers):
                return combo
        check_beats(combo, cards, top_combo, top, options, state.revolution)
    return combo


def _completes_four(state: RoundState, seat: int, cards: int) -> bool:
    """Social rule: these cards complete four of a kind at the top of the trick."""
    rank = set_rank(cards)
    return (
        rank >= 0
        and state.top != 0
        and rank == state.run_rank
        and rank not in (RANK_TWO, RANK_THREE, JOKER_RANK)
        and state.run_count + cards.bit_count() == 4
        and not cards & ~state.hands[seat]
    )


def _wrong_phase(state: RoundState, what: str) -> Rejected:
    if state.phase == EXCHANGE:
        return Rejected(
            ErrorCode.WRONG_PHASE,
            f"you cannot {what} during the exchange: play begins when every return is in",
        )
    if state.phase == OVER:
        return Rejected(ErrorCode.WRONG_PHASE, "the round is over")
    return Rejected(ErrorCode.WRONG_PHASE, f"you cannot {what} now")


def _decide_play(state: RoundState, seat: int, cards: int, version: int | None) -> list[Event]:
    combo = check_play(state, seat, cards, version)
    options = state.options
    hands = list(state.hands)
    left = hands[seat] & ~cards
    hands[seat] = left
    trick_version = state.trick_version + 1
    is_set = combo.kind == SET
    rank = combo.rank if is_set else -1
    matched = state.top != 0 and is_set and rank == state.run_rank
    run_count = state.run_count + combo.size if matched else combo.size
    after: list[Event] = []
    if options.revolution and is_set and combo.size == 4 and rank != JOKER_RANK:
        after.append(RevolutionChanged(not state.revolution))
    if not left:
        after.append(PlayerWentOut(seat, options.finish_with_two and rank == RANK_TWO))
        if len(hands) - hands.count(0) <= 1:
            played = CardsPlayed(seat, cards, trick_version, NOBODY, (), False)
            return [played, *after, _round_end(state, hands, [played, *after])]

    closes = bool(cards & JOKERS) or (
        is_set
        and (
            (options.four_closes and run_count >= 4)
            or (options.strongest_closes and rank == (RANK_THREE if state.revolution else RANK_TWO))
            or (options.social and run_count == 4 and rank not in _NOT_SOCIAL)
        )
    )
    next_seat, restricted = NOBODY, False
    skipped: tuple[int, ...] = ()
    if not closes:
        if options.rapid:
            others = _holders_mask(hands) & ~(1 << seat)
            closes = others & ~state.sat_out == 0
        elif not options.one_lap and (not matched or options.skip_rule == "off"):
            # The common case, inline: the next seat with cards still in the trick.
            sat_out = state.sat_out if options.sit_out else 0
            seat_count = len(hands)
            other = seat
            while True:
                other += 1
                if other == seat_count:
                    other = 0
                if other == seat:
                    closes = True
                    break
                if hands[other] and not sat_out >> other & 1:
                    next_seat = other
                    break
        else:
            lap_leader = (state.trick_leader if state.top else seat) if options.one_lap else NOBODY
            skip = options.skip_rule if matched else "off"
            next_seat, skipped, restricted, closes = _walk(
                state, hands, seat, seat, lap_leader, skip, rank, combo.size
            )
    played = CardsPlayed(seat, cards, trick_version, next_seat, skipped, restricted)
    events: list[Event] = [played, *after] if after else [played]
    if closes:
        events.append(TrickClosed(trick_version + 1, seat, _leader_after(options, hands, seat)))
    return events


_NOT_SOCIAL = (RANK_TWO, RANK_THREE, JOKER_RANK)


def _decide_pass(state: RoundState, seat: int, version: int | None) -> list[Event]:
    options = state.options
    if state.phase != PLAY:
        raise _wrong_phase(state, "pass")
    if version is not None and version != state.trick_version:
        raise Rejected(
            ErrorCode.STALE,
            f"the trick moved on: your pass answered version {version}, "
            f"it is now at version {state.trick_version}",
        )
    hands = state.hands
    if not 0 <= seat < len(hands) or not hands[seat]:
        raise Rejected(ErrorCode.NOT_YOUR_TURN, f"seat {seat} holds no cards in this round")
    if options.rapid:
        if state.sat_out >> seat & 1:
            raise Rejected(ErrorCode.SAT_OUT, "you already passed: you are out of this trick")
    elif seat != state.to_act:
        raise Rejected(ErrorCode.NOT_YOUR_TURN, f"it is seat {state.to_act}'s turn")
    if not state.top:
        raise Rejected(ErrorCode.MUST_PLAY, "you open this trick: you must play, not pass")
    if options.rapid and seat == state.top_seat:
        raise Rejected(ErrorCode.MUST_PLAY, "the last player to play cannot pass")
    last = state.top_seat
    if options.rapid:
        sat_out = state.sat_out | _bit(seat)
        others = _holders_mask(hands) & ~_bit(last)
        if others & ~sat_out == 0:
            return [
                Passed(seat, NOBODY, ()),
                TrickClosed(state.trick_version + 1, last, _leader_after(options, hands, last)),
            ]
        return [Passed(seat, NOBODY, ())]
    if options.sit_out:
        state = _with(state, {I_SAT_OUT: state.sat_out | _bit(seat)})
    lap_leader = state.trick_leader if options.one_lap else NOBODY
    next_seat, _, _, closes = _walk(state, hands, seat, last, lap_leader, "off", -1, 0)
    if closes:
        return [
            Passed(seat, NOBODY, ()),
            TrickClosed(state.trick_version + 1, last, _leader_after(options, hands, last)),
        ]
    return [Passed(seat, next_seat, ())]


def _walk(
    state: RoundState,
    hands: list[int] | tuple[int, ...],
    after: int,
    last: int,
    lap_leader: int,
    skip: str,
    rank: int,
    count: int,
) -> tuple[int, tuple[int, ...], bool, bool]:
    """Who acts after ``after``: (seat, skipped seats, same-or-nothing, trick closes).

    Turns go clockwise. The trick closes when the turn would come back to (or
    past) ``last``, the owner of the top play: everyone else has passed, is
    out of the trick, or has no cards. With ``one_lap`` it also closes on
    reaching the seat that led it.
    """
    seat_count = len(hands)
    sat_out = state.sat_out if state.options.sit_out else 0
    skipped: tuple[int, ...] = ()
    seat = after
    for _ in range(seat_count):
        seat = (seat + 1) % seat_count
        if seat in (last, lap_leader):
            return NOBODY, skipped, False, True
        if not hands[seat] or sat_out >> seat & 1:
            continue
        if skip == "same_or_nothing":
            skip = "off"
            if (hands[seat] & RANK_MASKS[rank]).bit_count() >= count:
                return seat, skipped, True, False
            skipped = (*skipped, seat)
            continue
        if skip == "must_pass":
            skip = "off"
            skipped = (*skipped, seat)
            continue
        return seat, skipped, False, False
    return NOBODY, skipped, False, True


def _holders_mask(hands: list[int] | tuple[int, ...]) -> int:
    mask = 0
    for seat, hand in enumerate(hands):
        if hand:
            mask |= 1 << seat
    return mask


def _leader_after(options: Options, hands: list[int] | tuple[int, ...], winner: int) -> int:
    """Who opens after ``winner`` takes a trick: the winner, or the next holder clockwise."""
    if options.rapid:
        return NOBODY
    seat_count = len(hands)
    for offset in range(seat_count):
        seat = (winner + offset) % seat_count
        if hands[seat]:
            return seat
    return NOBODY


def _round_end(state: RoundState, hands: list[int], events: list[Event]) -> RoundEnded:
    finished = list(state.finished)
    penalised = list(state.penalised)
    for event in events:
        if isinstance(event, PlayerWentOut):
            finished.append(event.seat)
            if event.penalised:
                penalised.append(event.seat)
    remaining = [seat for seat in state.players if hands[seat]]
    standings = tuple(
        [seat for seat in finished if seat not in penalised] + remaining + penalised[::-1]
    )
    return round_result(state, standings)


def round_result(state: RoundState, standings: tuple[int, ...]) -> RoundEnded:
    """Points, totals and the game's end for a round that finished in ``standings``."""
    options = state.options
    points = [0] * state.seat_count
    for place, seat in enumerate(standings):
        points[seat] = place_points(options.scoring, place, len(standings))
    totals = tuple(total + earned for total, earned in zip(state.scores, points, strict=True))
    game_over, winners = game_end(options, state.round_no, totals, state.players)
    return RoundEnded(standings, tuple(points), totals, game_over, winners)


def place_points(scoring: str, place: int, players: int) -> int:
    """Points for ``place`` (0 = first) among ``players``."""
    if scoring == "below":
        return players - 1 - place
    role = role_key(place, players)
    if scoring == "classic":
        return {"top": 2, "second": 1}.get(role, 0)
    # house: President 3, Vice 2, each Neutral 1, Vice-asshole and Asshole 0.
    return {"top": 3, "second": 2, "middle": 1}.get(role, 0)


def role_key(place: int, players: int) -> str:
    """``top``, ``second``, ``middle``, ``second_bottom`` or ``bottom`` for a place."""
    if place == 0:
        return "top"
    if place == players - 1:
        return "bottom"
    if players >= 4 and place == 1:
        return "second"
    if players >= 4 and place == players - 2:
        return "second_bottom"
    return "middle"


def game_end(
    options: Options, round_no: int, totals: tuple[int, ...], players: tuple[int, ...]
) -> tuple[bool, tuple[int, ...]]:
    """Whether the game ends after ``round_no`` with these totals, and its winners."""
    best = max(totals[seat] for seat in players)
    leaders = tuple(seat for seat in players if totals[seat] == best)
    target = options.target_score
    if target is not None:
        if best >= target and len(leaders) == 1:
            return True, leaders
        return False, ()
    limit = options.round_limit
    if limit is not None and round_no >= limit:
        return True, leaders
    return False, ()


def _decide_return(state: RoundState, seat: int, cards: int) -> list[Event]:
    if state.phase != EXCHANGE:
        raise _wrong_phase(state, "return cards")
    owed = next((p for p in state.pending if p.giver == seat), None)
    if owed is None:
        raise Rejected(ErrorCode.WRONG_GIVE, "you have no cards to return in this exchange")
    if cards.bit_count() != owed.size:
        plural = "card" if owed.size == 1 else "cards"
        raise Rejected(ErrorCode.WRONG_GIVE, f"you return exactly {owed.size} {plural}")
    if cards & ~state.hands[seat]:
        missing = " ".join(card_name(c) for c in range(54) if (cards & ~state.hands[seat]) >> c & 1)
        raise Rejected(ErrorCode.NOT_IN_HAND, f"you do not hold {missing}")
    events: list[Event] = [CardsGiven(seat, owed.receiver, cards, False)]
    if len(state.pending) == 1:
        leader, _ = _opening(
            state.options,
            state.hands,
            state.players,
            state.round_no,
            state.previous_standings,
            None,
        )
        events.append(PlayStarted(leader))
    return events


def _decide_timeout(state: RoundState, expected: int | None) -> list[Event]:
    if expected is not None and expected != state.timer_key:
        raise Rejected(
            ErrorCode.STALE,
            f"this timer was set at {expected}; the table has moved on to {state.timer_key}",
        )
    if state.phase == OVER:
        raise _wrong_phase(state, "time out")
    events: list[Event] = []
    if state.phase == EXCHANGE:
        events.append(TimedOut(NOBODY))
        current = state
        for owed in state.pending:
            cards = bots.choose_return(current, owed.giver, owed.size)
            produced = _decide_return(current, owed.giver, cards)
            events.extend(produced)
            for event in produced:
                current = evolve(current, event)
        return events
    options = state.options
    if options.rapid:
        if state.top:
            return [
                TimedOut(NOBODY),
                TrickClosed(
                    state.trick_version + 1,
                    state.top_seat,
                    _leader_after(options, state.hands, state.top_seat),
                ),
            ]
        seat = max(
            (seat for seat in state.players if state.hands[seat]),
            key=lambda s: (state.hands[s].bit_count(), -s),
        )
        return [TimedOut(seat), *_decide_play(state, seat, bots.choose_lead(state, seat), None)]
    seat = state.to_act
    if state.top:
        return [TimedOut(seat), *_decide_pass(state, seat, None)]
    return [TimedOut(seat), *_decide_play(state, seat, bots.choose_lead(state, seat), None)]


# --------------------------------------------------------------------------- queries
Action = tuple[str, int]


def legal_actions(state: RoundState, seat: int) -> list[Action]:
    """Every action ``seat`` may take now: ``("play", cards)``, ``("pass", 0)``, ``("give", …)``.

    Each listed action is accepted by :func:`decide`; every other is rejected.
    """
    if state.phase == EXCHANGE:
        owed = next((p for p in state.pending if p.giver == seat), None)
        if owed is None:
            return []
        return [("give", cards) for cards in _subsets_of_size(state.hands[seat], owed.size)]
    if state.phase != PLAY or not 0 <= seat < state.seat_count or not state.hands[seat]:
        return []
    actions: list[Action] = []
    candidates = candidate_plays(state.hands[seat], state.options.poker_hands)
    if not state.options.rapid and seat != state.to_act:
        # Out of turn only the social rule's four of a kind may be played: a set of
        # the trick's rank. Trying only those spares a refusal per other candidate.
        if not (state.options.social and state.top):
            candidates = []
        candidates = [cards for cards in candidates if set_rank(cards) == state.run_rank]
    for cards in candidates:
        try:
            check_play(state, seat, cards)
        except Rejected:
            continue
        actions.append(("play", cards))
    try:
        _decide_pass(state, seat, None)
    except Rejected:
        pass
    else:
        actions.append(("pass", 0))
    return actions


def candidate_plays(hand: int, poker_hands: bool) -> list[int]:
    """Every set of cards from ``hand`` that could be a play: one-rank subsets, poker fives."""
    plays = []
    for rank in range(14):
        group = hand & RANK_MASKS[rank]
        if not group:
            continue
        sub = group
        while sub:
            plays.append(sub)
            sub = (sub - 1) & group
    if poker_hands:
        plays.extend(cards for cards in _subsets_of_size(hand & ~JOKERS, 5) if set_rank(cards) < 0)
    return plays


def _subsets_of_size(mask: int, size: int) -> list[int]:
    cards = [1 << c for c in range(54) if mask >> c & 1]
    out: list[int] = []

    def extend(start: int, chosen: int, left: int) -> None:
        if left == 0:
            out.append(chosen)
            return
        for index in range(start, len(cards) - left + 1):
            extend(index + 1, chosen | cards[index], left - 1)

    extend(0, 0, size)
    return out
