"""The players service's own tables: accounts, sessions and refresh tokens (SQLAlchemy).

Tables are those of migrations 0007 and 0011 (``president.store.migrate`` creates
them), in the players database (SQLite by default, PostgreSQL in
production). Only hashes of secrets are stored. A refresh token's rotation
is one transaction: the token row is locked, marked used and its successor
written together, so two concurrent uses of one token cannot both succeed.
A named account's key and its name's skeleton are each unique, so a name
taken in another spelling or a look-alike is refused by the database itself,
also when two registrations race.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    MetaData,
    String,
    Table,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from president.store import create_store_engine

metadata = MetaData()
accounts = Table(
    "players_accounts",
    metadata,
    Column("account_id", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("name", String(64), nullable=True),
    Column("name_key", String(64), nullable=True, unique=True),
    Column("name_skeleton", String(256), nullable=True, unique=True),
    Column("display_name", String(64), nullable=False),
    Column("password_hash", String(256), nullable=True),
    Column("device_secret_hash", String(128), nullable=True),
    Column("created_at", BigInteger, nullable=False),
)
sessions = Table(
    "players_sessions",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("account_id", String(64), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
)
refresh_tokens = Table(
    "players_refresh_tokens",
    metadata,
    Column("token_hash", String(128), primary_key=True),
    Column("session_id", String(64), nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("used", Boolean, nullable=False),
)
READ = {"sqlite_begin": "DEFERRED"}


@dataclass(frozen=True)
class Account:
    """One account as stored."""

    account_id: str
    kind: str
    name: str | None
    display_name: str
    password_hash: str | None
    device_secret_hash: str | None


class Rotation(Enum):
    """What became of a refresh token presented for rotation."""

    ROTATED = "rotated"
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    REVOKED = "revoked"
    #: Already used once: the session (the whole family of its tokens) is now revoked.
    REUSED = "reused"


class NameTaken(Exception):
    """Another account has that name (ignoring case) or a name that looks like it."""


def _account(row: object) -> Account:
    return Account(
        row.account_id,  # type: ignore[attr-defined]
        row.kind,  # type: ignore[attr-defined]
        row.name,  # type: ignore[attr-defined]
        row.display_name,  # type: ignore[attr-defined]
        row.password_hash,  # type: ignore[attr-defined]
        row.device_secret_hash,  # type: ignore[attr-defined]
    )


class PlayersStore:
    """Accounts, sessions and refresh tokens in one database."""

    def __init__(self, url: str) -> None:
        self._engine = create_store_engine(url)

    def close(self) -> None:
        self._engine.dispose()

    # -- accounts ---------------------------------------------------------------------
    def add_account(
        self, account: Account, name_key: str | None, name_skeleton: str | None, now: int
    ) -> None:
        """Store a new account; NameTaken if its name (or its skeleton) is another's."""
        try:
            with self._engine.begin() as connection:
                connection.execute(
                    insert(accounts).values(
                        account_id=account.account_id,
                        kind=account.kind,
                        name=account.name,
                        name_key=name_key,
                        name_skeleton=name_skeleton,
                        display_name=account.display_name,
                        password_hash=account.password_hash,
                        device_secret_hash=account.device_secret_hash,
                        created_at=now,
                    )
                )
        except IntegrityError:
            raise NameTaken(account.name) from None

    def name_guest(
        self,
        account_id: str,
        name: str,
        name_key: str,
        name_skeleton: str,
        display_name: str,
        password_hash: str,
    ) -> Account | None:
        """A guest becomes a named account keeping its id (None: not a guest any more)."""
        try:
            with self._engine.begin() as connection:
                done = connection.execute(
                    update(accounts)
                    .where(accounts.c.account_id == account_id, accounts.c.kind == "guest")
                    .values(
                        kind="named",
                        name=name,
                        name_key=name_key,
                        name_skeleton=name_skeleton,
                        display_name=display_name,
                        password_hash=password_hash,
                        device_secret_hash=None,
                    )
                )
                if done.rowcount != 1:
                    return None
        except IntegrityError:
            raise NameTaken(name) from None
        return self.account(account_id)

    def account(self, account_id: str) -> Account | None:
        """The account with this id."""
        with self._engine.connect().execution_options(**READ) as connection:
            row = connection.execute(
                select(accounts).where(accounts.c.account_id == account_id)
            ).first()
        return None if row is None else _account(row)

    def display_names(self, account_ids: list[str]) -> dict[str, str]:
        """The display names of those of these accounts that exist, by account id."""
        if not account_ids:
            return {}
        with self._engine.connect().execution_options(**READ) as connection:
            rows = connection.execute(
                select(accounts.c.account_id, accounts.c.display_name).where(
                    accounts.c.account_id.in_(account_ids)
                )
            ).all()
        return {row.account_id: row.display_name for row in rows}

    def account_named(self, name_key: str) -> Account | None:
        """The account whose name has this key."""
        with self._engine.connect().execution_options(**READ) as connection:
            row = connection.execute(
                select(accounts).where(accounts.c.name_key == name_key)
            ).first()
        return None if row is None else _account(row)

    def fill_skeletons(self, skeleton: Callable[[str], str]) -> tuple[int, int]:
        """Give each named account made before migration 0011 its name's skeleton, the
        oldest first; a later look-alike of an older name keeps none (it still logs in).
        How many were filled, and how many were look-alikes."""
        with self._engine.connect().execution_options(**READ) as connection:
            rows = connection.execute(
                select(accounts.c.account_id, accounts.c.name_key)
                .where(accounts.c.name_key.is_not(None), accounts.c.name_skeleton.is_(None))
                .order_by(accounts.c.created_at, accounts.c.account_id)
            ).all()
        filled = alike = 0
        for row in rows:
            try:
                with self._engine.begin() as connection:
                    connection.execute(
                        update(accounts)
                        .where(accounts.c.account_id == row.account_id)
                        .values(name_skeleton=skeleton(row.name_key))
                    )
                filled += 1
            except IntegrityError:
                alike += 1
        return filled, alike

    # -- sessions ---------------------------------------------------------------------
    def open_session(
        self, session_id: str, account_id: str, token_hash: str, now: int, expires_at: int
    ) -> None:
        """A new session with its first refresh token."""
        with self._engine.begin() as connection:
            connection.execute(
                insert(sessions).values(
                    session_id=session_id,
                    account_id=account_id,
                    created_at=now,
                    expires_at=expires_at,
                    revoked_at=None,
                )
            )
            connection.execute(
                insert(refresh_tokens).values(
                    token_hash=token_hash, session_id=session_id, expires_at=expires_at, used=False
                )
            )

    def rotate(
        self, old_hash: str, new_hash: str, now: int
    ) -> tuple[Rotation, str | None, str | None, int]:
        """Trade a refresh token for its successor: the outcome, the session, its account
        and the session's expiry. A token used before revokes its whole session."""
        with self._engine.begin() as connection:
            token = connection.execute(
                select(refresh_tokens)
                .where(refresh_tokens.c.token_hash == old_hash)
                .with_for_update()
            ).first()
            if token is None:
                return Rotation.UNKNOWN, None, None, 0
            session = connection.execute(
                select(sessions).where(sessions.c.session_id == token.session_id).with_for_update()
            ).first()
            if session is None:
                return Rotation.UNKNOWN, None, None, 0
            found = session.session_id, session.account_id
            if session.revoked_at is not None:
                return Rotation.REVOKED, *found, session.expires_at
            if token.used:
                self._revoke(connection, [session.session_id], now)
                return Rotation.REUSED, *found, session.expires_at
            if token.expires_at <= now or session.expires_at <= now:
                return Rotation.EXPIRED, *found, session.expires_at
            connection.execute(
                update(refresh_tokens)
                .where(refresh_tokens.c.token_hash == old_hash)
                .values(used=True)
            )
            connection.execute(
                insert(refresh_tokens).values(
                    token_hash=new_hash,
                    session_id=session.session_id,
                    expires_at=session.expires_at,
                    used=False,
                )
            )
            return Rotation.ROTATED, *found, session.expires_at

    def session_open(self, session_id: str, now: int) -> bool:
        """Whether the session exists, is not revoked and has not expired."""
        with self._engine.connect().execution_options(**READ) as connection:
            row = connection.execute(
                select(sessions.c.revoked_at, sessions.c.expires_at).where(
                    sessions.c.session_id == session_id
                )
            ).first()
        return row is not None and row.revoked_at is None and row.expires_at > now

    def revoke_session(self, session_id: str, now: int) -> list[str]:
        """Revoke one session; the sessions this revoked (none if it was already)."""
        with self._engine.begin() as connection:
            return self._revoke(connection, [session_id], now)

    def revoke_account(self, account_id: str, now: int) -> list[str]:
        """Revoke every open session of an account; the sessions this revoked."""
        with self._engine.begin() as connection:
            open_ids = connection.execute(
                select(sessions.c.session_id).where(
                    sessions.c.account_id == account_id, sessions.c.revoked_at.is_(None)
                )
            ).scalars()
            return self._revoke(connection, list(open_ids), now)

    def _revoke(self, connection: Connection, session_ids: list[str], now: int) -> list[str]:
        revoked = []
        for session_id in session_ids:
            done = connection.execute(
                update(sessions)
                .where(sessions.c.session_id == session_id, sessions.c.revoked_at.is_(None))
                .values(revoked_at=now)
            )
            if done.rowcount == 1:
                revoked.append(session_id)
        return revoked

    def revoked_since(self, since: int) -> list[tuple[str, int]]:
        """Sessions revoked at or after ``since``, with when they were revoked."""
        with self._engine.connect().execution_options(**READ) as connection:
            rows = connection.execute(
                select(sessions.c.session_id, sessions.c.revoked_at).where(
                    sessions.c.revoked_at >= since
                )
            ).all()
        return [(row.session_id, row.revoked_at) for row in rows]
