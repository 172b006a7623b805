"""Partitions of the table subjects, for running several timer or scoring replicas.

``PRESIDENT_TIMER_PARTITION=i/n`` (or ``PRESIDENT_SCORING_PARTITION``) makes
a replica handle only the tables whose id hashes to ``i`` modulo ``n``; run
``n`` replicas with ``0/n`` … ``n-1/n``. The hash is CRC-32 of the table id,
the same in every process and every language, so replicas agree without
talking to each other. Empty means one replica handles every table.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Partition:
    """Replica ``index`` of ``count``."""

    index: int = 0
    count: int = 1

    def owns(self, table_id: str) -> bool:
        """Whether this replica handles ``table_id``."""
        return self.count == 1 or zlib.crc32(table_id.encode()) % self.count == self.index

    @property
    def suffix(self) -> str:
        """A name suffix that tells replicas apart ("" for a single replica)."""
        return "" if self.count == 1 else f"-{self.index}-of-{self.count}"

    @classmethod
    def parse(cls, text: str, variable: str = "partition") -> Partition:
        """``""`` (everything) or ``"i/n"`` with ``0 <= i < n``; SystemExit with a sentence else."""
        if not text.strip():
            return cls()
        index, slash, count = text.strip().partition("/")
        try:
            if not slash:
                raise ValueError
            partition = cls(int(index), int(count))
        except ValueError:
            raise SystemExit(
                f"{variable} is i/n (this replica's index and the number of replicas), not {text!r}"
            ) from None
        if partition.count < 1 or not 0 <= partition.index < partition.count:
            raise SystemExit(f"{variable} {text!r}: the index is 0 to n-1 and n is 1 or more")
        return partition
