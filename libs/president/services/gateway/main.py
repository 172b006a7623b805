"""``python -m president.services.gateway.main``: run the gateway."""

from __future__ import annotations

from president.servicekit.config.gateway import GatewaySettings
from president.servicekit.server import serve
from president.services.gateway.bootstrap import build


def main() -> None:
    serve(build, GatewaySettings.from_env)


if __name__ == "__main__":
    main()
