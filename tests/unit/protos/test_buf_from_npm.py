"""``buf`` (``make lint``'s ``buf lint`` and ``buf breaking``, and the tests beside this one)
is npm's ``@bufbuild/buf``, at the version and checksum ``tools/buf/package-lock.json``
pins, installed from that lockfile: not PyPI's ``buf-bin``."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "buf"
sys.path.insert(0, str(TOOL))
import buf  # noqa: E402  (tools/buf/buf.py)


def test_the_lockfile_pins_bufbuild_buf_with_its_checksum() -> None:
    wanted = json.loads((TOOL / "package.json").read_text())["devDependencies"]
    assert list(wanted) == ["@bufbuild/buf"]
    locked = json.loads((TOOL / "package-lock.json").read_text())["packages"]
    package = locked["node_modules/@bufbuild/buf"]
    assert package["version"] == wanted["@bufbuild/buf"]  # an exact version, not a range
    assert package["integrity"].startswith("sha512-")
    linux = locked["node_modules/@bufbuild/buf-linux-x64"]
    assert linux["version"] == package["version"] and linux["integrity"].startswith("sha512-")


def test_buf_runs_from_the_lockfile_and_is_that_version(tmp_path: Path) -> None:
    locked = json.loads((TOOL / "package-lock.json").read_text())["packages"]
    result = buf.run("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == locked["node_modules/@bufbuild/buf"]["version"]
    command = buf.command("--version")
    assert Path(command[1]).is_relative_to(TOOL / "node_modules" / "@bufbuild" / "buf")


def test_the_python_packages_bring_no_buf() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    assert not [r for r in requirements if r.startswith("buf")]
