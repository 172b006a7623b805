"""The table's own events beside the engine's: created, deal committed and revealed, reactions.

The rules engine's events (:data:`president.rules.game.GameEvent`) say what
happens in a game. The table service stores nine more, which the engine
never sees: a table is created, its host changes, it closes, a seat's person connects
or disconnects, a round's deal
is committed before the cards and its secret revealed after the round, a seat
shows a reaction or writes to the chat, the host mutes a seat. They are
plain values with the fields of their ``president.events.v1`` messages of the
same names; :mod:`president.codec` translates them to and from the wire.

Options stay as the stored text, ``(name, value)`` pairs sorted by name (the
order the deterministic wire form writes them in): a log's options are read
as engine :class:`~president.rules.options.Options` where they are checked,
so a bad option is a finding of the audit there, not an unreadable event.
"""

from __future__ import annotations

from typing import NamedTuple

from president.rules import game as g

OptionTexts = tuple[tuple[str, str], ...]
"""Every option by name as text, sorted by name (``codec.option_texts``)."""


class TableCreated(NamedTuple):
    """A table is created in the lobby: its settings."""

    table_id: str
    preset: str
    options: OptionTexts
    host_player_id: str
    visibility: str
    seat_count: int
    #: The name shown in the lobby (may be empty).
    name: str = ""


class DealCommitted(NamedTuple):
    """The dealer committed to the next round's deal: its fingerprint and how it deals."""

    game_no: int
    round_no: int
    fingerprint: str
    deal_version: str
    deal_order: tuple[int, ...]
    players: int
    options: OptionTexts
    jokers: bool
    hand_size: int


class DealRevealed(NamedTuple):
    """A round is over: the secret its deal was made from, lowercase hex."""

    game_no: int
    round_no: int
    secret_hex: str


class DealSecretLost(NamedTuple):
    """A round is over but the dealer no longer holds its secret (lost with the dealer's
    database): the round cannot be checked; the table goes on as if it was revealed."""

    game_no: int
    round_no: int
    fingerprint: str


class ReactionShown(NamedTuple):
    """A seat shows a reaction."""

    seat: int
    reaction: str


class ChatPosted(NamedTuple):
    """A seat's person wrote a chat message (as the API took it: normalised, short)."""

    seat: int
    text: str


class SeatMuted(NamedTuple):
    """The host muted (``muted``) or unmuted ``player_id``, then in ``seat``."""

    seat: int
    player_id: str
    muted: bool


class HostChanged(NamedTuple):
    """The host role passed to ``player_id`` (``automatic``: the previous host left, or stayed
    away)."""

    player_id: str
    previous_player_id: str
    automatic: bool


class TableClosed(NamedTuple):
    """The table closed (no person was left at it): it takes no more commands."""

    reason: str


class SeatPresence(NamedTuple):
    """A seat's owner opened their first stream (``connected``) or closed their last one at
    the gateway replica ``gateway`` (:mod:`president.hosting.presence`)."""

    seat: int
    gateway: str
    connected: bool


ServiceEvent = (
    TableCreated
    | DealCommitted
    | DealRevealed
    | DealSecretLost
    | ReactionShown
    | HostChanged
    | TableClosed
    | SeatPresence
    | ChatPosted
    | SeatMuted
)
"""An event of the table service that the rules engine does not know."""

SERVICE_EVENT_TYPES = (
    TableCreated,
    DealCommitted,
    DealRevealed,
    DealSecretLost,
    ReactionShown,
    HostChanged,
    TableClosed,
    SeatPresence,
    ChatPosted,
    SeatMuted,
)
"""The classes of :data:`ServiceEvent`, for ``isinstance``."""

TableEvent = g.GameEvent | ServiceEvent
"""Any event of a table's stream: the engine's or the table service's own."""
