"""Sign in as a guest, play a practice table with bots to its end, and read a refusal's reason.

Needs only the client package (``pip install president-client``, or the wheel built
from ``clients/python``). Run it against the gateway ``make run`` prints::

    python quickstart.py 127.0.0.1:50051

It prints one JSON line: the finished game (its winners, standings and scores) and
the refusal's reason.
"""

from __future__ import annotations

import asyncio
import json
import sys

from president.client import GatewayClient, GatewayError


async def main(address: str) -> dict[str, object]:
    async with GatewayClient.connect(address) as client:
        credentials = await client.create_guest("Ada")  # sign in: a guest account
        # A practice table: you and three bots; one round makes a short game.
        created = await client.create_table(
            preset="classic", options={"game_end": "rounds:1"}, display_name="Ada"
        )
        await client.start()
        async for change in client.watch():  # a snapshot, then every change, each a view
            view = change.view
            if view.phase == "game_over":
                break
            if not view.round.legal:  # not your turn: the bots play
                continue
            action = view.round.legal[0]  # the first of the legal moves the view lists
            try:
                if action.verb == "play":
                    await client.play(action.cards, expected_version=view.version)
                elif action.verb == "pass":
                    await client.pass_(expected_version=view.version)
                else:  # "give": cards returned in the exchange
                    await client.return_cards(action.cards, expected_version=view.version)
            except GatewayError as refused:  # the status, the stable reason, a sentence
                if refused.reason != "STALE":  # STALE: the stream brings the newer view
                    raise
        try:
            await client.join("no-such-table", "Ada")
        except GatewayError as refused:
            refusal = {"code": refused.code.name, "reason": refused.reason}
        return {
            "account_id": credentials.identity.account_id,
            "table_id": created.table_id,
            "seat": created.seat,
            "phase": view.phase,
            "winners": list(view.winners),
            "standings": list(view.last_standings),  # seats, best first
            "scores": [seat.score for seat in view.seats],
            "refusal": refusal,
        }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"))))
