"""What the players service does: accounts, log in, refresh with rotation, log out.

Every refusal is a :class:`ServiceError` with a stable reason. A failed log
in says LOGIN_FAILED whether the name is unknown or the password wrong, and both
run one argon2 verification (an unknown name against a dummy hash), so
neither the answer nor its time tells which names exist. A refresh token works once:
using it again revokes its whole session, the theft detection of rotating
refresh tokens (RFC 6819 5.2.2.3). Every revocation is handed to
``on_revoked`` (the service publishes it, so gateways refuse the session's
access tokens at once).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import GUEST, NAMED, AccessTokens, Identity, unauthenticated
from president.services.players import hashing, names
from president.services.players.store import Account, NameTaken, PlayersStore, Rotation

#: Called with the revoked session ids and until when their access tokens could live.
OnRevoked = Callable[[list[str], int], None]


#: The most accounts one GetDisplayNames names.
MAX_NAMES = 500


@dataclass(frozen=True)
class Lifetimes:
    """How long tokens live, in seconds."""

    access: int = 15 * 60
    refresh: int = 30 * 24 * 3600

    def __post_init__(self) -> None:
        if self.access < 1 or self.refresh < self.access:
            raise ValueError(
                "access tokens live at least a second, refresh tokens at least as long"
            )


@dataclass(frozen=True)
class Issued:
    """Tokens for one session."""

    identity: Identity
    access_token: str
    refresh_token: str
    refresh_expires_at: int
    #: A new guest's device secret (CreateGuest only).
    device_secret: str = ""


def login_failed() -> ServiceError:
    return unauthenticated("LOGIN_FAILED", "no account has that name and password")


class Players:
    """Accounts and sessions over a :class:`PlayersStore`."""

    def __init__(
        self,
        store: PlayersStore,
        tokens: AccessTokens,
        lifetimes: Lifetimes = Lifetimes(),
        *,
        clock: Callable[[], float] = time.time,
        on_revoked: OnRevoked | None = None,
        passwords: hashing.Passwords | None = None,
    ) -> None:
        self._store = store
        self._passwords = passwords or hashing.Argon2Passwords()
        self._tokens = tokens
        self._lifetimes = lifetimes
        self._clock = clock
        self._on_revoked = on_revoked

    def _now(self) -> int:
        return int(self._clock())

    # -- accounts ---------------------------------------------------------------------
    def create_guest(self, display_name: str) -> Issued:
        """A new guest, its device secret and its first session."""
        shown = names.display_name(display_name)
        device_secret = hashing.new_secret()
        account = Account(
            f"g-{secrets.token_hex(8)}",
            GUEST,
            None,
            shown,
            None,
            hashing.secret_hash(device_secret),
        )
        self._store.add_account(account, None, None, self._now())
        issued = self._open_session(account)
        return Issued(
            issued.identity,
            issued.access_token,
            issued.refresh_token,
            issued.refresh_expires_at,
            device_secret,
        )

    def register(
        self, name: str, password: str, display_name: str = "", upgrade_token: str = ""
    ) -> Issued:
        """A named account (or the guest of ``upgrade_token`` named, keeping its id)."""
        name, key = names.account_name(name)
        alike = names.skeleton(key)
        password = names.password(password)
        shown = names.display_name(display_name or name)
        hashed = self._passwords.hash(password)
        try:
            if upgrade_token:
                guest = self.who_am_i(upgrade_token)
                named = self._store.name_guest(guest.account_id, name, key, alike, shown, hashed)
                if named is None:
                    raise ServiceError(
                        Code.FAILED_PRECONDITION,
                        "NOT_A_GUEST",
                        "only a guest account can be given a name and a password",
                    )
                return self._open_session(named)
            account = Account(f"a-{secrets.token_hex(8)}", NAMED, name, shown, hashed, None)
            self._store.add_account(account, key, alike, self._now())
        except NameTaken:
            if self._store.account_named(key) is not None:
                raise ServiceError(
                    Code.ALREADY_EXISTS,
                    "NAME_TAKEN",
                    f"the name {name!r} is taken (names are unique ignoring case): choose another",
                ) from None
            raise ServiceError(
                Code.ALREADY_EXISTS,
                "NAME_CONFUSABLE",
                f"the name {name!r} looks like another account's name (letters of other "
                "alphabets, accents and look-alike characters count as the same): choose another",
            ) from None
        return self._open_session(account)

    def log_in(self, name: str, password: str) -> Issued:
        """A new session for a named account."""
        try:
            _, key = names.account_name(name)
        except ServiceError:
            self._passwords.matches(None, password)  # the same time as a wrong password
            raise login_failed() from None
        account = self._store.account_named(key)
        # One verification whatever the name: an unknown one is checked against the dummy.
        stored = None if account is None else account.password_hash
        if not self._passwords.matches(stored, password) or account is None:
            raise login_failed()
        return self._open_session(account)

    def log_in_guest(self, guest_id: str, device_secret: str) -> Issued:
        """A new session for a guest, with its device secret."""
        account = self._store.account(guest_id) if len(guest_id) <= 64 else None
        if (
            account is None
            or account.kind != GUEST
            or not hashing.secret_matches(account.device_secret_hash, device_secret)
        ):
            raise unauthenticated(
                "LOGIN_FAILED",
                "no guest has that id and device secret (a named guest logs in by name)",
            )
        return self._open_session(account)

    # -- sessions ---------------------------------------------------------------------
    def refresh(self, refresh_token: str) -> Issued:
        """New tokens for a refresh token, which stops working."""
        if not refresh_token or len(refresh_token) > 256:
            raise unauthenticated("REFRESH_TOKEN_INVALID", "that is not a refresh token of ours")
        successor = hashing.new_secret()
        now = self._now()
        outcome, session_id, account_id, expires_at = self._store.rotate(
            hashing.secret_hash(refresh_token), hashing.secret_hash(successor), now
        )
        if outcome is Rotation.REUSED and session_id is not None:
            self._revoked([session_id], now)
            raise unauthenticated(
                "REFRESH_TOKEN_REUSED",
                "that refresh token was used already: the session is ended for safety, "
                "log in again",
            )
        if outcome is Rotation.REVOKED:
            raise unauthenticated("SESSION_REVOKED", "this session was logged out: log in again")
        if outcome is Rotation.EXPIRED:
            raise unauthenticated("REFRESH_TOKEN_EXPIRED", "this session has expired: log in again")
        account = self._store.account(account_id) if account_id else None
        if outcome is not Rotation.ROTATED or account is None or session_id is None:
            raise unauthenticated("REFRESH_TOKEN_INVALID", "that is not a refresh token of ours")
        identity = self._identity(account, session_id, now, expires_at)
        return Issued(identity, self._tokens.issue(identity), successor, expires_at)

    def who_am_i(self, access_token: str) -> Identity:
        """The identity of an access token whose session is open."""
        identity = self._tokens.verify(access_token)
        if not self._store.session_open(identity.session_id, self._now()):
            raise unauthenticated("SESSION_REVOKED", "this session was logged out: log in again")
        return identity

    def log_out(self, access_token: str) -> int:
        """End the access token's session; how many sessions that ended (0 or 1)."""
        identity = self.who_am_i(access_token)
        now = self._now()
        return self._revoked(self._store.revoke_session(identity.session_id, now), now)

    def log_out_everywhere(self, access_token: str) -> int:
        """End every session of the access token's account; how many."""
        identity = self.who_am_i(access_token)
        now = self._now()
        return self._revoked(self._store.revoke_account(identity.account_id, now), now)

    def revocations(self) -> list[tuple[str, int]]:
        """Revoked sessions whose access tokens could still be presented, and until when."""
        now = self._now()
        ttl = self._lifetimes.access
        return [(sid, at + ttl) for sid, at in self._store.revoked_since(now - ttl)]

    def display_names(self, account_ids: list[str]) -> dict[str, str]:
        """The display names of the accounts that exist among these (at most
        :data:`MAX_NAMES` ids: more is ``TOO_MANY_ACCOUNTS``)."""
        if len(account_ids) > MAX_NAMES:
            raise ServiceError(
                Code.INVALID_ARGUMENT,
                "TOO_MANY_ACCOUNTS",
                f"ask for at most {MAX_NAMES} accounts' names at once, not {len(account_ids)}",
            )
        return self._store.display_names(sorted(set(account_ids)))

    # -- internals --------------------------------------------------------------------
    def _revoked(self, session_ids: list[str], now: int) -> int:
        if session_ids and self._on_revoked is not None:
            self._on_revoked(session_ids, now + self._lifetimes.access)
        return len(session_ids)

    def _identity(self, account: Account, session_id: str, now: int, session_end: int) -> Identity:
        expires = min(now + self._lifetimes.access, session_end)
        return Identity(account.account_id, account.display_name, account.kind, session_id, expires)

    def _open_session(self, account: Account) -> Issued:
        now = self._now()
        session_id = f"s-{secrets.token_hex(12)}"
        refresh_token = hashing.new_secret()
        expires_at = now + self._lifetimes.refresh
        self._store.open_session(
            session_id, account.account_id, hashing.secret_hash(refresh_token), now, expires_at
        )
        identity = self._identity(account, session_id, now, expires_at)
        return Issued(identity, self._tokens.issue(identity), refresh_token, expires_at)
