"""``python -m services.scoring.main``: run the scoring."""

from __future__ import annotations

from president.service.server import serve
from services.scoring.bootstrap import build


def main() -> None:
    serve(build)


if __name__ == "__main__":
    main()
