"""Sign in as a guest, create a practice table with bots, read it, and read a refusal's reason.

Needs only the client package (``pip install president-client``, or the wheel built
from ``clients/python``). Run it against the gateway ``make run`` prints::

    python quickstart.py 127.0.0.1:50051

It prints one JSON line: the table, its phase and seats, and the refusal's reason.
"""

from __future__ import annotations

import asyncio
import json
import sys

from president.client import GatewayClient, GatewayError


async def main(address: str) -> dict[str, object]:
    async with GatewayClient.connect(address) as client:
        credentials = await client.create_guest("Ada")  # sign in: a guest account
        created = await client.create_table(preset="classic", display_name="Ada")
        view = await client.get_table()  # a practice table: you and three bots
        try:
            await client.join("no-such-table", "Ada")
        except GatewayError as refused:  # the status, the stable reason, a sentence
            refusal = {"code": refused.code.name, "reason": refused.reason}
        return {
            "account_id": credentials.identity.account_id,
            "table_id": created.table_id,
            "seat": created.seat,
            "phase": view.phase,
            "seats": len(view.seats),
            "refusal": refusal,
        }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"))))
