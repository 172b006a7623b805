"""docker-compose.yml, the Dockerfile and the Prometheus config, checked without Docker."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest

from tests.support.deployment import (
    APP_SERVICES,
    COMPOSE_FILE,
    CREDENTIALS,
    DEPLOY,
    DOCKERFILE,
    EDGE_SERVICES,
    PROBE_MODULE,
    ROOT,
    compose,
    compose_env,
    compose_raw,
    compose_services,
    extra_variables,
    interpolate,
    load_all,
    service_port,
    settings_read_by,
    settings_variables,
    yaml_files,
)

INFRASTRUCTURE = ("postgres", "nats", "prometheus", "migrate", "operator-key")
#: One-shot steps: the services that need them wait until they have finished.
ONE_SHOT = ("migrate", "operator-key")
DATABASE_URLS = (
    "PRESIDENT_DATABASE_URL",
    "PRESIDENT_DEALER_DATABASE_URL",
    "PRESIDENT_SCORING_DATABASE_URL",
    "PRESIDENT_PLAYERS_DATABASE_URL",
)


def duration_seconds(text: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"bad duration {text!r}"
    return sum(float(number) * units[unit] for number, unit in parts)


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_parses(path: Path) -> None:
    documents = load_all(path)
    assert documents, f"{path} has no document"
    assert all(isinstance(doc, dict) for doc in documents)


def test_interpolation_follows_compose() -> None:
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate("${SET:-d}/${EMPTY:-d}/${EMPTY-d}/${NONE-d}/$$SET/$SET", env) == (
        "x/d//d/$SET/x"
    )
    with pytest.raises(ValueError, match="NONE is required"):
        interpolate("${NONE:?give it}", env)


@pytest.mark.parametrize("document", ["raw", "interpolated"])
def test_compose_file_follows_the_compose_specification(document: str) -> None:
    schema_file = resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema = json.loads(schema_file.read_text())
    instance = compose_raw() if document == "raw" else compose()
    jsonschema.validate(instance, schema, cls=jsonschema.Draft202012Validator)
    broken = {**instance, "services": {**instance["services"], "table": {"replicas": 3}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema, cls=jsonschema.Draft202012Validator)


def test_compose_has_every_service() -> None:
    assert set(compose_services()) == {*INFRASTRUCTURE, *APP_SERVICES, *EDGE_SERVICES}


@pytest.mark.parametrize("service", APP_SERVICES)
def test_app_service_runs_its_module_from_the_one_image(service: str) -> None:
    spec = compose_services()[service]
    assert spec["command"] == ["python", "-m", f"president.services.{service}.main"]
    assert importlib.util.find_spec(f"president.services.{service}.main") is not None
    migrate = compose_services()["migrate"]
    assert spec["image"] == migrate["image"] and spec["build"] == migrate["build"]
    assert spec["restart"] in ("unless-stopped", "always", "on-failure")


def test_build_context_and_dockerfile_exist() -> None:
    build = compose_services()["migrate"]["build"]
    context = (COMPOSE_FILE.parent / build["context"]).resolve()
    assert context.is_dir()
    assert (context / build["dockerfile"]).resolve() == DOCKERFILE
    assert (context / "pyproject.toml").is_file()


def test_dockerfile_builds_one_non_root_image_of_the_project() -> None:
    text = DOCKERFILE.read_text()
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text
    assert re.search(r"^FROM \$\{PYTHON_IMAGE\}$", text, re.M), "the final stage is python slim"
    assert re.search(r"pip install \.(\s|$)", text)
    users = re.findall(r"^USER (\S+)$", text, re.M)
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert users[-1].split(":")[0].isdigit(), "numeric, so runAsNonRoot can check it"
    copied = re.findall(r"^COPY (?!--from)(\S+) ", text, re.M)
    assert set(copied) == {"pyproject.toml", "libs", "gen", "clients/python", "web/public"}
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", ".git", "var", "tests"} <= ignored
    assert not set(copied) & ignored, "the Dockerfile copies something .dockerignore drops"
    assert 'CMD ["python", "-m", "president.services.' in text


def test_the_image_installs_every_package_the_services_import() -> None:
    """``pip install .`` ships both roots of the ``president`` namespace, and every folder of
    code below it is a package (hatchling copies files; a folder without ``__init__.py``
    would import only as a namespace of its own)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert set(wheel["only-include"]) == {"libs/president", "gen/python/president"}
    found: set[str] = set()
    for base in (ROOT / "libs", ROOT / "gen" / "python"):
        top = base / "president"
        assert not (top / "__init__.py").exists(), f"{top} must stay a namespace package"
        for folder in (p for p in top.rglob("*") if p.is_dir() and p.name != "__pycache__"):
            if any(folder.glob("*.py")):
                package = ".".join(folder.relative_to(base).parts)
                assert (folder / "__init__.py").exists(), f"{folder} has modules but no __init__.py"
                found.add(package)
    assert {"president.servicekit", "president.store.migrations.versions"} <= found
    assert {"president.events.v1", "president.gateway.v1"} <= found
    assert {f"president.services.{name}" for name in APP_SERVICES} <= found


@pytest.mark.parametrize("service", APP_SERVICES)
def test_app_healthcheck_asks_the_grpc_health_service_on_its_port(service: str) -> None:
    check = compose_services()[service]["healthcheck"]
    port = service_port(service)
    assert check["test"] == ["CMD", "python", "-m", PROBE_MODULE, f"127.0.0.1:{port}"]
    assert duration_seconds(check["timeout"]) >= 3, "the probe's own deadline is 3 s"
    assert duration_seconds(check["interval"]) >= duration_seconds(check["timeout"])
    assert int(check["retries"]) >= 2 and "start_period" in check


def test_infrastructure_health_checks() -> None:
    services = compose_services()
    postgres = services["postgres"]["healthcheck"]["test"]
    assert postgres[:2] == ["CMD", "pg_isready"] and "127.0.0.1" in postgres
    nats = services["nats"]
    assert "http://127.0.0.1:8222/healthz" in nats["healthcheck"]["test"]
    command = nats["command"]
    assert "-js" in command and command[command.index("-m") + 1] == "8222"
    store = command[command.index("-sd") + 1]
    assert any(volume.endswith(f":{store}") for volume in nats["volumes"])
    assert "/-/healthy" in " ".join(services["prometheus"]["healthcheck"]["test"])


def test_published_ports_do_not_collide() -> None:
    published: dict[str, str] = {}
    for name, spec in compose_services().items():
        for port in spec.get("ports", []):
            host, _, target = str(port).rpartition(":")
            assert host, f"{name} publishes {port} on a random port: name the host port"
            assert host not in published, f"{name} and {published.get(host)} both publish {host}"
            published[host] = name
            if name == "gateway":
                assert target == str(service_port("gateway"))
    assert published["50051"] == "gateway"
    assert {"postgres", "nats"}.isdisjoint(published.values()), "keep the stores private"


def test_every_container_listens_on_its_own_ports() -> None:
    ports = {service: service_port(service) for service in APP_SERVICES}
    assert len(set(ports.values())) == len(ports)
    metrics = {int(compose_env(service)["PRESIDENT_METRICS_PORT"]) for service in APP_SERVICES}
    assert len(metrics) == 1 and metrics.isdisjoint(ports.values())


def test_every_variable_is_a_known_setting() -> None:
    """A typo in a variable name would silently leave the default in force."""
    known = set(settings_variables().values()) | extra_variables()
    for service in (*APP_SERVICES, "migrate"):
        unknown = {name for name in compose_env(service) if name.startswith("PRESIDENT_")} - known
        assert not unknown, f"{service} sets {unknown}: no such setting"


def test_every_setting_is_configured() -> None:
    """A new field of Settings breaks this test until the deployment decides its value."""
    configured = set()
    for service in APP_SERVICES:
        configured |= set(compose_env(service))
    missing = set(settings_variables().values()) - configured
    assert not missing, f"docker-compose.yml does not set {sorted(missing)}"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_each_service_gets_the_settings_it_reads(service: str) -> None:
    variables = settings_variables()
    env = compose_env(service)
    read = settings_read_by(service)
    assert f"{service}_port" in read, "the scan of the code found nothing"
    missing = {variables[name] for name in read} - set(env)
    assert not missing, (
        f"{service} reads {sorted(missing)} but docker-compose.yml does not set them"
    )
    assert env["PRESIDENT_HOST"] == "0.0.0.0"
    for name in read:
        if name.endswith("_address"):
            target = name.removesuffix("_address")
            assert env[variables[name]] == f"{target}:{service_port(target)}"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_credentials_only_where_they_are_read(service: str) -> None:
    variables = settings_variables()
    read = settings_read_by(service)
    env = compose_env(service)
    for name in CREDENTIALS:
        assert (variables[name] in env) == (name in read), (
            f"{service} {'needs' if name in read else 'must not get'} {variables[name]}"
        )


def test_dealer_secrets_live_in_their_own_database() -> None:
    urls = {name: urlsplit(compose_env("migrate")[name]) for name in DATABASE_URLS}
    databases = {url.path for url in urls.values()}
    users = {url.username for url in urls.values()}
    assert len(databases) == len(DATABASE_URLS) and len(users) == len(DATABASE_URLS)
    assert (
        compose_env("dealer")["PRESIDENT_DEALER_DATABASE_URL"]
        == (compose_env("migrate")["PRESIDENT_DEALER_DATABASE_URL"])
    )


def test_database_urls_match_the_roles_the_init_script_creates() -> None:
    script = (DEPLOY / "postgres/init-databases.sh").read_text()
    roles = dict(re.findall(r"CREATE ROLE (\w+) LOGIN PASSWORD :'(\w+)'", script))
    owners = dict(re.findall(r"CREATE DATABASE (\w+) OWNER (\w+);", script))
    password_variables = dict(re.findall(r"--set=(\w+)=\"\$(\w+)\"", script))
    postgres_env = compose_env("postgres")
    mounted = [v for v in compose_services()["postgres"]["volumes"] if "init-databases" in v]
    assert mounted and mounted[0].startswith("./deploy/postgres/init-databases.sh:")
    for name in DATABASE_URLS:
        url = urlsplit(compose_env("migrate")[name])
        database = url.path.lstrip("/")
        assert url.hostname == "postgres" and url.port == 5432
        assert owners[database] == url.username, f"{name}: the user must own {database}"
        variable = password_variables[roles[url.username]]
        assert url.password == postgres_env[variable], f"{name}: password differs from {variable}"
    assert "POSTGRES_DB" not in postgres_env, "the init script creates the databases"


def test_depends_on_waits_for_the_right_conditions() -> None:
    services = compose_services()
    graph: dict[str, set[str]] = {}
    for name, spec in services.items():
        depends = spec.get("depends_on", {})
        assert isinstance(depends, dict), f"{name}: give depends_on conditions"
        graph[name] = set(depends)
        for target, rule in depends.items():
            assert target in services
            condition = rule["condition"]
            if target in ONE_SHOT:
                assert condition == "service_completed_successfully"
            else:
                assert condition == "service_healthy" and "healthcheck" in services[target]
    for name in APP_SERVICES:
        assert graph[name], f"{name} starts before what it needs"
    assert "migrate" in graph["table"] and "postgres" in graph["migrate"]

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"dependency cycle {path + (name,)}"
        for target in graph[name]:
            visit(target, (*path, name))

    for name in services:
        visit(name, ())


def test_graceful_stop_outlasts_the_drain() -> None:
    for service in APP_SERVICES:
        grace = int(compose_env(service)["PRESIDENT_GRACE_SECONDS"])
        assert duration_seconds(compose_services()[service]["stop_grace_period"]) > grace


def test_table_service_can_scale() -> None:
    table = compose_services()["table"]
    assert "ports" not in table and "container_name" not in table, "a scaled service cannot"
    assert int(table["deploy"]["replicas"]) >= 1
    assert "--scale table=" in (DEPLOY / "README.md").read_text()


def test_migrate_job_runs_the_store_migrations(tmp_path: Path) -> None:
    """The compose command itself, against SQLite files instead of PostgreSQL."""
    command = compose_services()["migrate"]["command"]
    assert command[:2] == ["python", "-c"]
    env = {**os.environ}
    for name in DATABASE_URLS:
        env[name] = f"sqlite:///{tmp_path / (name.lower() + '.db')}"
    done = subprocess.run(
        [sys.executable, "-c", command[2]],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[: len(DATABASE_URLS)] == [
        f"migrated {name}" for name in DATABASE_URLS
    ]
    assert all((tmp_path / (name.lower() + ".db")).stat().st_size > 0 for name in DATABASE_URLS)


def test_prometheus_scrapes_every_service() -> None:
    config = load_all(DEPLOY / "prometheus/prometheus.yml")[0]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    for service in APP_SERVICES:
        port = int(compose_env(service)["PRESIDENT_METRICS_PORT"])
        discovery = jobs[service]["dns_sd_configs"][0]
        assert discovery["names"] == [service] and discovery["port"] == port
    volumes = compose_services()["prometheus"]["volumes"]
    assert "./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro" in volumes


def test_env_example_names_every_compose_variable() -> None:
    used = set(re.findall(r"\$\{([A-Z_]+)", COMPOSE_FILE.read_text()))
    example = (DEPLOY / "env.example").read_text()
    listed = set(re.findall(r"^#? ?([A-Z_]+)=", example, re.M))
    assert used == listed, f"env.example differs: {sorted(used ^ listed)}"


def test_readme_documents_every_variable_and_the_commands() -> None:
    # Every variable is documented on the reference page generated from the code (its
    # test checks the page is current); deploy/README.md keeps the operators' prose.
    reference = (ROOT / "docs" / "settings.md").read_text()
    for variable in sorted(set(settings_variables().values()) | extra_variables()):
        assert f"`{variable}`" in reference, f"docs/settings.md does not document {variable}"
    readme = (DEPLOY / "README.md").read_text()
    for command in ("docker compose up --build", "kubectl apply -k deploy/k8s", "localhost:50051"):
        assert command in readme
