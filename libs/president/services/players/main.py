"""``python -m president.services.players.main``: run the players service."""

from __future__ import annotations

from president.servicekit.config import Settings
from president.servicekit.server import serve
from president.services.players.bootstrap import build


def main() -> None:
    serve(build, Settings.from_env)


if __name__ == "__main__":
    main()
