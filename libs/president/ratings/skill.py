"""A skill rating from finishing orders: openskill's Plackett-Luce model, one round at a time.

A President round is a ranking of 3 to 8 places, not a win or a loss:
Plackett-Luce (Weng and Lin's Bayesian approximation) reads it whole. Each
account holds a :class:`Skill`, a mean ``mu`` and an uncertainty ``sigma``;
the number shown is the conservative one, ``mu - 3 sigma`` (openskill's
ordinal), which a player climbs by playing well *and* by playing enough for
the uncertainty to shrink. An account with fewer than
:data:`PROVISIONAL_ROUNDS` rated rounds is provisional.

An account may hold several seats of one round (every bot of a level plays as
that level's account): each of its seats is rated as a player starting from
the account's skill, and the account takes the mean of its seats' results.
The arithmetic is deterministic, so folding the same rounds in the same order
gives the same floats, bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

#: Rated rounds below which an account's rating is provisional.
PROVISIONAL_ROUNDS = 10
#: How many uncertainties the conservative number stands below the mean.
CONSERVATIVE_SIGMAS = 3.0

_MODEL = PlackettLuce()


@dataclass(frozen=True)
class Skill:
    """An account's rating in one preset: mean, uncertainty and rounds rated."""

    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma
    rounds: int = 0

    @property
    def conservative(self) -> float:
        """``mu - 3 sigma``: the number leaderboards rank by."""
        return self.mu - CONSERVATIVE_SIGMAS * self.sigma

    @property
    def provisional(self) -> bool:
        """Whether too few rounds were rated for the number to mean much yet."""
        return self.rounds < PROVISIONAL_ROUNDS


NEW = Skill()


def rate_round(skills: Mapping[str, Skill], finishing: Sequence[str]) -> dict[str, Skill]:
    """Each account's skill after a round its seats finished in ``finishing`` order.

    ``finishing`` lists the account of each place, first place first (an
    account may appear more than once); ``skills`` holds what is known of
    them (an absent one is :data:`NEW`). Returns the new skill of every
    account in ``finishing``.
    """
    if len(finishing) < 2:
        return {}
    before = [skills.get(account, NEW) for account in finishing]
    teams = [[_MODEL.rating(mu=skill.mu, sigma=skill.sigma)] for skill in before]
    rated = _MODEL.rate(teams, ranks=[float(place) for place in range(len(finishing))])
    seats: dict[str, list[tuple[float, float]]] = {}
    for account, team in zip(finishing, rated, strict=True):
        seats.setdefault(account, []).append((team[0].mu, team[0].sigma))
    after: dict[str, Skill] = {}
    for account, results in seats.items():
        old = skills.get(account, NEW)
        after[account] = Skill(
            mu=sum(mu for mu, _ in results) / len(results),
            sigma=sum(sigma for _, sigma in results) / len(results),
            rounds=old.rounds + 1,
        )
    return after
