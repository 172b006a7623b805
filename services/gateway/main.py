"""``python -m services.gateway.main``: run the gateway."""

from __future__ import annotations

import asyncio

from president.service.config import Settings
from president.service.server import run
from services.gateway.bootstrap import build


def main() -> None:
    settings = Settings()
    asyncio.run(run(build(settings), settings))


if __name__ == "__main__":
    main()
