"""docs/architecture.md stays true: what it names exists, and the rooms import what it says."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MAP = ROOT / "docs" / "architecture.md"
LIBS = ROOT / "libs"
#: `president.some.module` or `president.some.module:Qualified.name` in backticks.
NAMED = re.compile(r"`(president(?:\.[a-z_0-9]+)+)(?::([A-Za-z_][A-Za-z_0-9.]*))?`")


def named_in_map() -> list[tuple[str, str | None]]:
    return sorted(set(NAMED.findall(MAP.read_text())), key=str)


def test_the_map_names_modules_and_functions() -> None:
    assert len(named_in_map()) > 40, "the walk of a play names the function at each step"


@pytest.mark.parametrize(("module", "qualified"), named_in_map())
def test_every_name_in_the_map_exists(module: str, qualified: str | None) -> None:
    found: object = importlib.import_module(module)
    for part in (qualified or "").split(".") if qualified else ():
        assert hasattr(found, part), f"{module}:{qualified}: no {part!r} in {found!r}"
        found = getattr(found, part)


def president_imports(path: Path) -> set[str]:
    """The ``president.*`` modules a file imports (at any depth, type-only ones included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("president")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("president"):
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def files_of(package: str) -> list[Path]:
    return sorted((LIBS / package.replace(".", "/")).rglob("*.py"))


@pytest.mark.parametrize(
    ("room", "allowed"),
    [
        ("president.rules", ("president.rules",)),
        ("president.store", ("president.store",)),
        ("president.ratings", ("president.ratings", "president.rules")),
        ("president.tournament", ("president.tournament", "president.deal", "president.rules")),
    ],
)
def test_the_inner_rooms_import_nothing_of_the_rest(room: str, allowed: tuple[str, ...]) -> None:
    for path in files_of(room):
        outside = {name for name in president_imports(path) if not name.startswith(allowed)}
        assert not outside, f"{path.relative_to(ROOT)} imports {sorted(outside)}"


def test_services_import_each_other_only_through_protos() -> None:
    services = sorted(p.name for p in (LIBS / "president" / "services").iterdir() if p.is_dir())
    assert {"dealer", "gateway", "players", "scoring", "table", "timer"} <= set(services)
    for service in services:
        own = f"president.services.{service}"
        for path in files_of(own):
            others = {
                name
                for name in president_imports(path)
                if name.startswith("president.services.") and not name.startswith(own)
            }
            assert not others, f"{path.relative_to(ROOT)} imports {sorted(others)}"


def test_nothing_below_the_services_imports_a_service() -> None:
    rooms = ("rules", "store", "hosting", "audit", "play", "servicekit", "client", "tournament")
    for room in rooms:
        for path in files_of(f"president.{room}"):
            services = {n for n in president_imports(path) if n.startswith("president.services")}
            assert not services, f"{path.relative_to(ROOT)} imports {sorted(services)}"


# Every room and its files.

LISTING = re.compile(r"^## Every room and its files\n(.*?)(?=^## |\Z)", re.M | re.S)
ROOM = re.compile(r"^`(libs/president/[a-z_/]*)`:", re.M)
ROW = re.compile(r"^\| `([A-Za-z0-9_/]+\.py)` \| (.+) \|$", re.M)


def listed_modules() -> dict[str, str]:
    """Each module the map lists, as its path under libs/, and the job it gives it."""
    (listing,) = LISTING.findall(MAP.read_text())
    listed: dict[str, str] = {}
    for part in re.split(r"^### ", listing, flags=re.M)[1:]:
        (room,) = ROOM.findall(part)
        for name, job in ROW.findall(part):
            path = f"{room.removeprefix('libs/')}{name}"
            assert path not in listed, f"the map lists {path} twice"
            listed[path] = job
    return listed


def modules_in_libs() -> set[str]:
    return {
        path.relative_to(LIBS).as_posix()
        for path in (LIBS / "president").rglob("*.py")
        if path.name != "__init__.py"
    }


def test_the_map_lists_every_module_of_libs() -> None:
    missing = sorted(modules_in_libs() - set(listed_modules()))
    assert not missing, f"docs/architecture.md does not list {missing}"


def test_the_map_lists_no_module_that_does_not_exist() -> None:
    gone = sorted(set(listed_modules()) - modules_in_libs())
    assert not gone, f"docs/architecture.md lists modules that do not exist: {gone}"


def test_each_listed_module_has_a_job() -> None:
    listed = listed_modules()
    assert len(listed) > 200
    for path, job in listed.items():
        assert len(job.split()) >= 3, f"{path}: {job!r} says no job"


# The web table's files.

WEB_LISTING = re.compile(
    r"^The web table's files, `web/src/`.*?\n\n(\|.*?)(?:\n\n|\Z)", re.M | re.S
)
WEB_ROW = re.compile(r"^\| `([a-z_]+\.ts)` \| (.+) \|$", re.M)


def test_the_map_lists_every_file_of_the_web_table() -> None:
    (table,) = WEB_LISTING.findall(MAP.read_text())
    listed = dict(WEB_ROW.findall(table))
    present = {path.name for path in (ROOT / "web" / "src").glob("*.ts")}
    assert sorted(present - set(listed)) == [], "docs/architecture.md does not list these"
    assert sorted(set(listed) - present) == [], "docs/architecture.md lists files that are gone"
    assert all(len(job.split()) >= 3 for job in listed.values())
