"""What one seat may see, as protobuf: its view of a table, and events with others' cards removed.

The one definition of a seat's view: the gateway sends these to clients, the
table service answers GetTable with them.

Nobody receives another seat's cards: the view holds the viewer's hand only,
and :func:`redact` strips dealt hands and exchanged cards that are not the
viewer's. Set-aside cards stay hidden until the deal's secret is revealed.
"""

from __future__ import annotations

import functools

from google.protobuf.message import Message

from president import codec
from president.events.v1 import events_pb2 as pb
from president.game.v1 import game_pb2 as gpb
from president.hosting.presence import connected_seats
from president.hosting.projection import Table
from president.rules import game as g
from president.rules.cards import names
from president.rules.options import Options
from president.rules.roles import roles
from president.rules.round import NOBODY, legal_actions


def table_view(table: Table, seat: int | None) -> gpb.TableView:
    """The table as ``seat`` sees it (``None``: a spectator)."""
    return seat_view(public_view(table), table, seat)


@functools.lru_cache(maxsize=256)
def _options_message(options: Options) -> gpb.TableOptions:
    return gpb.TableOptions(preset=options.preset, options=codec.options_to_map(options))


def public_view(table: Table) -> gpb.TableView:
    """What everyone sees of the table: a spectator's view (no hand, no viewer seat).

    :func:`seat_view` adds one seat's own part to a copy of it, so a server
    that shows one change to many seats builds the common part once.
    """
    game = table.game
    options = game.options
    state = game.round
    titles = roles(options.preset, game.standings) if game.standings else {}
    # A newcomer between rounds has neither the role nor the leftover cards of the
    # seat's last occupant.
    newcomers = game.newcomers
    connected = connected_seats(table.presence)
    view = gpb.TableView(
        table_id=table.table_id,
        version=table.version,
        phase=game.phase,
        game_no=game.game_no,
        last_standings=game.standings,
        winners=game.winners,
        stopped=game.stopped,
        host_player_id=table.host_player_id,
        visibility=table.visibility,
        closed=table.closed,
    )
    view.options.CopyFrom(_options_message(options))
    for index, occupant in enumerate(game.seats):
        view.seats.append(
            gpb.SeatView(
                seat=index,
                occupied=occupant.occupied,
                player_id=occupant.player or "",
                display_name=occupant.display_name,
                is_bot=occupant.is_bot,
                left=occupant.leaving,
                card_count=state.hands[index].bit_count()
                if state is not None and index not in newcomers
                else 0,
                score=game.scores[index] if index < len(game.scores) else 0,
                role="" if index in newcomers else titles.get(index, ""),
                connected=index in connected,
                muted=occupant.player is not None and occupant.player in table.muted,
            )
        )
    if state is not None:
        round_view = gpb.RoundView(
            round_no=state.round_no,
            phase=state.phase,
            top=names(state.top),
            trick_version=state.trick_version,
            revolution=state.revolution,
            out_of_trick=[s for s in range(state.seat_count) if state.sat_out >> s & 1],
            finished=state.finished,
            timer_key=state.timer_key,
        )
        if state.to_act != NOBODY:
            round_view.to_act = state.to_act
        if state.top_seat != NOBODY:
            round_view.top_seat = state.top_seat
        if table.commitment is not None and table.commitment.round_no == state.round_no:
            round_view.fingerprint = table.commitment.fingerprint
        if state.result is not None:
            round_view.standings.extend(state.result.standings)
            round_view.points.extend(state.result.points)
        view.round.CopyFrom(round_view)
    return view


def seat_view(
    public: gpb.TableView,
    table: Table,
    seat: int | None,
    into: gpb.TableView | None = None,
    *,
    legal: bool = True,
) -> gpb.TableView:
    """``public`` (from :func:`public_view` of the same table) as ``seat`` sees it.

    Only the seat's own cards are added (:func:`seat_part`): its hand, the
    cards it received, what it owes in the exchange and its legal actions
    (none with ``legal`` False: a view the table has moved on from invites no
    move). ``public`` is not changed. With ``into`` (an empty message, e.g. a
    response's field), the view is built there and returned.
    """
    if seat is None and into is None:
        return public
    view = into if into is not None else gpb.TableView()
    view.CopyFrom(public)
    if seat is not None:
        view.MergeFrom(seat_part(table, seat, legal=legal))
    return view


def seat_part(table: Table, seat: int, *, legal: bool = True) -> gpb.TableView:
    """What only ``seat`` sees, and nothing else: merged into the public view
    (:meth:`MergeFrom`) it makes the seat's view. ``legal`` False leaves out the legal
    actions (a view that is not the table's newest)."""
    part = gpb.TableView(viewer_seat=seat)
    state = table.game.round
    if state is not None and 0 <= seat < state.seat_count and seat not in table.game.newcomers:
        round_view = part.round
        round_view.hand.extend(names(state.hands[seat]))
        round_view.new_cards.extend(names(state.new_cards[seat] & state.hands[seat]))
        round_view.same_or_nothing = state.same_or_nothing and state.to_act == seat
        owed = [p for p in state.pending if p.giver == seat]
        if owed:
            round_view.return_owed = owed[0].size
            round_view.return_to = owed[0].receiver
        if legal:
            for verb, cards in legal_actions(state, seat):
                round_view.legal.append(gpb.LegalAction(verb=verb, cards=names(cards)))
    return part


def redact(message: Message, seat: int | None) -> Message:
    """The event as ``seat`` may see it: other seats' cards removed."""
    if isinstance(message, pb.RoundStarted):
        shown = pb.RoundStarted()
        shown.CopyFrom(message)
        for hand in shown.hands:
            if hand.seat != seat:
                del hand.cards[:]
        del shown.set_aside[:]
        return shown
    if isinstance(message, pb.CardsGiven) and seat not in (message.giver, message.receiver):
        shown_given = pb.CardsGiven()
        shown_given.CopyFrom(message)
        del shown_given.cards[:]
        return shown_given
    return message


def seat_of(game: g.GameState, player_id: str) -> int | None:
    """The seat ``player_id`` holds at this table, if any."""
    for index, occupant in enumerate(game.seats):
        if occupant.player == player_id:
            return index
    return None
