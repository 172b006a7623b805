"""``python -m president.services.table.main``: run the table service."""

from __future__ import annotations

from president.servicekit.server import serve
from president.services.table.bootstrap import build


def main() -> None:
    serve(build)


if __name__ == "__main__":
    main()
