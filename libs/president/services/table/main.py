"""``python -m president.services.table.main``: run the table service."""

from __future__ import annotations

from president.servicekit.config.table import TableSettings
from president.servicekit.server import serve
from president.services.table.bootstrap import build


def main() -> None:
    serve(build, TableSettings.from_env)


if __name__ == "__main__":
    main()
