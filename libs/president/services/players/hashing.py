"""How secrets are kept: passwords with argon2id, random tokens by their SHA-256.

A password is low in entropy, so it is hashed with argon2id (argon2-cffi's
defaults, RFC 9106's second recommended profile). A refresh token or a
device secret is 32 random bytes: its SHA-256 is enough to find it and
reveals nothing, and lets the store look it up by hash.

The use cases check passwords through the :class:`Passwords` port
(:class:`Argon2Passwords` here), so a test can count the verifications: a log
in runs exactly one, whether the name is unknown or the password wrong, and
so both take the same time (``tests/benchmarks/identity_bench.py`` prints
the two medians).

Every argon2 hash and verification of a replica runs on one thread of its own
(:data:`_HASHING`), one at a time, at a lower CPU priority (``HASH_NICE``;
argon2's own threads inherit it): a flood of log-ins queues there and takes
only the CPU that plays and reads leave, and the gateway bounds how many wait
(:mod:`president.servicekit.fair_queue`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_HASHER = PasswordHasher()
#: How much CPU priority the hashing thread gives up (Linux: per thread).
HASH_NICE = 10


def _lower_priority() -> None:
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASH_NICE)


_HASHING = ThreadPoolExecutor(1, thread_name_prefix="argon2", initializer=_lower_priority)
#: Compared against when an account is unknown, so that an unknown name and a
#: wrong password take the same time.
_DUMMY_HASH = _HASHER.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    """The argon2id hash of a password (with its salt and parameters)."""
    return _HASHING.submit(_HASHER.hash, password).result()


def password_matches(stored: str | None, password: str) -> bool:
    """Whether ``password`` is the one hashed in ``stored`` (None: an unknown account)."""
    return _HASHING.submit(_verified, stored or _DUMMY_HASH, password).result() and (
        stored is not None
    )


def _verified(stored: str, password: str) -> bool:
    try:
        return _HASHER.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


class Passwords(Protocol):
    """How the use cases hash and check passwords."""

    def hash(self, password: str) -> str:
        """The stored form of a new password."""
        ...

    def matches(self, stored: str | None, password: str) -> bool:
        """Whether ``password`` is the one in ``stored``; None (an unknown account) is
        checked against a dummy hash, in the same time, and never matches."""
        ...


class Argon2Passwords:
    """The :class:`Passwords` port with argon2id."""

    def hash(self, password: str) -> str:
        return hash_password(password)

    def matches(self, stored: str | None, password: str) -> bool:
        return password_matches(stored, password)


def new_secret() -> str:
    """A fresh random secret for a client to keep (a refresh token, a device secret)."""
    return secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    """The stored form of a random secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(stored: str | None, secret: str) -> bool:
    """Whether ``secret`` hashes to ``stored``, in constant time."""
    return stored is not None and hmac.compare_digest(stored, secret_hash(secret))
