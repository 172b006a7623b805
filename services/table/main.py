"""``python -m services.table.main``: run the table service."""

from __future__ import annotations

from president.service.server import serve
from services.table.bootstrap import build


def main() -> None:
    serve(build)


if __name__ == "__main__":
    main()
