"""The operations kit: the alert rules pass ``promtool check rules`` and their unit tests
(``promtool test rules``), each alert has its runbook, and every metric an alert or a
dashboard panel reads is one the services really expose on ``/metrics`` of a running
stack, so a renamed metric fails here instead of silencing an alert. A refusal by the
gateway's limits is counted under the code RateLimitRefusalsSurging reads.

promtool comes from ``make promtool`` (a prerequisite of ``make unit``, so of ``make test``),
which unpacks it from Debian's ``prometheus`` package into the venv."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from president.gateway.v1 import gateway_pb2 as gpb
from president.gateway.v1 import gateway_pb2_grpc
from president.servicekit.launcher import Stack
from tests.support.servers import isolated_env, sqlite_stack_in

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy/prometheus/alerts.yml"
RULE_TESTS = ROOT / "deploy/prometheus/alerts.test.yml"
DASHBOARD = ROOT / "deploy/grafana/president.json"
RUNBOOKS = ROOT / "docs/operations.md"
#: Series Prometheus makes itself, not the services.
PROMETHEUS_OWN = {"up"}
#: Every sample name of each family type (prometheus_client's text format).
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("_sum", "_count", "_created", ""),
    "gauge": ("",),
    "info": ("_info",),
}
PROMQL_WORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "bool", "offset"}


def promtool() -> str:
    """The promtool beside this Python (make promtool), or one on the PATH."""
    beside = Path(sys.executable).parent / "promtool"
    found = str(beside) if beside.exists() else shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: run `make promtool` (Debian's prometheus package)")
    return found


def run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )


def alert_rules() -> list[dict[str, object]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", [])]


def metric_names(expression: str) -> set[str]:
    """The metric names a PromQL expression reads: what is left once strings, label
    matchers, ranges, grouping clauses, functions, keywords and numbers are taken out."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*", text):
        word = match.group(0)
        rest = text[match.end() :].lstrip()
        if word in PROMQL_WORDS or rest.startswith("(") or re.fullmatch(r"[eE]\d*", word):
            continue
        names.add(word)
    return names


def test_the_rules_pass_promtool_check() -> None:
    checked = run_promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in checked.stdout


def test_the_rules_pass_their_unit_tests() -> None:
    tested = run_promtool("test", "rules", str(RULE_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    tested_alerts = {
        case["alertname"]
        for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    assert tested_alerts == {rule["alert"] for rule in alert_rules()}  # each one seen firing


def test_the_compose_prometheus_config_loads_the_rules() -> None:
    checked = run_promtool("check", "config", "deploy/prometheus/prometheus.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 1 rule files found" in checked.stdout


def test_every_alert_has_a_runbook_section() -> None:
    headings = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in RUNBOOKS.read_text().splitlines()
        if line.startswith("#")
    }
    for rule in alert_rules():
        annotations = rule["annotations"]
        assert isinstance(annotations, dict)
        page, _, anchor = str(annotations["runbook"]).partition("#")
        assert page == "docs/operations.md" and anchor == str(rule["alert"]).lower()
        assert anchor in headings, f"docs/operations.md has no section for {rule['alert']}"


def test_the_dashboard_shows_every_signal_the_alerts_watch() -> None:
    alerted = set().union(*(metric_names(str(rule["expr"])) for rule in alert_rules()))
    shown = set().union(*(metric_names(expression) for expression in dashboard_expressions()))
    assert alerted <= shown, f"on no panel: {sorted(alerted - shown)}"


def test_metric_names_are_read_from_promql() -> None:
    expression = (
        'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{service="x", '
        'method=~"Play|by"}[5m]))) > 0.5 and on() max(b_gauge) / sum(c_total offset 1m) > 1e3'
    )
    assert metric_names(expression) == {"a_seconds_bucket", "b_gauge", "c_total"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    """The seven services, the gateway letting two reads a minute through from an address."""
    workdir = tmp_path_factory.mktemp("opskit")
    env = {**isolated_env(), "PRESIDENT_RATE_READ_PEER": "2/60", "PRESIDENT_LIMITS_SCALE": "1"}
    with sqlite_stack_in(workdir, nats_url, env) as running:
        yield running


@pytest.fixture(scope="module")
def exposed(stack: Stack) -> set[str]:
    """Every sample name the seven services expose on /metrics (families without samples yet
    included)."""
    return scrape(stack)


def metrics_text(stack: Stack, process: str) -> str:
    port = stack.metrics_ports[process]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
        return page.read().decode()


def scrape(stack: Stack) -> set[str]:
    names: set[str] = set()
    for process in stack.metrics_ports:
        if process not in stack.processes:
            continue
        text = metrics_text(stack, process)
        for family in text_string_to_metric_families(text):
            names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
            names.update(sample.name for sample in family.samples)
    return names


def test_every_metric_an_alert_reads_is_exposed(exposed: set[str]) -> None:
    for rule in alert_rules():
        missing = metric_names(str(rule["expr"])) - exposed - PROMETHEUS_OWN
        assert not missing, f"{rule['alert']} reads metrics no service exposes: {missing}"


def test_every_metric_a_dashboard_panel_reads_is_exposed(exposed: set[str]) -> None:
    for expression in dashboard_expressions():
        missing = metric_names(expression) - exposed - PROMETHEUS_OWN
        assert not missing, f"a panel reads metrics no service exposes: {missing}: {expression}"


def test_a_refusal_by_the_limits_is_counted_as_the_refusals_alert_reads_it(stack: Stack) -> None:
    with grpc.insecure_channel(stack.gateway) as channel:
        gateway = gateway_pb2_grpc.GatewayServiceStub(channel)
        for _ in range(2):
            gateway.ListTables(gpb.ListTablesRequest(), timeout=10)
        with pytest.raises(grpc.RpcError) as refused:
            gateway.ListTables(gpb.ListTablesRequest(), timeout=10)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # The interceptor counts a call once its answer has gone out, so the
    # client may read the page a moment before the refusal is counted.
    deadline = time.monotonic() + 10
    while (counted := listed_tables_by_code(stack)).get("RESOURCE_EXHAUSTED") is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert counted == {"OK": 2.0, "RESOURCE_EXHAUSTED": 1.0}


def listed_tables_by_code(stack: Stack) -> dict[str, float]:
    """The gateway's count of ListTables calls, by status code."""
    return {
        sample.labels["code"]: sample.value
        for family in text_string_to_metric_families(metrics_text(stack, "gateway"))
        for sample in family.samples
        if sample.name == "president_grpc_requests_total"
        and sample.labels["service"] == "gateway"
        and sample.labels["method"] == "ListTables"
    }
