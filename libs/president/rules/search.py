"""The ``strong`` bot: determinized sampling over the deals its seat could be facing.

It sees only an :class:`~president.rules.information.InformationSet`. For a
move with a real choice it deals the unseen cards at random, consistently
with what the seat knows (:func:`~president.rules.information.sample_world`),
plays every candidate move on that deal and the rest of the round out with
the basic bot (:mod:`president.rules.bots`) at every seat, and scores each
candidate by the place the seat finishes in; after the budget it makes the
candidate whose gain over the basic bot's own move is the largest and clear
of the noise (:data:`CONFIDENCE`). Every candidate is played on the same
deals, so the comparison is paired: fair with few deals; a candidate that is
clearly worse, or never different, stops getting playouts, so the budget goes
to the moves still in question.

Every move goes through the engine (:func:`president.rules.round.step`), so
the bot obeys every rule of every preset. The rules keep no clock and no
randomness: the caller passes the random source and the :class:`Budget`,
whose ``stop`` is how a service's clock ends the search
(:mod:`president.hosting.autoplay`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from president.rules import bots
from president.rules.combos import set_rank
from president.rules.information import InformationSet, RandomSource, sample_world
from president.rules.round import Command, Pass, PlayCards, ReturnCards, RoundPhase, Timeout, step
from president.rules.round.legal import legal_actions
from president.rules.round.state import NOBODY, RoundState

#: The most candidate moves weighed (the basic move is always one): poker hands can be many.
MAX_CANDIDATES = 12
#: A playout that has not ended after this many moves is cut short (never seen in play).
MAX_PLAYOUT_MOVES = 1_000
#: How sure the search must be, in standard errors, before it plays otherwise than the basic bot.
CONFIDENCE = 1.0
#: A candidate below the basic move by this many standard errors gets no more playouts ...
PRUNE_CONFIDENCE = 1.5
#: ... once it has been played on this many deals.
MIN_DEALS = 4
_OVER, _PLAY = RoundPhase.OVER, RoundPhase.PLAY


@dataclass(frozen=True, slots=True)
class Budget:
    """How much the search may do: at most ``simulations`` playouts, and ``stop`` (asked before
    each deal: True ends the search, as a caller's deadline passes)."""

    simulations: int = 2_000
    stop: Callable[[], bool] | None = None


def choose_strong(info: InformationSet, rng: RandomSource, budget: Budget) -> Command | None:
    """The strong bot's move for ``info.seat``, or None when it has nothing to do now.

    It acts when the basic bot would (and returns the same cards in the
    exchange); which play it makes is the search's.
    """
    seat = info.seat
    world = sample_world(info, rng)
    basic = bots.choose_action(world, seat)
    if basic is None or isinstance(basic, ReturnCards):
        return basic
    candidates = candidate_moves(world, seat, basic)
    if len(candidates) == 1:
        return candidates[0]
    gains = [_Gain() for _ in candidates]  # each candidate's gain over the basic move
    active = list(range(1, len(candidates)))
    spent = 0
    while active and spent + 1 + len(active) <= budget.simulations:
        if budget.stop is not None and budget.stop():
            break
        basic_score = playout(world, basic, seat)
        for index in active:
            gains[index].add(playout(world, candidates[index], seat) - basic_score)
        spent += 1 + len(active)
        active = [index for index in active if not gains[index].hopeless()]
        world = sample_world(info, rng)
    best, best_mean = 0, 0.0
    for index in range(1, len(candidates)):
        gain = gains[index]
        if gain.mean() > best_mean and gain.clear():
            best, best_mean = index, gain.mean()
    return candidates[best]


class _Gain:
    """A candidate's gains over the basic move, deal by deal: their mean and its noise."""

    __slots__ = ("deals", "squares", "total")

    def __init__(self) -> None:
        self.deals = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, gain: float) -> None:
        self.deals += 1
        self.total += gain
        self.squares += gain * gain

    def mean(self) -> float:
        return self.total / self.deals if self.deals else 0.0

    def error(self) -> float:
        """The standard error of the mean gain."""
        if self.deals < 2:
            return float("inf")
        mean = self.mean()
        variance = max(self.squares / self.deals - mean * mean, 0.0)
        return float((variance / (self.deals - 1)) ** 0.5)

    def clear(self) -> bool:
        """Better than the basic move by more than :data:`CONFIDENCE` standard errors."""
        return self.mean() > CONFIDENCE * self.error()

    def hopeless(self) -> bool:
        """No longer worth its playouts: after :data:`MIN_DEALS` deals, clearly worse than the
        basic move, or never different from it."""
        if self.deals < MIN_DEALS:
            return False
        return self.mean() + PRUNE_CONFIDENCE * self.error() < 0 or self.squares == 0


def candidate_moves(state: RoundState, seat: int, basic: Command) -> list[Command]:
    """The moves worth weighing, the basic bot's first: each legal pass, and of the legal plays
    of each rank and size only the weakest cards (suits seldom matter), poker hands capped."""
    version = state.trick_version
    moves: list[Command] = [basic]
    seen = {_key(basic)}
    legal = legal_actions(state, seat)
    plays = sorted(cards for verb, cards in legal if verb == "play")
    if ("pass", 0) in legal and ("pass", 0) not in seen:
        moves.append(Pass(seat, version))
        seen.add(("pass", 0))
    for cards in plays:
        key = ("play", _play_key(cards))
        if key in seen or len(moves) >= MAX_CANDIDATES:
            continue
        seen.add(key)
        moves.append(PlayCards(seat, cards, version))
    return moves


def _play_key(cards: int) -> int:
    rank = set_rank(cards)
    return (rank << 8 | cards.bit_count()) if rank >= 0 else -cards


def _key(command: Command) -> tuple[str, int]:
    if isinstance(command, PlayCards):
        return ("play", _play_key(command.cards))
    return ("pass", 0)


def playout(world: RoundState, first: Command, seat: int) -> float:
    """``first`` on ``world``, the round played out by basic bots: 1 for first place, 0 for last."""
    state, _ = step(world, first)
    players = len(state.players)
    rapid = state.options.rapid
    turn = seat + 1
    for _ in range(MAX_PLAYOUT_MOVES):
        if state.phase == _OVER:
            break
        if seat in state.finished:
            return 1.0 - _settled_place(state, seat, players) / (players - 1)
        move: Command | None
        if rapid:
            move = _rapid_move(state, turn)
            turn += 1
        elif state.to_act != NOBODY and state.phase == _PLAY:
            move = bots.choose_action(state, state.to_act)
        else:
            move = None
        state, _ = step(state, move if move is not None else Timeout())
    result = state.result
    if result is None:  # pragma: no cover - cut short
        return 0.5
    return 1.0 - result.standings.index(seat) / (players - 1)


def _settled_place(state: RoundState, seat: int, players: int) -> int:
    """The place of a seat that is out: fixed from then on (see the round's scoring)."""
    if seat in state.penalised:
        return players - 1 - state.penalised.index(seat)
    return [s for s in state.finished if s not in state.penalised].index(seat)


def _rapid_move(state: RoundState, turn: int) -> Command | None:
    seat_count = state.seat_count
    for offset in range(seat_count):
        command = bots.choose_action(state, (turn + offset) % seat_count)
        if command is not None:
            return command
    return None
