"""The two Python packages own disjoint files: president-client (``clients/python``) the
client, the card notation it reads and the generated messages it speaks; president-table
(the root ``pyproject.toml``) the rest, and it depends on president-client by path.
Together they ship every module the one wheel shipped; neither ships a copy of the other's
(a copy in site-packages would shadow the other's package of the same name)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, zipfile.ZipFile]:
    """Each package's wheel, as ``pip wheel`` builds it from the repository."""
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "wheel", "-q"]
        + ["--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT), str(CLIENT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return {
        name: zipfile.ZipFile(next(out.glob(f"{name.replace('-', '_')}-*.whl")))
        for name in ("president-table", "president-client")
    }


def modules(wheel: zipfile.ZipFile) -> set[str]:
    return {name for name in wheel.namelist() if ".dist-info/" not in name}


def test_each_file_has_one_owner(wheels: dict[str, zipfile.ZipFile]) -> None:
    server, client = modules(wheels["president-table"]), modules(wheels["president-client"])
    assert not server & client
    assert {"president/client/__init__.py", "president/rules/cards.py"} <= client
    assert "president/gateway/v1/gateway_pb2.py" in client
    assert not any(name.startswith("president/client/") for name in server)
    assert {"president/rules/game/__init__.py", "president/table/v1/table_pb2.py"} <= server


def test_together_they_ship_every_module(wheels: dict[str, zipfile.ZipFile]) -> None:
    shipped = modules(wheels["president-table"]) | modules(wheels["president-client"])
    wanted = {
        str(path.relative_to(base))
        for base in (ROOT / "libs", ROOT / "gen" / "python")
        for path in (base / "president").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    assert wanted == shipped


def test_the_server_depends_on_the_client_by_path(wheels: dict[str, zipfile.ZipFile]) -> None:
    (metadata,) = (n for n in wheels["president-table"].namelist() if n.endswith("/METADATA"))
    requires = Parser().parsestr(wheels["president-table"].read(metadata).decode())
    wanted = [r for r in requires.get_all("Requires-Dist", []) if r.startswith("president-client")]
    assert wanted == [f"president-client @ {CLIENT.as_uri()}"]
