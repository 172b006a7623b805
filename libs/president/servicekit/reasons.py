"""Every stable reason a refusal carries, found in the code: ``docs/errors.md``.

The reasons are collected from the source itself (:func:`scan`): each literal reason
given to :class:`~president.servicekit.errors.ServiceError` or to a helper that passes
its ``reason`` on (``invalid``, ``denied``, ``unauthenticated``, a Connect error's
JSON, ...), the few carriers that name a reason before it becomes a refusal
(:data:`CARRIERS`), module constants that hold one, and the members of
the rules' :class:`~president.rules.errors.ErrorCode` and the tournament core's
:class:`~president.tournament.errors.Refusal`. Their statuses come from the same calls
and from the tables that map a reason to a status. What each means, and whether to
retry, is the one hand-kept table ``MEANINGS`` of :mod:`president.servicekit.reason_meanings`.

``president reasons`` prints the page, ``president reasons --write`` writes it; a test
checks that every reason found has its entry, that every entry is still used, and that
the committed page is what the code makes.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from president.rules.errors import ErrorCode
from president.servicekit.reason_meanings import HINT, MEANINGS, NO, Retry
from president.tournament.errors import Refusal

#: Where the page lives in the repository.
PAGE = Path("docs/errors.md")
#: The source scanned: the ``president`` package.
SOURCE = Path(__file__).resolve().parents[1]
#: The enums whose members are reasons, and the table of their statuses; a member the
#: table leaves out is FAILED_PRECONDITION (``errors.from_domain``, the tournament
#: handlers' ``refused``).
ENUMS: dict[type[StrEnum], str] = {ErrorCode: "STATUS_OF_CODE", Refusal: "REFUSAL_STATUS"}
DEFAULT_STATUS = "FAILED_PRECONDITION"
#: A status the code takes from elsewhere (the call that failed upstream).
PASSED_ON = "the upstream's"

INTRODUCTION = """\
# Errors

A refused call carries a gRPC status (Connect: the same code in lower case), a
`google.rpc.ErrorInfo` whose `reason` is one of the stable codes below, and a
sentence for a person. Programs branch on the reason, never on the sentence. A
refusal changes nothing: the same call sent again is refused again unless what it
depends on changed.

**Retry** says what a client does: *no* (fix the request, or the state must change
first); *yes, after N s*; or *after the hint*, the delay in the refusal's
`google.rpc.RetryInfo` (also in ErrorInfo's metadata as `retry_after_seconds`).
A command retried with the same `command_id` runs at most once.

This page is generated from the code (`libs/president/servicekit/reasons.py` finds
the reasons, `libs/president/servicekit/reason_meanings.py` says what they mean):
run `president reasons --write` after adding one, and a test checks the page is current.
[clients.md](clients.md) says how each client reads a refusal.
"""


@dataclass(frozen=True)
class Found:
    """A reason the code gives: its statuses, the files that give it, and whether its
    refusal carries a retry hint."""

    statuses: frozenset[str]
    places: frozenset[str]
    hint: bool


@dataclass(frozen=True)
class Maker:
    """A function that makes a refusal from a reason: where its reason is, and its status
    (fixed, or the argument at ``status_at``: ``Code.X``, or Connect's name of it)."""

    reason_at: int
    status: str | None = None
    status_at: int | None = None
    #: The table of statuses by reason that the handler looks the reason up in.
    table: str | None = None


#: The functions that make a refusal (``ServiceError``, and a Connect error's JSON);
#: a function that passes its parameter on to one of them is found as one too.
MAKERS = {"ServiceError": Maker(1, status_at=0), "error_json": Maker(2, status_at=0)}
#: Calls that name a reason before a handler turns it into a refusal.
CARRIERS = {
    "Refused": Maker(0, table="REFUSED_STATUS"),  # the gateway's own refusals
    "SeatRate": Maker(2, "RESOURCE_EXHAUSTED"),  # a seat's reaction and chat rates
}
#: Reasons whose refusal carries a retry hint though the call that names them does not
#: (the table handlers add it to a seat rate's refusal).
HINTED = frozenset({"CHAT_RATE", "REACTION_RATE"})


def _name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _status(node: ast.expr | None) -> str | None:
    """``X`` of ``Code.X``, or of Connect's ``"x"``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "Code" else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.islower():
        return node.value.upper()
    return None


def _argument(call: ast.Call, index: int | None, keyword: str) -> ast.expr | None:
    if index is not None and len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _text(node: ast.expr | None, constants: dict[str, str]) -> str | None:
    """A reason as written: a literal, a module constant, or an enum member (``E.X[.value]``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value.isupper() and " " not in node.value else None
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "value":
        node = node.value
    enums = {enum.__name__ for enum in ENUMS}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id in enums else None
    return None


Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Module:
    """One source file, read once: its functions and its calls, each call with the
    parameters of the function it is in."""

    where: str
    tree: ast.Module
    functions: list[tuple[Function, list[str], list[ast.Call]]] = field(default_factory=list)
    calls: dict[int, tuple[ast.Call, list[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                self.calls.setdefault(id(node), (node, []))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = [*node.args.args, *node.args.kwonlyargs]
                parameters = [a.arg for a in arguments]
                calls = [call for call in ast.walk(node) if isinstance(call, ast.Call)]
                self.functions.append((node, parameters, calls))
        for _function, parameters, calls in self.functions:  # outer first: inner ones win
            for call in calls:
                self.calls[id(call)] = (call, parameters)

    @property
    def own(self) -> set[str]:
        return {function.name for function, _parameters, _calls in self.functions}


def _files(source: Path) -> list[Module]:
    return [
        Module(str(path.relative_to(source.parent)), ast.parse(path.read_text()))
        for path in sorted(source.rglob("*.py"))
    ]


def _makers(modules: list[Module]) -> dict[tuple[str, str], Maker]:
    """Every function that makes a refusal from its parameter, by module and name."""
    found: dict[tuple[str, str], Maker] = {}
    while True:
        before = len(found)
        for module in modules:
            known = _known(module, found)
            for function, parameters, calls in module.functions:
                maker = _maker_of(parameters, calls, known)
                if maker is not None:
                    found.setdefault((module.where, function.name), maker)
        if len(found) == before:
            return found


def _known(module: Module, found: dict[tuple[str, str], Maker]) -> dict[str, Maker]:
    """The makers a module's calls name: its own functions first, then any other module's."""
    own = module.own
    known = dict(MAKERS)
    for (place, name), maker in found.items():
        if place == module.where or name not in own:
            known.setdefault(name, maker)
    for name in own:
        if (module.where, name) not in found:
            known.pop(name, None)
    return known


def _maker_of(
    parameters: list[str], calls: list[ast.Call], known: dict[str, Maker]
) -> Maker | None:
    for call in calls:
        if _name(call) not in known:
            continue
        maker = known[_name(call)]
        reason = _argument(call, maker.reason_at, "reason")
        if not (isinstance(reason, ast.Name) and reason.id in parameters):
            continue
        status = maker.status
        given = _argument(call, maker.status_at, "status")
        if given is not None and _status(given) is not None:
            status = _status(given)
        status_at = None
        if isinstance(given, ast.Name) and given.id in parameters:
            status_at = parameters.index(given.id)
        return Maker(parameters.index(reason.id), status, status_at)
    return None


def _constants(modules: list[Module]) -> dict[str, str]:
    """Module-level ``NAME = "TEXT"``: the reasons written as constants."""
    constants: dict[str, str] = {}
    for module in modules:
        for statement in module.tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
                text = value.value if isinstance(value, ast.Constant) else None
                if isinstance(target, ast.Name) and isinstance(text, str) and target.id.isupper():
                    constants.setdefault(target.id, text)
    return constants


def _tables(modules: list[Module], constants: dict[str, str]) -> dict[str, dict[str, str]]:
    """The module-level tables from reasons to statuses (``STATUS_OF_CODE``, ...), by name."""
    tables: dict[str, dict[str, str]] = {}
    for module in modules:
        for statement in module.tree.body:
            target: ast.expr | None = None
            if isinstance(statement, ast.AnnAssign):
                target = statement.target
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
            value = getattr(statement, "value", None)
            if not (isinstance(target, ast.Name) and isinstance(value, ast.Dict)):
                continue
            for key, status in zip(value.keys, value.values, strict=True):
                reason, code = _text(key, constants), _status(status)
                if reason is not None and code is not None:
                    tables.setdefault(target.id, {})[reason] = code
    return tables


def _looked_up(node: ast.expr | None, tables: dict[str, dict[str, str]], reason: str) -> str | None:
    """The status of ``TABLE[reason]``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return tables.get(node.value.id, {}).get(reason)
    return None


@functools.cache
def _cached(source: Path) -> tuple[dict[str, Found], frozenset[str]]:
    found, unread = _scan(source)
    return found, frozenset(unread)


def scan(source: Path = SOURCE) -> dict[str, Found]:
    """Every reason the code under ``source`` gives, with its statuses."""
    return dict(_cached(source)[0])


def passed_on(source: Path = SOURCE) -> set[str]:
    """The reasons given as an expression the scan cannot read (``error.reason``...): each
    passes on a reason made elsewhere, or names one the scan misses."""
    return set(_cached(source)[1])


def _scan(source: Path) -> tuple[dict[str, Found], set[str]]:
    modules = _files(source)
    makers = _makers(modules)
    constants = _constants(modules)
    tables = _tables(modules, constants)
    statuses: dict[str, set[str]] = {}
    places: dict[str, set[str]] = {}
    hinted = set(HINTED)
    unread: set[str] = set()
    for module in modules:
        known = {**_known(module, makers), **CARRIERS}
        for node, parameters in module.calls.values():
            if _name(node) not in known:
                continue
            maker = known[_name(node)]
            given_reason = _argument(node, maker.reason_at, "reason")
            reason = _text(given_reason, constants)
            if reason is None:
                if given_reason is not None and not (
                    isinstance(given_reason, ast.Name) and given_reason.id in parameters
                ):
                    unread.add(ast.unparse(given_reason))
                continue
            given = _argument(node, maker.status_at, "status")
            status = maker.status or _status(given) or _looked_up(given, tables, reason)
            if status is None and maker.table is not None:
                status = tables.get(maker.table, {}).get(reason)
            statuses.setdefault(reason, set()).add(status or PASSED_ON)
            places.setdefault(reason, set()).add(module.where)
            if "RETRY_AFTER" in ast.unparse(node):
                hinted.add(reason)
    for enum, table in ENUMS.items():
        for member in enum:
            status = tables.get(table, {}).get(member.value, DEFAULT_STATUS)
            statuses.setdefault(member.value, set()).add(status)
            places.setdefault(member.value, set()).add(enum.__module__)
    found = {
        reason: Found(frozenset(seen), frozenset(places[reason]), reason in hinted)
        for reason, seen in statuses.items()
    }
    return found, unread


def _retry(retry: Retry) -> str:
    if retry == NO:
        return "no"
    if retry == HINT:
        return "after the hint"
    return f"yes, after {retry} s"


def page() -> str:
    """The reference page's Markdown: one row per reason, sorted."""
    found = scan()
    lines = [
        INTRODUCTION.rstrip(),
        "",
        "| reason | status | what it means | retry |",
        "|---|---|---|---|",
    ]
    for reason in sorted(found):
        meaning, retry = MEANINGS[reason]
        status = ", ".join(
            f"`{s}`" if s != PASSED_ON else s for s in sorted(found[reason].statuses)
        )
        lines.append(f"| `{reason}` | {status} | {meaning} | {_retry(retry)} |")
    return "\n".join(lines) + "\n"
