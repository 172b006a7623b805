"""What clients receive never shows another seat's cards: the protobuf views and events.

The gateway sends each seat ``seat_views.table_view`` and events passed
through ``seat_views.redact``; this checks both over whole random games of
every preset and random option mixes, at every event, for every seat and for
spectators.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president import codec
from president.hosting.projection import Table
from president.hosting.seat_views import redact, table_view
from president.play.offline import play_game
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import names
from tests.support.rules_strategies import option_mixes

_CARD_FIELDS = {"cards", "hand", "new_cards", "top", "set_aside"}


def _cards_in(message: object) -> set[str]:
    """Every card text anywhere in a protobuf message."""
    found: set[str] = set()
    for descriptor, value in message.ListFields():  # type: ignore[attr-defined]
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if hasattr(item, "ListFields"):
                found |= _cards_in(item)
            # Not ``must_include``: the rules make it public (whoever holds the
            # first-lead card is announced as the opener and must play it).
            elif isinstance(item, str) and descriptor.name in _CARD_FIELDS:
                found.add(item)
    return found


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=option_mixes(), seed=st.integers(0, 10**6), data=st.data())
def test_views_and_events_a_client_receives_hold_only_its_own_cards(options, seed, data):  # type: ignore[no-untyped-def]
    players = data.draw(st.integers(options.min_players, min(options.max_players, 6)))
    checked = 0
    known: dict[int, set[str]] = {}  # cards each seat held this round (dealt, given, received)

    def check(event: g.GameEvent, game: g.GameState) -> None:
        nonlocal checked
        if isinstance(event, rnd.RoundStarted):
            known.clear()
            known.update({seat: set(names(hand)) for seat, hand in enumerate(event.hands)})
        elif isinstance(event, rnd.CardsGiven):
            known[event.giver] |= set(names(event.cards))
            known[event.receiver] |= set(names(event.cards))
        state = game.round
        if state is None:
            return
        table = Table("t", game, version=1)
        set_aside = set(names(state.set_aside))
        message = codec.encode(event)
        for viewer in [*range(len(game.seats)), None]:
            mine = known.get(viewer, set()) if viewer is not None else set()
            others = set().union(
                *(set(names(hand)) for seat, hand in enumerate(state.hands) if seat != viewer)
            )
            shown = _cards_in(table_view(table, viewer)) | _cards_in(redact(message, viewer))
            leaked = shown & ((others - mine) | set_aside)
            assert not leaked, f"seat {viewer} receives {sorted(leaked)} after {event!r}"
        checked += 1

    play_game(options, players, seed=seed, rounds=2, listener=check)
    assert checked > 0
