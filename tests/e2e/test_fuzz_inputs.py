"""Fuzzing the gateway's inputs from the protos: every public RPC, on a real stack.

Requests of every ``GatewayService`` method are built by hypothesis from the
method's input descriptor (:mod:`tests.support.proto_strategies`: every string
and number field nasty, now and then a real table id or card) and sent to the
real gateway (and, for a few methods, through the web edge's Connect path)
with a valid token and with a wrong one. Whatever the request:

- the answer is never INTERNAL or UNKNOWN (nor a hang);
- every refusal carries a stable reason (ErrorInfo) and a sentence a person
  reads, with no Python class name or traceback in it, and no "a" before a
  vowel ("a auditor token");
- a refused call changes nothing: the store gets no event of the caller's
  (a presence report aside: a stream's opening and closing is not a move)
  and no new table, and the directory lists no new table.

``PRESIDENT_FUZZ_EXAMPLES`` sets the examples per method (default 12, about
half a minute in all); ``make bench`` runs it with many more
(``tests/benchmarks/fuzz_bench.py``).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from president.client import GatewayClient
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.streams import STREAM_PREFIX
from president.servicekit.launcher import Stack
from president.services.table.directory import table_directory
from president.store import EventStore, StoredEvent
from tests.support.gateway_truth import token
from tests.support.proto_strategies import messages
from tests.support.web_edge import (
    SERVICE_PATH,
    base_url,
    error_reason,
    web_stack,  # noqa: F401  # the fixture
)

EXAMPLES = int(os.environ.get("PRESIDENT_FUZZ_EXAMPLES", "12"))
SERVICE = pb.DESCRIPTOR.services_by_name["GatewayService"]
#: Calls that need no token.
OPEN = {
    "ListTables",
    "ListCommitments",
    "GetOperatorKeys",
    "CreateGuest",
    "LogIn",
    "Refresh",
    "Register",
}
#: Calls that end the caller's own session: fuzzed with the wrong token only (with the
#: valid one, every later call would rightly be UNAUTHENTICATED).
ENDS_SESSION = {"LogOut", "LogOutEverywhere"}
#: A few methods also fuzzed through the web edge's Connect path.
THROUGH_THE_EDGE = ("CreateTable", "JoinTable", "React", "GetTable", "AddBot", "CheckDeal")
NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DEADLINE_EXCEEDED}
CONNECT_NEVER = {"internal", "unknown", "deadline_exceeded"}
REASON = re.compile(r"[A-Z][A-Z0-9_]{2,63}")
#: "a" before a vowel sound ("a auditor"); "a one", "a unit" and "a user" are fine.
BAD_ARTICLE = re.compile(r"\ba (?!one|uni|use|usu)[aeiou]")
LEAKS = ("Traceback", "Error(", "<class", "Exception", "object at 0x")
CALL_SECONDS = 10.0
STREAM_SECONDS = 3.0
CARDS = ["3C", "10H", "QS", "2S", "AD", "JK", "3c", "10", "1H"]


@dataclass(frozen=True)
class Scene:
    """The tables the fuzzing identity acts on, and who it is."""

    account_id: str
    public_table: str
    practice_table: str
    others_table: str

    @property
    def known(self) -> list[str]:
        """Texts that get a request past its first checks."""
        return [
            self.public_table,
            self.practice_table,
            self.others_table,
            *CARDS,
            "classic",
            "house-rapid",
            "game_end",
            "rounds:7",
            "players",
            "thumbs_up",
            "basic",
            "strong",
            "Ann",
        ]


async def _scene(stack: Stack) -> Scene:
    async with (
        GatewayClient.connect(stack.gateway) as host,
        GatewayClient.connect(stack.gateway) as other,
    ):
        await host.create_guest("Fuzzer")
        await other.create_guest("Other")
        public = await host.create_table("classic", visibility="public", display_name="Fuzzer")
        await host.add_bot()
        practice = await host.create_table("house", display_name="Fuzzer")
        others = await other.create_table("classic", visibility="public", display_name="Other")
        account = host.player_id
    return Scene(account, public.table_id, practice.table_id, others.table_id)


@dataclass(frozen=True)
class Target:
    """The stack under fuzzing: its gateway, its store, and the scene's identity."""

    stack: Stack
    scene: Scene
    store: EventStore
    channel: grpc.Channel

    def token(self) -> str:
        return token(self.stack, self.scene.account_id)

    def requests(self, method: str) -> st.SearchStrategy[Message]:
        return messages(SERVICE.methods_by_name[method].input_type, self.scene.known)


@pytest.fixture(scope="module")
def target(web_stack: Stack) -> Iterator[Target]:  # noqa: F811
    scene = asyncio.run(_scene(web_stack))
    store = EventStore.from_url(web_stack.database_url)
    channel = grpc.insecure_channel(web_stack.gateway)
    yield Target(web_stack, scene, store, channel)
    channel.close()
    store.close()


# ------------------------------------------------------------------------------ the truth
class Before:
    """What the store and the directory held before a call."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.events = _all_events(store)
        self.position = self.events[-1].position if self.events else None
        self.streams = {event.stream_id for event in self.events}
        self.listed = _listed(store)

    def changes_by(self, account_id: str) -> list[StoredEvent]:
        """The events of ``account_id`` since, presence reports aside, and any new stream's."""
        after = _all_events(self.store, self.position)
        return [
            event
            for event in after
            if event.stream_id not in self.streams
            or (
                event.metadata.get("actor") == account_id
                and not event.type.endswith(".SeatPresence")
            )
        ]

    def new_listed(self) -> set[str]:
        return _listed(self.store) - self.listed - {s[len(STREAM_PREFIX) :] for s in self.streams}


def _all_events(store: EventStore, after: Any = None) -> list[StoredEvent]:
    out: list[StoredEvent] = []
    while True:
        batch = store.read_all(after, 1000)
        out.extend(batch)
        if len(batch) < 1000:
            return out
        after = batch[-1].position


def _listed(store: EventStore) -> set[str]:
    with store.engine.connect() as connection:
        return {row.table_id for row in connection.execute(select(table_directory.c.table_id))}


# ------------------------------------------------------------------------------ refusals
@dataclass(frozen=True)
class Answer:
    """A call's outcome: OK, or a refusal's code, reason and sentence."""

    code: str
    reason: str = ""
    message: str = ""

    @property
    def refused(self) -> bool:
        return self.code != "OK"


def _of_rpc_error(error: grpc.RpcError) -> Answer:
    reason = ""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
    return Answer(error.code().name, reason, error.details() or "")  # type: ignore[attr-defined]


def check_answer(method: str, request: Message, answer: Answer) -> None:
    """Never INTERNAL or UNKNOWN; a refusal has a stable reason and a clean sentence."""
    said = f"{method}({request!r:.300}) -> {answer}"
    assert answer.code not in {code.name for code in NEVER}, said
    if not answer.refused or too_large(answer):
        return
    assert REASON.fullmatch(answer.reason), said
    assert len(answer.message) > 10, said
    assert not BAD_ARTICLE.search(answer.message), said
    assert not any(leak in answer.message for leak in LEAKS), said


def too_large(answer: Answer) -> bool:
    """gRPC's own refusal of a message over the server's size limit: before any code of
    ours runs, so it carries no ErrorInfo (its sentence names the sizes)."""
    return answer.code == "RESOURCE_EXHAUSTED" and "larger than max" in answer.message


def check_nothing_changed(before: Before, account_id: str, said: str) -> None:
    changed = before.changes_by(account_id)
    assert not changed, f"{said}: a refused call changed {[(e.stream_id, e.type) for e in changed]}"
    assert not before.new_listed(), f"{said}: a refused call listed a table"


# ------------------------------------------------------------------------------ calls
def _path(method: str) -> str:
    return f"{SERVICE_PATH}/{method}"


def _call(channel: grpc.Channel, method: str, request: Message, bearer: str) -> Answer:
    """One call of ``method``; a stream is read until its first answer, then cancelled."""
    descriptor = SERVICE.methods_by_name[method]
    output = GetMessageClass(descriptor.output_type)
    metadata = (("authorization", f"Bearer {bearer}"),) if bearer else ()
    try:
        if descriptor.client_streaming:
            return _session(channel, request, output, metadata)
        if descriptor.server_streaming:
            stream = channel.unary_stream(_path(method), response_deserializer=output.FromString)(
                request.SerializeToString(), metadata=metadata, timeout=STREAM_SECONDS
            )
            try:
                next(stream, None)
            finally:
                stream.cancel()
            return Answer("OK")
        channel.unary_unary(_path(method), response_deserializer=output.FromString)(
            request.SerializeToString(), metadata=metadata, timeout=CALL_SECONDS
        )
        return Answer("OK")
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.CANCELLED:  # type: ignore[attr-defined]
            return Answer("OK")  # our own cancel, after the first answer
        return _of_rpc_error(error)


def _session(channel: grpc.Channel, request: Message, output: Any, metadata: Any) -> Answer:
    """A Session stream: a fuzzed first request (a watch, or not), then a fuzzed command;
    the answer is the stream's refusal, or the command's result."""
    first = pb.SessionRequest.FromString(request.SerializeToString())
    second = pb.SessionRequest.FromString(request.SerializeToString())
    if first.WhichOneof("request") != "watch" and first.watch.table_id == "":
        second.Clear()
    done = threading.Event()

    def requests() -> Iterator[bytes]:
        yield first.SerializeToString()
        if second.WhichOneof("request") is not None:
            yield second.SerializeToString()
        done.wait(STREAM_SECONDS)

    stream = channel.stream_stream(_path("Session"), response_deserializer=output.FromString)(
        requests(), metadata=metadata, timeout=STREAM_SECONDS
    )
    try:
        for response in stream:
            for result in response.results:
                if result.HasField("refused"):
                    refusal = result.refused
                    return Answer(refusal.code, refusal.reason, refusal.message)
                return Answer("OK")
            if second.WhichOneof("request") is None and response.changes:
                return Answer("OK")
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.CANCELLED:  # type: ignore[attr-defined]
            return Answer("OK")
        if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:  # type: ignore[attr-defined]
            return Answer("OK")  # an open stream with nothing to answer: our own deadline
        return _of_rpc_error(error)
    finally:
        done.set()
        stream.cancel()
    return Answer("OK")


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
        HealthCheck.large_base_example,
    ],
)
METHODS = [m.name for m in SERVICE.methods]


@pytest.mark.parametrize("method", [m for m in METHODS if m not in ENDS_SESSION])
def test_every_rpc_with_a_valid_token(method: str, target: Target) -> None:
    @FUZZ
    @given(request=target.requests(method))
    def fuzz(request: Message) -> None:
        before = Before(target.store)
        answer = _call(target.channel, method, request, target.token())
        if method == "Watch" and resumes_at_the_newest(target.store, request, answer):
            answer = Answer("OK")  # an open stream, rightly quiet: nothing after that version
        check_answer(method, request, answer)
        if answer.refused:
            check_nothing_changed(before, target.scene.account_id, f"{method} {answer}")

    fuzz()


def resumes_at_the_newest(store: EventStore, request: Message, answer: Answer) -> bool:
    """A Watch resumed at the table's newest version has nothing to send until the next
    change (a quiet table: our own deadline ends it); any other Watch answers at once."""
    assert isinstance(request, pb.WatchRequest)
    if answer.code != "DEADLINE_EXCEEDED" or request.from_version == 0:
        return False
    newest = store.current_version(STREAM_PREFIX + request.table_id)
    return bool(newest) and request.from_version == newest


WRONG_TOKENS = st.sampled_from(["", "garbage", "Bearer x", "a.b.c", "\x9b", "é" * 300])


@pytest.mark.parametrize("method", METHODS)
def test_every_rpc_with_a_wrong_token(method: str, target: Target) -> None:
    @settings(FUZZ, max_examples=max(3, EXAMPLES // 3))
    @given(request=target.requests(method), bearer=WRONG_TOKENS | st.just("expired"))
    def fuzz(request: Message, bearer: str) -> None:
        if bearer == "expired":
            bearer = token(target.stack, target.scene.account_id, age=3600)
        if not bearer.isascii() or not bearer.isprintable():
            bearer = bearer.encode().hex()  # metadata is ASCII: what a client could send
        before = Before(target.store)
        answer = _call(target.channel, method, request, bearer)
        check_answer(method, request, answer)
        if method not in OPEN:
            assert answer.code == "UNAUTHENTICATED", f"{method} with {bearer!r}: {answer}"
        if answer.refused:
            check_nothing_changed(before, target.scene.account_id, f"{method} {answer}")

    fuzz()


@pytest.mark.parametrize("method", [m for m in METHODS if m not in ENDS_SESSION])
def test_bytes_that_are_no_message_are_refused_clearly(method: str, target: Target) -> None:
    descriptor = SERVICE.methods_by_name[method]

    @settings(FUZZ, max_examples=max(2, EXAMPLES // 4))
    @given(data=st.binary(min_size=1, max_size=40) | st.just(b"\xff\xff\xff"))
    def fuzz(data: bytes) -> None:
        metadata = (("authorization", f"Bearer {target.token()}"),)
        before = Before(target.store)
        try:
            if descriptor.client_streaming:
                stream = target.channel.stream_stream(_path(method))(
                    iter([data]), metadata=metadata, timeout=STREAM_SECONDS
                )
                next(stream, None)
                stream.cancel()
                answer = Answer("OK")
            elif descriptor.server_streaming:
                stream = target.channel.unary_stream(_path(method))(
                    data, metadata=metadata, timeout=STREAM_SECONDS
                )
                next(stream, None)
                stream.cancel()
                answer = Answer("OK")
            else:
                target.channel.unary_unary(_path(method))(
                    data, metadata=metadata, timeout=CALL_SECONDS
                )
                answer = Answer("OK")
        except grpc.RpcError as error:
            answer = _of_rpc_error(error)
            if answer.code in ("CANCELLED", "DEADLINE_EXCEEDED") and descriptor.server_streaming:
                answer = Answer("OK")  # an open stream of a message that parsed
        check_answer(method, pb.WatchRequest(), answer)
        if answer.refused:
            check_nothing_changed(before, target.scene.account_id, f"{method} {data!r} {answer}")

    fuzz()


@pytest.mark.parametrize("method", THROUGH_THE_EDGE)
def test_the_web_edge_answers_fuzzed_requests_clearly(method: str, target: Target) -> None:
    with httpx.Client(base_url=base_url(target.stack), timeout=CALL_SECONDS) as http:

        @settings(FUZZ, max_examples=max(3, EXAMPLES // 2))
        @given(request=target.requests(method), valid=st.booleans())
        def fuzz(request: Message, valid: bool) -> None:
            bearer = target.token() if valid else "garbage"
            before = Before(target.store)
            response = http.post(
                _path(method),
                content=request.SerializeToString(),
                headers={
                    "content-type": "application/proto",
                    "authorization": f"Bearer {bearer}",
                },
            )
            if response.status_code == 200:
                return
            error = response.json()
            answer = Answer(error.get("code", ""), error_reason(error), error.get("message", ""))
            said = f"{method} through the edge: {answer}"
            assert answer.code not in CONNECT_NEVER, said
            check_answer(method, request, answer)
            if not valid:
                assert answer.code == "unauthenticated", said
            check_nothing_changed(before, target.scene.account_id, said)

        fuzz()


def test_what_the_fuzzing_found_is_answered_clearly(target: Target) -> None:
    """The commitment feed past the largest sequence a column holds was INTERNAL (an
    integer overflow in the database driver): it is an empty page now. A day written in
    other digits is INVALID_DAY."""
    stub = target.channel.unary_unary(
        _path("ListCommitments"), response_deserializer=pb.ListCommitmentsResponse.FromString
    )
    page = stub(pb.ListCommitmentsRequest(after_seq=2**64 - 1).SerializeToString(), timeout=10)
    assert list(page.entries) == []
    with pytest.raises(grpc.RpcError) as refused:
        stub(pb.ListCommitmentsRequest(day="٢٠٢٦-١٢-٠١").SerializeToString(), timeout=10)
    answer = _of_rpc_error(refused.value)
    assert (answer.code, answer.reason) == ("INVALID_ARGUMENT", "INVALID_DAY")


def test_the_listed_wrong_answers_are_right_through_the_gateway(target: Target) -> None:
    """Issue 14's list, on the real gateway: Unicode digits in game_end, a reaction with a
    trailing newline, a display name with a CSI, bidi override or nothing visible, bytes
    that are no message, and NO_SUCH_SEAT with one status from AddBot and RemoveSeat."""
    table = target.scene.public_table
    cases: list[tuple[str, Message, str]] = [
        (
            "CreateTable",
            pb.CreateTableRequest(
                display_name="Ann", options=gpb.TableOptions(options={"game_end": "rounds:²"})
            ),
            "INVALID_OPTIONS",
        ),
        ("React", pb.ReactRequest(table_id=table, reaction="x\n"), "INVALID_REACTION"),
        *(
            ("JoinTable", pb.JoinTableRequest(table_id=table, display_name=name), reason)
            for name, reason in (
                ("Ann\x9b31m", "INVALID_DISPLAY_NAME"),
                ("Ann\u202eevil", "INVALID_DISPLAY_NAME"),
                ("\u3164\u200b", "INVALID_DISPLAY_NAME"),
            )
        ),
        (
            "CreateTable",
            pb.CreateTableRequest(display_name="Ann", name="Club\u202e"),
            "INVALID_TABLE_NAME",
        ),
        ("AddBot", pb.AddBotRequest(table_id=table, seat=99), "NO_SUCH_SEAT"),
        ("RemoveSeat", pb.RemoveSeatRequest(table_id=table, seat=99), "NO_SUCH_SEAT"),
    ]
    for method, request, reason in cases:
        before = Before(target.store)
        answer = _call(target.channel, method, request, target.token())
        check_answer(method, request, answer)
        assert (answer.code, answer.reason) == ("INVALID_ARGUMENT", reason), (method, answer)
        check_nothing_changed(before, target.scene.account_id, f"{method} {answer}")
    metadata = (("authorization", f"Bearer {target.token()}"),)
    with pytest.raises(grpc.RpcError) as refused:
        target.channel.unary_unary(_path("GetTable"))(b"\xff\xff\xff", metadata=metadata)
    malformed = _of_rpc_error(refused.value)
    assert (malformed.code, malformed.reason) == ("INVALID_ARGUMENT", "MALFORMED_REQUEST")


#: A Session that hung did not answer for this long: the test's guard, no speed goal.
HANG_SECONDS = 30.0


def test_a_session_ends_with_the_refusal_of_a_malformed_message(target: Target) -> None:
    """After a good watch request, bytes that are no SessionRequest end the Session with
    INVALID_ARGUMENT (MALFORMED_REQUEST), every time, while the client's side stays open
    (it used to hang now and then: the refusal was raised where nobody waited for it)."""
    watch = pb.SessionRequest(watch=pb.WatchRequest(table_id=target.scene.public_table))
    metadata = (("authorization", f"Bearer {target.token()}"),)
    for _ in range(14):
        done = threading.Event()

        def requests(done: threading.Event = done) -> Iterator[bytes]:
            yield watch.SerializeToString()
            yield b"\xff\xff\xff"
            done.wait(HANG_SECONDS)  # the client never half-closes

        stream = target.channel.stream_stream(_path("Session"))(
            requests(), metadata=metadata, timeout=HANG_SECONDS
        )
        try:
            with pytest.raises(grpc.RpcError) as raised:
                for _response in stream:
                    pass
        finally:
            done.set()
        answer = _of_rpc_error(raised.value)
        assert (answer.code, answer.reason) == ("INVALID_ARGUMENT", "MALFORMED_REQUEST"), answer
