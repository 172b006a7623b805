"""The web edge in docker-compose.yml, deploy/k8s and the image, and its HTTP health probe.

The edge is an HTTP service with its own settings (``president.servicekit.config.web``),
a client of the gateway that holds no secret but its proof to the gateway that it
names each browser's address (``PRESIDENT_EDGE_SECRET``, the gateway's too): every
file must agree on its port,
its probes, the gateway's address and the static folder the image carries.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from president.servicekit import healthcheck
from president.servicekit.config.fields import variables
from president.servicekit.config.web import WebSettings
from tests.support.deployment import (
    CREDENTIALS,
    DOCKERFILE,
    ROOT,
    app_container,
    compose_env,
    compose_services,
    container_env,
    objects,
    pod_spec,
    service_port,
    settings_variables,
    workloads,
)


def web_variables() -> set[str]:
    """The PRESIDENT_* variables the edge reads: the shared Settings and its own."""
    return {variable.name for variable in variables(WebSettings)}


def image_static_dir() -> str:
    found = re.search(r"^COPY web/public (\S+)$", DOCKERFILE.read_text(), re.M)
    assert found, "the Dockerfile must copy web/public into the image"
    return found.group(1)


def test_compose_runs_the_edge_with_its_probe_and_no_secret() -> None:
    spec = compose_services()["web"]
    env = compose_env("web")
    assert spec["command"] == ["python", "-m", "president.services.web.main"]
    port = env["PRESIDENT_WEB_PORT"]
    assert spec["healthcheck"]["test"] == [
        "CMD", "python", "-m", "president.servicekit.healthcheck",
        f"http://127.0.0.1:{port}/readyz",
    ]  # fmt: skip
    assert [str(p).rpartition(":")[2] for p in spec["ports"]] == [port]
    assert env["PRESIDENT_GATEWAY_ADDRESS"] == f"gateway:{service_port('gateway')}"
    assert env["PRESIDENT_WEB_STATIC_DIR"] == image_static_dir()
    assert spec["depends_on"]["gateway"]["condition"] == "service_healthy"
    variables = settings_variables()
    assert not {variables[name] for name in CREDENTIALS} & set(env), "the edge holds no secret"
    assert env["PRESIDENT_EDGE_SECRET"] == compose_env("gateway")["PRESIDENT_EDGE_SECRET"]
    unknown = {name for name in env if name.startswith("PRESIDENT_")} - web_variables()
    assert not unknown, f"web sets {unknown}: no such setting"


def test_kubernetes_runs_the_edge_with_http_probes_and_no_secret() -> None:
    workload = workloads()["web"]
    container = app_container(workload)
    env = container_env(container)
    assert container["command"] == ["python", "-m", "president.services.web.main"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["http"] == int(env["PRESIDENT_WEB_PORT"])
    assert ports["metrics"] == int(env["PRESIDENT_METRICS_PORT"])
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    secrets = [s["secretRef"]["name"] for s in container.get("envFrom", []) if "secretRef" in s]
    assert secrets == ["president-edge"]  # its proof of the browsers' addresses, no other
    gateway = container_env(app_container(workloads()["gateway"]))
    assert env["PRESIDENT_EDGE_SECRET"] == gateway["PRESIDENT_EDGE_SECRET"]
    host, _, port = env["PRESIDENT_GATEWAY_ADDRESS"].rpartition(":")
    assert int(port) in {p["port"] for p in objects("Service")[host]["spec"]["ports"]}
    assert env["PRESIDENT_WEB_STATIC_DIR"] == image_static_dir()
    unknown = {name for name in env if name.startswith("PRESIDENT_")} - web_variables()
    assert not unknown, f"web sets {unknown}: no such setting"
    grace = int(env["PRESIDENT_GRACE_SECONDS"])
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    assert pod_spec(workload)["terminationGracePeriodSeconds"] > grace + pause
    public = objects("Service")["web-public"]["spec"]
    assert public["ports"][0]["targetPort"] == "http"
    assert public["selector"].items() <= workload["spec"]["template"]["metadata"]["labels"].items()


def test_the_image_carries_the_static_site() -> None:
    assert (ROOT / "web/public/index.html").is_file()
    assert f"PRESIDENT_WEB_STATIC_DIR={image_static_dir()}" in DOCKERFILE.read_text()
    assert re.search(r"^EXPOSE .*\b8080\b", DOCKERFILE.read_text(), re.M)


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/readyz" else 503)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_the_http_probe_wants_a_200(http_server: str, tmp_path: Path) -> None:
    assert healthcheck.main([f"{http_server}/readyz"]) == 0
    assert healthcheck.main([f"{http_server}/draining", "--timeout", "2"]) == 1
    assert healthcheck.main(["http://127.0.0.1:9/readyz", "--timeout", "1"]) == 1
    assert healthcheck.main([f"{http_server}/readyz", "extra"]) == 1  # no service name
