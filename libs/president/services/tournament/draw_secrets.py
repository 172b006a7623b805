"""The round runner's draw secrets, in the store's database (``tournament_draw_secrets``).

A round's secret is drawn once and kept until the round's reveal; it never
goes into the tournament's stream (which is public) before then. Committing
is idempotent per round: the first commit draws the secret, later ones (a
restarted runner, a second replica) get the same one back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Column, Integer, LargeBinary, MetaData, String, Table, insert, select
from sqlalchemy.exc import IntegrityError

from president.store import create_store_engine
from president.tournament.draw import fingerprint, new_secret

metadata = MetaData()
draw_secrets = Table(
    "tournament_draw_secrets",
    metadata,
    Column("tournament_id", String(64), primary_key=True),
    Column("round_no", Integer, primary_key=True),
    Column("secret", LargeBinary(32), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
)


@dataclass(frozen=True)
class DrawSecret:
    """A round's secret and the fingerprint that commits to it."""

    secret: bytes
    fingerprint: str


class DrawSecrets:
    """Each tournament round's secret, drawn once."""

    def __init__(self, url: str) -> None:
        self._engine = create_store_engine(url)

    def close(self) -> None:
        self._engine.dispose()

    def commit(self, tournament_id: str, round_no: int) -> DrawSecret:
        """The round's secret: drawn now if the round has none yet, else the one kept."""
        kept = self.get(tournament_id, round_no)
        if kept is not None:
            return kept
        secret = new_secret()
        drawn = DrawSecret(secret, fingerprint(secret, tournament_id, round_no))
        try:
            with self._engine.begin() as connection:
                connection.execute(
                    insert(draw_secrets),
                    {
                        "tournament_id": tournament_id,
                        "round_no": round_no,
                        "secret": drawn.secret,
                        "fingerprint": drawn.fingerprint,
                        "created_at": datetime.now(UTC).isoformat(),
                    },
                )
        except IntegrityError:  # drawn meanwhile by another runner: keep the first
            first = self.get(tournament_id, round_no)
            assert first is not None
            return first
        return drawn

    def get(self, tournament_id: str, round_no: int) -> DrawSecret | None:
        """The round's kept secret, if one was drawn."""
        with self._engine.connect() as connection:
            row = connection.execute(
                select(draw_secrets.c.secret, draw_secrets.c.fingerprint).where(
                    (draw_secrets.c.tournament_id == tournament_id)
                    & (draw_secrets.c.round_no == round_no)
                )
            ).first()
        return None if row is None else DrawSecret(bytes(row.secret), str(row.fingerprint))
