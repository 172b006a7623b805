"""The README and docs/ stay true: the commands they show run, and their links lead somewhere.

A page shows a command a reader may type in a fenced block marked ``console``
(or ``sh``), one command a line after ``$ ``. Each block runs here, its
commands in order, in a scratch directory that sees the repository's files:
the cheap commands for real (``president ...``, ``make help``); of the costly
ones (``make run``, ``make test`` ...) the Makefile target must exist; the few
that need other tools (Docker, Kubernetes) are listed below and not run.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from president.servicekit.config.reference import every_variable
from tests.support.deployment import extra_variables, settings_variables

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
LINKED_PAGES = [*PAGES, ROOT / "deploy" / "README.md"]
PRESIDENT = Path(sys.executable).with_name("president")

#: A fenced block of commands, and one command in it.
BLOCK = re.compile(r"^```(?:console|sh)\n(.*?)^```", re.M | re.S)
PROMPT = "$ "
#: Make targets cheap enough to run here; the others are only looked up.
MAKE_RUNS = {"help"}
#: Commands shown but not run here: they need tools the test machine lacks.
NOT_RUN = (
    "cp deploy/env.example .env && docker compose",  # Docker
    "docker ",
    "kubectl ",
)
#: ``president`` subcommands that serve until stopped: their --help runs instead.
SERVES = {"run"}


def blocks(page: Path) -> list[list[str]]:
    """The commands of each ``console``/``sh`` block of a page."""
    found = []
    for body in BLOCK.findall(page.read_text()):
        lines = [line for line in body.splitlines() if line.startswith(PROMPT)]
        found.append([line.removeprefix(PROMPT).strip() for line in lines])
    return found


def shown() -> list[tuple[str, int, list[str]]]:
    return [
        (page.relative_to(ROOT).as_posix(), index, commands)
        for page in PAGES
        for index, commands in enumerate(blocks(page))
    ]


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z-]*):", text, re.M))


def scratch_of(tmp_path: Path) -> Path:
    """A directory holding links to the repository's files, so a page's relative
    paths work and what a command writes (a game's database) lands in tmp_path."""
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".venv", "var"}:
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_pages_show_commands() -> None:
    every = [command for _, _, commands in shown() for command in commands]
    assert "make run" in every and "make test" in every
    assert any(command.startswith("president ") for command in every)
    assert all(commands for _, _, commands in shown()), "a command block with no `$ ` line"


@pytest.mark.parametrize(("page", "index", "commands"), shown())
def test_a_pages_commands_run(page: str, index: int, commands: list[str], tmp_path: Path) -> None:
    scratch = scratch_of(tmp_path)
    targets = make_targets()
    for command in commands:
        where = f"{page}, block {index + 1}: {command!r}"
        if command.startswith(NOT_RUN):
            continue
        argv = shlex.split(command)
        if argv[0] == "make":
            target = next((word for word in argv[1:] if "=" not in word), "help")
            assert target in targets, f"{where}: the Makefile has no target {target!r}"
            if target not in MAKE_RUNS:
                continue
        elif argv[0] == "president":
            argv[0] = str(PRESIDENT)
            if argv[1] in SERVES:
                argv = [*argv[:2], "--help"]
        else:
            pytest.fail(f"{where}: unknown command; run it here, or list it in NOT_RUN")
        done = run(argv, scratch)
        assert done.returncode == 0, f"{where} exited {done.returncode}:\n{done.stderr[-2000:]}"
        assert done.stdout.strip(), f"{where} printed nothing"


def test_the_audit_block_audits_the_game_it_recorded(tmp_path: Path) -> None:
    """The auditing page's first block records a game, then verifies it: both really ran."""
    (commands,) = [c for p, _, c in shown() if p == "docs/auditing.md" and "--db" in c[0]][:1]
    scratch = scratch_of(tmp_path)
    outputs = [run([str(PRESIDENT), *shlex.split(c)[1:]], scratch) for c in commands]
    assert all(done.returncode == 0 for done in outputs), [d.stderr[-500:] for d in outputs]
    assert "recorded in the event store" in outputs[0].stdout
    assert re.search(r"OK: 1 table, \d+ rounds and \d+ events verified", outputs[1].stdout)


# Links.

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)
FENCED = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped,
    spaces to hyphens, a repeated one numbered."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCED.sub("", page.read_text())):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links() -> list[tuple[str, str]]:
    return [
        (page.relative_to(ROOT).as_posix(), target)
        for page in LINKED_PAGES
        for target in LINK.findall(FENCED.sub("", page.read_text()))
        if not re.match(r"[a-z]+:", target)
    ]


def test_the_pages_link_to_each_other() -> None:
    targets = {target.split("#")[0] for _, target in links()}
    readme_links = {t for p, t in links() if p == "README.md"}
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme_links, f"the README does not link to {page.name}"
    assert targets


@pytest.mark.parametrize(("page", "target"), links())
def test_every_relative_link_leads_somewhere(page: str, target: str) -> None:
    path, _, anchor = target.partition("#")
    source = ROOT / page
    file = (source.parent / path).resolve() if path else source
    assert file.exists(), f"{page}: {target} names no file"
    if anchor:
        assert file.suffix == ".md", f"{page}: {target}: an anchor in a file that is not a page"
        assert anchor in anchors(file), f"{page}: {target}: no heading {anchor!r} there"


def test_the_anchor_rule_is_githubs() -> None:
    page = DOCS / "performance.md"
    assert "recovery-from-faults-make-chaos" in anchors(page)
    assert "the-lobby-at-5000-tables" in anchors(page)


# What a page must name.


def test_the_readme_is_a_short_front_door() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 15_000


def test_the_dependencies_page_names_every_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    page = (DOCS / "dependencies.md").read_text()
    named = set(re.findall(r"`([A-Za-z0-9_.\-*]+)(?:\[[a-z,]+\])?`", page))
    prefixes = tuple(name.removesuffix("*") for name in named if name.endswith("*"))
    for requirement in wanted:
        name = re.split(r"[\[<>=;! ]", requirement, maxsplit=1)[0]
        assert name in named or name.startswith(prefixes), f"dependencies.md: no {name}"


def common_start(first: str, second: str) -> str:
    """The longest start two names share."""
    length = 0
    while length < min(len(first), len(second)) and first[length] == second[length]:
        length += 1
    return first[:length]


def documented(variable: str, page: str) -> bool:
    """Named in backticks, or covered by a `PREFIX_*` or a `FIRST_X` … `LAST_X` range."""
    if f"`{variable}`" in page:
        return True
    if any(variable.startswith(p) for p in re.findall(r"`([A-Z_]+)\*`", page)):
        return True
    for first, last in re.findall(r"`([A-Z_]+)` … `([A-Z_]+)`", page):
        head = common_start(first, last)
        tail = common_start(first[::-1], last[::-1])[::-1]
        middle = variable.removeprefix(head).removesuffix(tail)
        if variable.startswith(head) and variable.endswith(tail) and middle.isalpha():
            return True
    return False


def test_the_settings_page_documents_every_variable() -> None:
    page = (DOCS / "settings.md").read_text()
    variables = set(settings_variables().values()) | extra_variables()
    assert len(variables) > 40
    missing = sorted(v for v in variables if not documented(v, page))
    assert not missing, f"docs/settings.md does not document {missing}"


# What a page names exists.

CODE = re.compile(r"`([^`\n]+)`")
VARIABLE = re.compile(r"PRESIDENT_[A-Z0-9_]+(?![A-Z0-9_<*])")
PATH = re.compile(r"(?:libs|tests|web|protos|deploy|docs|gen)/[^ <>*…:]++(?![*<])")
PYTHON = re.compile(r"(president(?:\.[A-Za-z_0-9]+)+)(?::([A-Za-z_][\w.]*))?")
#: Named in a page, found nowhere as such: each says why.
NOT_IN_THE_CODE = {
    "PRESIDENT_EVENTS_COMMITMENTS": "the feed's stream, <stream>_COMMITMENTS, made at run time",
    "president.players.revoked": "a NATS subject, not a module",
    "president.game.v1.Command": "a generated message, not a module",
}
SOURCES = ("libs", "tests", "web/src", "web/public", "deploy", "Makefile", "docker-compose.yml")


def named(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found = set()
    for page in PAGES:
        for code in CODE.findall(page.read_text()):
            for match in pattern.finditer(code):
                if pattern is not PYTHON or match.group(0) == code:
                    found.add((page.relative_to(ROOT).as_posix(), match.group(0)))
    return sorted(found - {(p, n) for p, n in found if n in NOT_IN_THE_CODE})


def variables_in_the_code() -> set[str]:
    """Every variable the code names, and every setting the settings declare (some, such
    as the rate limits' ``PRESIDENT_RATE_<CLASS>``, are named by parts)."""
    found = {variable.name for _section, variable in every_variable()}
    for source in SOURCES:
        base = ROOT / source
        for path in [base] if base.is_file() else base.rglob("*"):
            if path.is_file() and path.suffix in {"", ".py", ".ts", ".js", ".yaml", ".yml"}:
                found |= set(VARIABLE.findall(path.read_text(errors="ignore")))
    return found


def test_every_variable_a_page_names_is_read_or_set_somewhere() -> None:
    known = variables_in_the_code()
    unknown = [(page, name) for page, name in named(VARIABLE) if name not in known]
    assert not unknown, f"variables no code reads or sets: {unknown}"


@pytest.mark.parametrize(("page", "path"), named(PATH))
def test_every_path_a_page_names_exists(page: str, path: str) -> None:
    assert (ROOT / path).exists(), f"{page} names {path}, which does not exist"


@pytest.mark.parametrize(("page", "name"), named(PYTHON))
def test_every_python_name_a_page_names_exists(page: str, name: str) -> None:
    dotted, _, qualified = name.partition(":")
    parts = dotted.split(".")
    for length in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:length]))
        except ImportError:
            continue
        rest = parts[length:] + (qualified.split(".") if qualified else [])
        break
    for attribute in rest:
        assert hasattr(found, attribute), f"{page} names {name}: no {attribute!r}"
        found = getattr(found, attribute)
