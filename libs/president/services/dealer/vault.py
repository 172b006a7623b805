"""The dealer's secrets, in its own database table (``dealer_secrets``).

Committing is idempotent per round: the first commit draws the secret, later
ones return the same fingerprint. A secret leaves the vault only through
:meth:`SecretVault.reveal`, and only once the table's log shows the round ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    Column,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from president.deal import fingerprint, new_secret
from president.events.v1 import events_pb2 as pb
from president.hosting.dealer import DealtCards, RoundKey, dealt_from_secret
from president.hosting.streams import stream_id
from president.store import EventStore, create_store_engine

#: Commitments and round ends read at a time, newest first, looking for a round's
#: (a reveal finds its round's end and commitment among the first two).
READ_WINDOW = 4
ROUND_ENDED = pb.RoundEnded.DESCRIPTOR.full_name
DEAL_COMMITTED = pb.DealCommitted.DESCRIPTOR.full_name

metadata = MetaData()
dealer_secrets = Table(
    "dealer_secrets",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("game_no", Integer, primary_key=True),
    Column("round_no", Integer, primary_key=True),
    Column("secret", LargeBinary(32), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("players", Integer, nullable=False),
    Column("jokers", Boolean, nullable=False),
    Column("hand_size", Integer, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("revealed_at", String(40), nullable=True),
)


_ROUND = (
    (dealer_secrets.c.table_id == bindparam("key_table_id"))
    & (dealer_secrets.c.game_no == bindparam("key_game_no"))
    & (dealer_secrets.c.round_no == bindparam("key_round_no"))
)
_READ_ROUND = select(dealer_secrets).where(_ROUND)
_MARK_REVEALED = (
    update(dealer_secrets)
    .where(_ROUND & dealer_secrets.c.revealed_at.is_(None))
    .values(revealed_at=bindparam("now"))
)


def _round_of(key: RoundKey) -> dict[str, object]:
    return {"key_table_id": key.table_id, "key_game_no": key.game_no, "key_round_no": key.round_no}


class UnknownRound(LookupError):
    """No deal was committed for that round."""


class RoundNotOver(RuntimeError):
    """The round has not ended: its secret stays secret."""


@dataclass(frozen=True)
class Committed:
    """A committed round as the vault keeps it."""

    secret: bytes
    fingerprint: str
    players: int
    jokers: bool
    hand_size: int | None


class SecretVault:
    """Secrets by round, and the check that a round ended before its reveal."""

    def __init__(self, url: str, events: EventStore, *, window: int = READ_WINDOW) -> None:
        self._engine = create_store_engine(url)
        self._events = events
        self._window = window

    def close(self) -> None:
        self._engine.dispose()

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        """Draw and keep the round's secret; the fingerprint (same for a repeated commit)."""
        secret = new_secret()
        row = {
            "table_id": key.table_id,
            "game_no": key.game_no,
            "round_no": key.round_no,
            "secret": secret,
            "fingerprint": fingerprint(secret),
            "players": players,
            "jokers": jokers,
            "hand_size": hand_size or 0,
            "created_at": datetime.now(UTC).isoformat(),
        }
        try:
            with self._engine.begin() as connection:
                connection.execute(insert(dealer_secrets), row)
        except IntegrityError:  # committed before: keep the first secret
            return self._get(key).fingerprint
        return str(row["fingerprint"])

    def deal(self, key: RoundKey) -> DealtCards:
        """The committed round's deal, by position in the deal order."""
        committed = self._get(key)
        return dealt_from_secret(
            committed.secret,
            committed.players,
            jokers=committed.jokers,
            hand_size=committed.hand_size,
        )

    def reveal(self, key: RoundKey) -> Committed:
        """The round's secret, once the table's log holds the round's end."""
        committed = self._get(key)
        if not self._round_ended(key, committed.fingerprint):
            raise RoundNotOver(
                f"round {key.round_no} of game {key.game_no} at table {key.table_id} "
                "has not ended: its secret is revealed only then"
            )
        with self._engine.begin() as connection:
            connection.execute(
                _MARK_REVEALED, {**_round_of(key), "now": datetime.now(UTC).isoformat()}
            )
        return committed

    def _get(self, key: RoundKey) -> Committed:
        with self._engine.connect() as connection:
            row = connection.execute(_READ_ROUND, _round_of(key)).first()
        if row is None:
            raise UnknownRound(
                f"no deal was committed for round {key.round_no} of game {key.game_no} "
                f"at table {key.table_id}"
            )
        return Committed(
            bytes(row.secret), row.fingerprint, row.players, row.jokers, row.hand_size or None
        )

    def _round_ended(self, key: RoundKey, committed_fingerprint: str) -> bool:
        """Whether the table's log holds this round's commitment followed by a RoundEnded
        (before any other commitment).

        Reads only commitments and round ends, newest first, ``window`` at a
        time: the round's commitment is usually among the first few, and the
        events in between are never read.
        """
        stream = stream_id(key.table_id)
        ended_after = False  # a RoundEnded after the events scanned so far
        before: int | None = None
        while True:
            found = self._events.read_stream_backwards(
                stream, (ROUND_ENDED, DEAL_COMMITTED), before, self._window
            )
            for stored in found:
                if stored.type == ROUND_ENDED:
                    ended_after = True
                else:
                    message = pb.DealCommitted.FromString(stored.payload)
                    if message.fingerprint == committed_fingerprint:
                        return ended_after
                    ended_after = False  # that end was another round's
            if len(found) < self._window:
                return False
            before = found[-1].version
