"""``python -m president.services.dealer.main``: run the dealer."""

from __future__ import annotations

from president.servicekit.config import Settings
from president.servicekit.server import serve
from president.services.dealer.bootstrap import build


def main() -> None:
    serve(build, Settings.from_env)


if __name__ == "__main__":
    main()
