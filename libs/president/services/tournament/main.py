"""``python -m president.services.tournament.main``: run the tournament service."""

from __future__ import annotations

from president.servicekit.config import Settings
from president.servicekit.server import serve
from president.services.tournament.bootstrap import build


def main() -> None:
    serve(build, Settings.from_env)


if __name__ == "__main__":
    main()
