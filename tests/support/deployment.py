"""Reading the deployment files the way Docker Compose and Kubernetes read them.

No Docker engine or cluster runs here, so the tests parse docker-compose.yml
and deploy/ and check them against each other and against the code:
which settings each service reads, which ports it listens on.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from president.servicekit.config import Settings
from president.servicekit.config.reference import every_variable
from president.servicekit.launcher import EDGE, SERVICES

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = ROOT / "Dockerfile"
APP_SERVICES = tuple(sorted(SERVICES))
#: The web edge: an HTTP service (its own probes and settings), checked in test_web_deploy.
EDGE_SERVICES = (EDGE,)
NAMESPACE = "president"
IMAGE = "president-table"
PROBE_MODULE = "president.servicekit.healthcheck"

# Settings that carry credentials: a service gets one only if it reads it.
CREDENTIALS = (
    "database_url",
    "dealer_database_url",
    "scoring_database_url",
    "players_database_url",
    "token_secret",
)


# --- YAML -------------------------------------------------------------------


def yaml_files() -> list[Path]:
    """Every YAML file of the deployment."""
    found = sorted(DEPLOY.rglob("*.yaml")) + sorted(DEPLOY.rglob("*.yml"))
    return [COMPOSE_FILE, *found]


def load_all(path: Path) -> list[Any]:
    """The documents of a YAML file (merge keys resolved), empty ones dropped."""
    with path.open() as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


# --- docker compose ---------------------------------------------------------

_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}|(?P<named>[A-Za-z_][A-Za-z0-9_]*))"
)


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's variable substitution (``${X}``, ``${X:-default}``, ``${X:?error}``, ``$$``)."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match.group("escaped"):
            return "$"
        name = match.group("braced") or match.group("named")
        op, arg = match.group("op"), match.group("arg") or ""
        current = env.get(name)
        missing = current is None or (current == "" and op is not None and op.startswith(":"))
        if op in ("-", ":-"):
            return arg if missing else str(current)
        if op in ("?", ":?"):
            if missing:
                raise ValueError(f"{name} is required: {arg}")
            return str(current)
        return "" if current is None else current

    return _VARIABLE.sub(substitute, value)


@cache
def compose_raw() -> dict[str, Any]:
    """docker-compose.yml as written (anchors and merge keys resolved, no substitution)."""
    docs = load_all(COMPOSE_FILE)
    assert len(docs) == 1
    document: dict[str, Any] = docs[0]
    return document


@cache
def compose() -> dict[str, Any]:
    """docker-compose.yml as ``docker compose config`` sees it with no .env: the defaults."""
    result: dict[str, Any] = interpolate(compose_raw(), {})
    return result


def compose_services() -> dict[str, Any]:
    services: dict[str, Any] = compose()["services"]
    return services


def compose_env(service: str) -> dict[str, str]:
    """A compose service's environment as a mapping."""
    environment = compose_services()[service].get("environment", {})
    if isinstance(environment, list):
        pairs = (item.partition("=") for item in environment)
        return {key: value for key, _, value in pairs}
    return {key: "" if value is None else str(value) for key, value in environment.items()}


# --- Kubernetes -------------------------------------------------------------


@cache
def kustomization() -> dict[str, Any]:
    document: dict[str, Any] = load_all(K8S / "kustomization.yaml")[0]
    return document


def manifest_files() -> list[Path]:
    return sorted(p for p in K8S.glob("*.y*ml") if p.name != "kustomization.yaml")


@cache
def manifests() -> tuple[dict[str, Any], ...]:
    """Every Kubernetes object of the kustomization, in the order it lists them."""
    objects: list[dict[str, Any]] = []
    for name in kustomization()["resources"]:
        objects.extend(load_all(K8S / name))
    return tuple(objects)


def objects(kind: str) -> dict[str, dict[str, Any]]:
    """The objects of a kind, by name."""
    return {obj["metadata"]["name"]: obj for obj in manifests() if obj["kind"] == kind}


def workloads() -> dict[str, dict[str, Any]]:
    """Deployments and StatefulSets by name."""
    return {**objects("Deployment"), **objects("StatefulSet")}


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def app_container(workload: dict[str, Any]) -> dict[str, Any]:
    """The container of a President service's pod (the one named like the workload)."""
    name = workload["metadata"]["name"]
    containers = {c["name"]: c for c in pod_spec(workload)["containers"]}
    return containers[name]


def container_env(container: dict[str, Any]) -> dict[str, str]:
    """A container's environment: envFrom ConfigMaps and Secrets, then env entries."""
    env: dict[str, str] = {}
    config_maps, secrets = objects("ConfigMap"), objects("Secret")
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(config_maps[source["configMapRef"]["name"]]["data"])
        if "secretRef" in source:
            env.update(secrets[source["secretRef"]["name"]]["stringData"])
    for entry in container.get("env", []):
        env[entry["name"]] = str(entry.get("value", "<from valueFrom>"))
    return env


# --- Settings and the code that reads them ----------------------------------


@cache
def settings_variables() -> dict[str, str]:
    """Each Settings field and the environment variable it is read from."""
    return {
        item.name: item.metadata["variable"]
        for item in fields(Settings)
        if "variable" in item.metadata
    }


def _python_files(service: str) -> Iterator[Path]:
    yield from sorted((ROOT / "libs/president/services" / service).rglob("*.py"))


_ATTRIBUTE = re.compile(r"\bsettings\.([a-z_]+)")
_ADDRESS = re.compile(r"\bsettings\.address\(\s*[\"']([a-z]+)[\"']\s*\)")


def settings_read_by(service: str) -> set[str]:
    """The Settings fields a service's code reads (its package, plus the server runner)."""
    known = set(settings_variables())
    sources = [path.read_text() for path in _python_files(service)]
    sources.append((ROOT / "libs/president/servicekit/server.py").read_text())
    used: set[str] = set()
    for source in sources:
        for attribute in _ATTRIBUTE.findall(source):
            if attribute in known:
                used.add(attribute)
            elif isinstance(getattr(Settings, attribute, None), property):
                used |= _property_reads(attribute)
        for other in _ADDRESS.findall(source):
            explicit = f"{other}_address"
            used.add(explicit if explicit in known else f"{other}_port")
            if explicit not in known:
                used.add("host")
    return used


def _property_reads(name: str) -> set[str]:
    """The fields a property of Settings reads (``settings.subjects``: the stream's)."""
    getter = getattr(Settings, name).fget
    return set(re.findall(r"\bself\.([a-z_]+)", inspect.getsource(getter))) & set(
        settings_variables()
    )


def extra_variables() -> set[str]:
    """PRESIDENT_* variables read beyond Settings' own fields: a service's own settings, TLS,
    the tools' (every one on the generated reference page)."""
    return {variable.name for _, variable in every_variable()} - set(settings_variables().values())


def service_port(service: str) -> int:
    """The gRPC port of a service as the shared compose environment sets it."""
    return int(compose_env(service)[f"PRESIDENT_{service.upper()}_PORT"])
