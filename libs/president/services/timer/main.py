"""``python -m president.services.timer.main``: run the timer."""

from __future__ import annotations

from president.servicekit.config.timer import TimerSettings
from president.servicekit.server import serve
from president.services.timer.bootstrap import build


def main() -> None:
    serve(build, TimerSettings.from_env)


if __name__ == "__main__":
    main()
