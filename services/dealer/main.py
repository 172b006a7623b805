"""``python -m services.dealer.main``: run the dealer."""

from __future__ import annotations

from president.service.server import serve
from services.dealer.bootstrap import build


def main() -> None:
    serve(build)


if __name__ == "__main__":
    main()
