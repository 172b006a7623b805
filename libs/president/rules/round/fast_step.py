"""Speed trick: ``step`` for a play or a pass in a plain trick, decided and folded at once.

Under ``options.plain_tricks`` (classic, club and house: turns in order, one
rank against one rank by exact count, no jokers, poker, rapid mode, one lap or
social rule), most moves are a play of one rank that beats the top, or a pass,
by the seat whose turn it is. :func:`step_play` and :func:`step_pass` make such
a move's events and new state in one function each, skipping the general path's
per-event fold (a copy of the state per event) and the checks those options
make moot. They return None for anything else (a refusal, the round's last
play, a revolution, a match under a skip rule, another mode), and
:func:`president.rules.round.decisions.step` then takes the general path.

The events and state are those of ``decide`` then ``evolve``:
``tests/unit/rules/test_fast_step.py`` checks it at every state of random
rounds. The table service decides and folds separately, so this serves
``round.step``'s callers: bots' playouts, scenarios and the rules bench.
"""

from __future__ import annotations

from president.rules.cards import RANK_MASKS, RANK_THREE, RANK_TWO
from president.rules.round.commands import Pass, PlayCards
from president.rules.round.events import CardsPlayed, Event, Passed, PlayerWentOut, TrickClosed
from president.rules.round.plays import leader_after
from president.rules.round.state import NOBODY, RoundPhase, RoundState, tuple_new

_PLAY = RoundPhase.PLAY
Stepped = tuple[RoundState, list[Event]]

#: The functions below unpack a state and build the next one field by field, in this
#: order: one unpacking and one tuple instead of a read per field and a list copy.
FIELDS = (
    "options",
    "round_no",
    "players",
    "scores",
    "previous_standings",
    "phase",
    "hands",
    "to_act",
    "top",
    "top_seat",
    "trick_leader",
    "trick_version",
    "moves",
    "sat_out",
    "run_rank",
    "run_count",
    "same_or_nothing",
    "revolution",
    "finished",
    "penalised",
    "pending",
    "new_cards",
    "must_include",
    "set_aside",
    "dealt",
    "result",
    "played",
    "exchanged",
)
if RoundState._fields != FIELDS:  # pragma: no cover - a changed state must change this
    raise ImportError("round.fast_step unpacks RoundState's fields in an order they no longer have")


def step_play(state: RoundState, command: PlayCards) -> Stepped | None:
    """A plain trick's play by the seat to act that does not end the round, or None."""
    if not state.options.plain_tricks:
        return None  # before unpacking: other rules pay nothing more
    seat, cards, version = command
    (
        options,
        round_no,
        players,
        scores,
        previous_standings,
        phase,
        hands,
        to_act,
        top,
        top_seat,
        trick_leader,
        trick_version,
        moves,
        sat_out,
        run_rank,
        run_count,
        same_or_nothing,
        revolution,
        finished,
        penalised,
        pending,
        new_cards,
        must_include,
        set_aside,
        dealt,
        result,
        played,
        exchanged,
    ) = state
    if phase is not _PLAY or seat != to_act or seat < 0:
        return None
    if version is not None and version != trick_version:
        return None
    hand = hands[seat]
    left = hand & ~cards
    if not cards or cards & ~hand or sat_out >> seat & 1:
        return None
    rank = ((cards & -cards).bit_length() - 1) >> 2
    if cards & ~RANK_MASKS[rank] or (must_include and not cards & must_include):
        return None
    if same_or_nothing and rank != run_rank:
        return None
    size = cards.bit_count()
    if size == 4 and options.revolution:
        return None  # a revolution: the general path says so
    matched = top and rank == run_rank
    if matched and options.skip_rule != "off":
        return None  # the next seat may be skipped or restricted: the general path walks
    if top:
        top_rank = ((top & -top).bit_length() - 1) >> 2
        if size != top.bit_count() or top & ~RANK_MASKS[top_rank]:
            return None
        if revolution:
            mine, theirs = 12 - rank, 12 - top_rank
        else:
            mine, theirs = rank, top_rank
        if mine < theirs or (mine == theirs and not options.equal_rank_answers):
            return None
    trick_version += 1
    after = list(hands)
    after[seat] = left
    if not left and len(after) - after.count(0) <= 1:
        return None  # the round ends: its scoring is the general path's
    run_count = run_count + size if matched else size
    if (options.four_closes and run_count >= 4) or (
        options.strongest_closes and rank == (RANK_THREE if revolution else RANK_TWO)
    ):
        next_seat = NOBODY  # the play closes the trick
    else:
        # next_in_trick_fast_path, inlined: the next seat with cards that has not sat out.
        out = sat_out if options.sit_out else 0
        seat_count = len(after)
        next_seat = seat
        while True:
            next_seat += 1
            if next_seat == seat_count:
                next_seat = 0
            if next_seat == seat:
                next_seat = NOBODY
                break
            if after[next_seat] and not out >> next_seat & 1:
                break
    events: list[Event] = [
        tuple_new(CardsPlayed, (seat, cards, trick_version, next_seat, (), False))
    ]
    if not left:
        penalised_out = options.finish_with_two and rank == RANK_TWO
        events.append(tuple_new(PlayerWentOut, (seat, penalised_out)))
        finished = (*finished, seat)
        if penalised_out:
            penalised = (*penalised, seat)
    if new_cards[seat]:
        new_cards = (*new_cards[:seat], 0, *new_cards[seat + 1 :])
    if next_seat == NOBODY:  # the trick closes: the events' changes, folded
        leader = leader_after(options, after, seat)
        events.append(tuple_new(TrickClosed, (trick_version + 1, seat, leader)))
        top, top_seat, trick_leader, trick_version = 0, NOBODY, NOBODY, trick_version + 1
        sat_out, run_rank, run_count, to_act = 0, -1, 0, leader
    else:
        if not top:
            trick_leader = seat
        top, top_seat, run_rank, to_act = cards, seat, rank, next_seat
    state = tuple_new(
        RoundState,
        (
            options,
            round_no,
            players,
            scores,
            previous_standings,
            phase,
            tuple(after),
            to_act,
            top,
            top_seat,
            trick_leader,
            trick_version,
            moves + 1,
            sat_out,
            run_rank,
            run_count,
            False,
            revolution,
            finished,
            penalised,
            pending,
            new_cards,
            0,
            set_aside,
            dealt,
            result,
            played | cards,
            exchanged,
        ),
    )
    return state, events


def step_pass(state: RoundState, command: Pass) -> Stepped | None:
    """A plain trick's pass by the seat to act, or None."""
    if not state.options.plain_tricks:
        return None  # before unpacking: other rules pay nothing more
    seat, version = command
    (
        options,
        round_no,
        players,
        scores,
        previous_standings,
        phase,
        hands,
        to_act,
        top,
        top_seat,
        trick_leader,
        trick_version,
        moves,
        sat_out,
        run_rank,
        run_count,
        _same_or_nothing,
        revolution,
        finished,
        penalised,
        pending,
        new_cards,
        must_include,
        set_aside,
        dealt,
        result,
        played,
        exchanged,
    ) = state
    if phase is not _PLAY or seat != to_act or seat < 0:
        return None
    if version is not None and version != trick_version:
        return None
    if not top or not hands[seat]:
        return None
    if options.sit_out:
        sat_out |= 1 << seat
        out = sat_out
    else:
        out = 0
    # walk(hands, out, seat, top_seat, NOBODY, "off", -1, 0), inlined: the next seat with
    # cards that has not sat out, unless the turn comes back to the top's owner first.
    seat_count = len(hands)
    next_seat = seat
    for _ in range(seat_count):
        next_seat += 1
        if next_seat == seat_count:
            next_seat = 0
        if next_seat == top_seat:
            next_seat = NOBODY
            break
        if hands[next_seat] and not out >> next_seat & 1:
            break
    else:
        next_seat = NOBODY
    events: list[Event] = [tuple_new(Passed, (seat, next_seat, ()))]
    if next_seat == NOBODY:  # the trick closes: the events' changes, folded
        leader = leader_after(options, hands, top_seat)
        trick_version += 1
        events.append(tuple_new(TrickClosed, (trick_version, top_seat, leader)))
        top, top_seat, trick_leader = 0, NOBODY, NOBODY
        sat_out, run_rank, run_count, to_act = 0, -1, 0, leader
    else:
        to_act = next_seat
    state = tuple_new(
        RoundState,
        (
            options,
            round_no,
            players,
            scores,
            previous_standings,
            phase,
            hands,
            to_act,
            top,
            top_seat,
            trick_leader,
            trick_version,
            moves + 1,
            sat_out,
            run_rank,
            run_count,
            False,
            revolution,
            finished,
            penalised,
            pending,
            new_cards,
            must_include,
            set_aside,
            dealt,
            result,
            played,
            exchanged,
        ),
    )
    return state, events
