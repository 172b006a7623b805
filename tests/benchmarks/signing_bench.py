"""What the operator's signatures cost: a receipt signed, one checked, a receipts file checked.

Run: .venv/bin/python tests/benchmarks/signing_bench.py [--receipts N]

The table service signs each event's receipt once (Ed25519, ``cryptography``);
the audit and the browser check each receipt of a file. Prints the median
of five runs of each, in microseconds per receipt, and the time to check a
file of N receipts (``president.audit.receipts.unsigned``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from president.audit.receipts import HeldReceipt, ReceiptFile, unsigned
from president.hosting.signatures import OperatorKeys, Signer, receipt_bytes


def per_call(run: Callable[[int], None], count: int) -> float:
    """Median microseconds per call of ``run(i)`` over five runs of ``count`` calls."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for i in range(count):
            run(i)
        times.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--receipts", type=int, default=1000)
    count = parser.parse_args().receipts
    signer = Signer.generate()
    keys = OperatorKeys([signer.public_key])
    digest = "ab" * 32
    signed = signer.sign(receipt_bytes("table-t", 1, digest))

    def sign(i: int) -> None:
        signer.sign(receipt_bytes("table-t", i, digest))

    def check(_i: int) -> None:
        keys.signed(receipt_bytes("table-t", 1, digest), signed.key_id, signed.signature)

    print(f"sign one receipt:  {per_call(sign, count):7.1f} us")
    print(f"check one receipt: {per_call(check, count):7.1f} us")
    held = tuple(
        HeldReceipt(
            version,
            digest,
            "bench",
            "bench.json",
            signature=signer.sign(receipt_bytes("table-t", version, digest)).signature.hex(),
            key_id=signer.key_id,
        )
        for version in range(1, count + 1)
    )
    start = time.perf_counter()
    assert unsigned([ReceiptFile("bench.json", "t", "bench", held)], "t", keys) is None
    print(f"check a file of {count} receipts: {(time.perf_counter() - start) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
