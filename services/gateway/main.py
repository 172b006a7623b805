"""``python -m services.gateway.main``: run the gateway."""

from __future__ import annotations

from president.service.server import serve
from services.gateway.bootstrap import build


def main() -> None:
    serve(build)


if __name__ == "__main__":
    main()
