"""The gateway's layout: wings in layers, no import circle, no file over 550 lines.

The graph is every import between the gateway's modules, read from the source:
those at module level and those inside functions, and the type-only ones under
``TYPE_CHECKING`` too (a circle of types is a circle a reader walks all the same).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GATEWAY = ROOT / "libs" / "president" / "services" / "gateway"
PACKAGE = "president.services.gateway"
#: The wings, each importing only those after it; the top (bootstrap, main) imports any.
WINGS = ("api", "calls", "streams", "identity", "limits", "upstream")
MAX_LINES = 550


def module_of(path: Path) -> str:
    parts = path.relative_to(GATEWAY).with_suffix("").parts
    return ".".join((PACKAGE, *parts)).removesuffix(".__init__")


def modules() -> dict[str, Path]:
    return {module_of(path): path for path in sorted(GATEWAY.rglob("*.py"))}


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    """The gateway's modules that ``path`` imports (``from wing import module`` included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in known:
                    found.add(full)
                elif node.module in known:
                    found.add(node.module)
    return found - {module_of(path)}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, known) for name, path in known.items()}


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the modules around it, or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := walk(target)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := walk(node)) is not None:
            return found
    return None


def wing_of(module: str) -> str | None:
    part = module.removeprefix(f"{PACKAGE}.").split(".")[0]
    return part if part in WINGS else None


def test_the_graph_is_read_from_the_source() -> None:
    edges = graph()
    assert len(edges) > 30
    assert f"{PACKAGE}.calls.app" in edges[f"{PACKAGE}.api.handlers"]
    assert f"{PACKAGE}.streams.feed" in edges[f"{PACKAGE}.calls.app"]


def test_the_circle_finder_finds_a_circle() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle_in_the_gateway() -> None:
    found = circle(graph())
    assert found is None, "an import circle: " + " -> ".join(found or [])


def test_every_module_lives_in_a_wing_or_at_the_top() -> None:
    top = {f"{PACKAGE}", f"{PACKAGE}.bootstrap", f"{PACKAGE}.main"}
    wings = {f"{PACKAGE}.{wing}" for wing in WINGS}
    loose = sorted(m for m in modules() if wing_of(m) is None and m not in top)
    assert not loose, f"modules in no wing: {loose}"
    assert wings <= set(modules()), "each wing is a package with its docstring"
    for wing in wings:
        docstring = ast.get_docstring(ast.parse(modules()[wing].read_text()))
        assert docstring and len(docstring.split()) >= 8, f"{wing} says what it is"


def test_a_wing_imports_only_the_wings_after_it() -> None:
    upward = []
    for module, targets in graph().items():
        wing = wing_of(module)
        if wing is None:
            continue
        for target in targets:
            other = wing_of(target)
            if other is None or WINGS.index(other) < WINGS.index(wing):
                upward.append(f"{module} imports {target}")
    assert not upward, "\n".join(sorted(upward))


def test_no_file_of_the_gateway_is_over_550_lines() -> None:
    long = {
        str(path.relative_to(GATEWAY)): lines
        for path in modules().values()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split along a seam: {long}"
