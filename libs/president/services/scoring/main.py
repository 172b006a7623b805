"""``python -m president.services.scoring.main``: run the scoring."""

from __future__ import annotations

from president.servicekit.config import Settings
from president.servicekit.server import serve
from president.services.scoring.bootstrap import build


def main() -> None:
    serve(build, Settings.from_env)


if __name__ == "__main__":
    main()
