"""``python -m services.timer.main``: run the timer."""

from __future__ import annotations

from president.service.server import serve
from services.timer.bootstrap import build


def main() -> None:
    serve(build)


if __name__ == "__main__":
    main()
