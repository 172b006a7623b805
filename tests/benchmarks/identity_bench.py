"""Who-is-calling speed, on one core: prints numbers, asserts nothing.

- the gateway's check of a bearer token per call: a token seen before (the
  cache, then expiry and revocation checks) and a new one (its signature);
- a trusted issuer's RS256 token, verified the first time;
- the players service's argon2id hash and check of a password (log in);
- a failed log in's median time, an unknown name beside a known name with a
  wrong password (on a real SQLite file): one argon2id verification each, so
  the time does not tell which names exist.

Run: ``make bench`` or ``.venv/bin/python tests/benchmarks/identity_bench.py``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from president.servicekit.errors import ServiceError
from president.servicekit.identity import AccessTokens, Identity
from president.services.gateway.identity.auth import Verifier
from president.services.gateway.identity.issuers import TrustedIssuer, TrustedIssuers
from president.services.gateway.identity.revocations import Revocations
from president.services.players.app import Players
from president.services.players.hashing import hash_password, password_matches
from president.services.players.store import PlayersStore
from president.store import migrate


def _rate(what: str, count: int, run: Callable[[int], object]) -> None:
    started = time.perf_counter()
    for index in range(count):
        run(index)
    spent = time.perf_counter() - started
    print(f"{what:<44} {spent / count * 1e6:10.1f} µs each   {count / spent:12,.0f}/s")


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    now = time.time()
    tokens = AccessTokens("bench-secret")
    revocations = Revocations()
    revocations.load((f"s-{i}", int(now) + 600) for i in range(10_000))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    issuer = TrustedIssuer(
        "club", "https://id.club", "president", ("RS256",), (key.public_key(),), {}
    )
    verifier = Verifier(tokens, revocations, TrustedIssuers([issuer], time.time))
    count = 20_000
    minted = [
        tokens.issue(Identity(f"g-{i}", "Bench", "guest", f"live-{i}", int(now) + 600))
        for i in range(count)
    ]
    _rate("access token, first seen (HS256 check)", count, lambda i: verifier.verify(minted[i]))
    _rate(
        "access token, seen before (per call)",
        count * 5,
        lambda i: verifier.verify(minted[i % 100]),
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    claims = {"iss": "https://id.club", "aud": "president", "exp": now + 600}
    foreign = [jwt.encode({**claims, "sub": f"u{i}"}, pem, algorithm="RS256") for i in range(500)]
    _rate("trusted issuer RS256 token, first seen", 500, lambda i: verifier.verify(foreign[i]))
    stored = hash_password("a long enough passphrase")
    _rate("argon2id hash (register)", 20, lambda _i: hash_password("a long enough passphrase"))
    _rate(
        "argon2id check (log in)",
        20,
        lambda _i: password_matches(stored, "a long enough passphrase"),
    )

    _failed_log_ins()


def _failed_log_ins(tries: int = 15) -> None:
    """The median time of a refused log in: an unknown name, a known one's wrong password."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/players.db"
        migrate(url)
        store = PlayersStore(url)
        players = Players(store, AccessTokens("bench-secret"))
        players.register("known-name", "a long enough passphrase")

        def median_ms(name: str) -> float:
            spent = []
            for _ in range(tries):
                started = time.perf_counter()
                try:
                    players.log_in(name, "a wrong passphrase!")
                except ServiceError:
                    pass
                spent.append(time.perf_counter() - started)
            return statistics.median(spent) * 1e3

        unknown, wrong = median_ms("unknown-name"), median_ms("known-name")
        store.close()
    print(f"{'log in refused, unknown name (median)':<44} {unknown:10.1f} ms")
    print(f"{'log in refused, wrong password (median)':<44} {wrong:10.1f} ms")


if __name__ == "__main__":
    main()
