"""deploy/k8s: schema-valid, consistent with each other, with compose and with the code."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from tests.support.deployment import (
    APP_SERVICES,
    CREDENTIALS,
    DEPLOY,
    DOCKERFILE,
    IMAGE,
    K8S,
    NAMESPACE,
    app_container,
    compose_env,
    compose_services,
    container_env,
    extra_variables,
    kustomization,
    load_all,
    manifest_files,
    manifests,
    objects,
    pod_spec,
    settings_read_by,
    settings_variables,
    workloads,
)

# The oldest Kubernetes the manifests are for (grpc probes GA in 1.27, the
# StatefulSet pod-index label in 1.28), and the newest schema at hand.
KUBERNETES_VERSIONS = ("1.29.0", "1.37.0")
CLUSTER_SCOPED = {"Namespace"}


def name_of(obj: dict[str, Any]) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def all_containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod_spec(workload)
    return [*spec.get("initContainers", []), *spec["containers"]]


def pod_labels(workload: dict[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def config() -> dict[str, str]:
    data: dict[str, str] = objects("ConfigMap")["president-config"]["data"]
    return data


def service_port(service: str) -> int:
    return int(config()[f"PRESIDENT_{service.upper()}_PORT"])


def test_kustomization_lists_every_manifest() -> None:
    listed = kustomization()["resources"]
    assert len(listed) == len(set(listed))
    assert set(listed) == {path.name for path in manifest_files()}
    assert kustomization()["namespace"] == NAMESPACE
    assert [image["name"] for image in kustomization()["images"]] == [IMAGE]


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_manifests_follow_the_kubernetes_schemas(version: str) -> None:
    for obj in manifests():
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{name_of(obj)} on Kubernetes {version}: {error.message}")
    broken = copy.deepcopy(workloads()["table"])
    app_container(broken)["readinessProbe"]["grpc"]["portt"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, version, strict=True)


def test_kustomize_builds_the_manifests() -> None:
    kubectl = shutil.which("kubectl")
    kustomize = shutil.which("kustomize")
    if kustomize:
        command = [kustomize, "build", str(K8S)]
    elif kubectl:
        command = [kubectl, "kustomize", str(K8S)]
    else:
        pytest.skip("neither kustomize nor kubectl is installed")
    built = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    assert built.returncode == 0, built.stderr
    documents = [doc for doc in yaml.safe_load_all(built.stdout) if doc]
    assert sorted(map(name_of, documents)) == sorted(map(name_of, manifests()))
    for doc in documents:
        for container in (
            doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
        ):
            if container["image"].startswith(IMAGE):
                assert container["image"] == f"{IMAGE}:{kustomization()['images'][0]['newTag']}"


def test_objects_are_unique_and_in_the_namespace() -> None:
    names = [name_of(obj) for obj in manifests()]
    assert len(names) == len(set(names))
    for obj in manifests():
        if obj["kind"] not in CLUSTER_SCOPED:
            assert obj["metadata"].get("namespace") == NAMESPACE, name_of(obj)
    assert objects("Namespace").keys() == {NAMESPACE}


def test_every_service_has_a_workload() -> None:
    assert set(APP_SERVICES) <= set(workloads())
    assert {"postgres", "nats"} <= set(objects("StatefulSet"))
    assert {"dealer", "table", "gateway"} <= set(objects("Deployment"))
    assert "migrate" in objects("Job")


@pytest.mark.parametrize("service", APP_SERVICES)
def test_app_workload_runs_its_module_from_the_one_image(service: str) -> None:
    container = app_container(workloads()[service])
    assert container["image"] == IMAGE
    assert container["command"] == ["python", "-m", f"president.services.{service}.main"]


@pytest.mark.parametrize("service", APP_SERVICES)
def test_grpc_probes_on_the_port_the_container_exposes(service: str) -> None:
    container = app_container(workloads()[service])
    ports = {port["containerPort"] for port in container["ports"]}
    assert service_port(service) in ports
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == service_port(service), probe
    assert container_env(container)[f"PRESIDENT_{service.upper()}_PORT"] == str(
        service_port(service)
    )


def test_every_container_has_resources() -> None:
    for obj in [*workloads().values(), *objects("Job").values()]:
        for container in all_containers(obj):
            resources = container.get("resources", {})
            where = f"{name_of(obj)} {container['name']}"
            assert {"cpu", "memory"} <= set(resources.get("requests", {})), where
            assert "memory" in resources.get("limits", {}), where


def test_every_container_port_is_named_and_unique() -> None:
    for workload in workloads().values():
        for container in all_containers(workload):
            ports = container.get("ports", [])
            assert len({p["containerPort"] for p in ports}) == len(ports)
            assert all("name" in p for p in ports), name_of(workload)


def test_every_service_selects_one_workload_and_its_ports() -> None:
    for service in objects("Service").values():
        selector = service["spec"]["selector"]
        matched = [w for w in workloads().values() if selects(selector, pod_labels(w))]
        assert len(matched) == 1, f"{name_of(service)} selects {[name_of(w) for w in matched]}"
        containers = all_containers(matched[0])
        names = {p["name"] for c in containers for p in c.get("ports", [])}
        numbers = {p["containerPort"] for c in containers for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            assert target in names or target in numbers, f"{name_of(service)} -> {target}"


def test_selectors_match_their_pod_templates() -> None:
    for workload in workloads().values():
        selector = workload["spec"]["selector"]["matchLabels"]
        assert selects(selector, pod_labels(workload)), name_of(workload)
        for other in workloads().values():
            if other is not workload:
                assert not selects(selector, pod_labels(other)), "selectors overlap"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_each_service_gets_the_settings_it_reads(service: str) -> None:
    variables = settings_variables()
    env = container_env(app_container(workloads()[service]))
    missing = {variables[name] for name in settings_read_by(service)} - set(env)
    assert not missing, f"{service} reads {sorted(missing)} but its pod does not set them"
    for name in CREDENTIALS:
        assert (variables[name] in env) == (name in settings_read_by(service)), (
            f"{service} and {variables[name]}"
        )


def test_every_setting_is_configured() -> None:
    configured: set[str] = set()
    for service in APP_SERVICES:
        configured |= set(container_env(app_container(workloads()[service])))
    missing = set(settings_variables().values()) - configured
    assert not missing, f"deploy/k8s does not set {sorted(missing)}"
    known = set(settings_variables().values()) | extra_variables()
    for service in APP_SERVICES:
        env = container_env(app_container(workloads()[service]))
        unknown = {name for name in env if name.startswith("PRESIDENT_")} - known
        assert not unknown, f"{service} sets {unknown}: no such setting"


def test_config_map_is_the_shared_compose_environment() -> None:
    shared = compose_env("timer").keys() & compose_env("gateway").keys()
    compose_shared = {key: compose_env("timer")[key] for key in shared}
    replicas = "PRESIDENT_STREAM_REPLICAS"
    assert {**config(), replicas: ""} == {**compose_shared, replicas: ""}
    # The stream has as many copies as there are NATS servers.
    assert int(config()[replicas]) == objects("StatefulSet")["nats"]["spec"]["replicas"]
    assert (
        compose_shared[replicas] == "1" and "--cluster" not in compose_services()["nats"]["command"]
    )


def test_secrets_agree_with_postgres_and_compose() -> None:
    secrets = {name: obj["stringData"] for name, obj in objects("Secret").items()}
    passwords = secrets["postgres-credentials"]
    script = (DEPLOY / "postgres/init-databases.sh").read_text()
    roles = dict(re.findall(r"CREATE ROLE (\w+) LOGIN PASSWORD :'(\w+)'", script))
    password_variables = dict(re.findall(r"--set=(\w+)=\"\$(\w+)\"", script))
    urls = {}
    for data in secrets.values():
        for key, value in data.items():
            if key.endswith("_DATABASE_URL"):
                urls[key] = urlsplit(value)
    assert len(urls) == 4
    for key, url in urls.items():
        assert url.password == passwords[password_variables[roles[url.username]]], key
        compose_url = urlsplit(compose_env("migrate")[key])
        assert (url.username, url.path, url.port) == (
            compose_url.username,
            compose_url.path,
            compose_url.port,
        )
    for data in secrets.values():
        for value in data.values():
            assert "change-me" in value, "example secrets only: real ones stay out of git"


def test_dealer_secrets_reach_only_the_dealer_and_the_migration() -> None:
    holders = set()
    for obj in [*workloads().values(), *objects("Job").values()]:
        for container in all_containers(obj):
            if "PRESIDENT_DEALER_DATABASE_URL" in container_env(container):
                holders.add(obj["metadata"]["name"])
    assert holders == {"dealer", "migrate"}


def test_migrate_job_is_the_compose_migrate_command() -> None:
    job = objects("Job")["migrate"]
    container = pod_spec(job)["containers"][0]
    assert container["command"] == compose_services()["migrate"]["command"]
    env = container_env(container)
    assert {"PRESIDENT_DATABASE_URL", "PRESIDENT_DEALER_DATABASE_URL"} <= set(env)
    assert "PRESIDENT_SCORING_DATABASE_URL" in env
    assert pod_spec(job)["restartPolicy"] in ("OnFailure", "Never")


def test_table_is_a_scalable_deployment_with_an_autoscaler() -> None:
    table = objects("Deployment")["table"]
    assert table["spec"]["replicas"] > 1
    scalers = [
        hpa
        for hpa in objects("HorizontalPodAutoscaler").values()
        if hpa["spec"]["scaleTargetRef"]
        == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "table"}
    ]
    assert len(scalers) == 1
    spec = scalers[0]["spec"]
    assert 2 <= spec["minReplicas"] <= table["spec"]["replicas"] < spec["maxReplicas"]
    assert spec["metrics"][0]["resource"]["name"] == "cpu"
    container = app_container(table)
    assert "cpu" in container["resources"]["requests"], "CPU utilization needs a CPU request"


def test_several_table_replicas_hold_their_tables_by_lease() -> None:
    """Replicas with leases: one holder a table, the gateway sends it there (issue 27's harness
    runs them so); without leases, replicas would race each other on every table."""
    table = app_container(objects("Deployment")["table"])
    gateway = app_container(objects("Deployment")["gateway"])
    lease = "PRESIDENT_TABLE_LEASE_SECONDS"
    assert float(container_env(table)[lease]) > 0
    assert container_env(gateway)[lease] == container_env(table)[lease]
    entries = {entry["name"]: entry for entry in table["env"]}
    assert entries["PRESIDENT_TABLE_ADVERTISE"]["value"] == "$(POD_IP):50052"
    assert entries["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    names = list(entries)
    assert names.index("POD_IP") < names.index("PRESIDENT_TABLE_ADVERTISE"), "$(POD_IP) unset"
    assert any(port["containerPort"] == 50052 for port in table["ports"])


@pytest.mark.parametrize("service", ["table", "gateway"])
def test_disruption_budgets(service: str) -> None:
    budgets = [
        pdb
        for pdb in objects("PodDisruptionBudget").values()
        if selects(pdb["spec"]["selector"]["matchLabels"], pod_labels(workloads()[service]))
    ]
    assert len(budgets) == 1
    spec = budgets[0]["spec"]
    assert spec.get("maxUnavailable") == 1 or spec.get("minAvailable", 0) >= 1
    assert workloads()[service]["spec"]["replicas"] >= 2, "a budget needs a spare replica"


@pytest.mark.parametrize("service", ["timer", "scoring"])
def test_partitions_follow_the_replicas(service: str) -> None:
    workload = workloads()[service]
    replicas = workload["spec"]["replicas"]
    variable = f"PRESIDENT_{service.upper()}_PARTITION"
    assert variable in settings_variables().values()
    env = {entry["name"]: entry for entry in app_container(workload).get("env", [])}
    if workload["kind"] == "Deployment":
        assert replicas == 1, "replicas of a Deployment have no partition index"
        return
    assert env[variable]["value"] == f"$(POD_INDEX)/{replicas}"
    field = env["POD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert field == "metadata.labels['apps.kubernetes.io/pod-index']"
    names = list(env)
    assert names.index("POD_INDEX") < names.index(variable), "$(POD_INDEX) must come first"
    assert workload["spec"]["serviceName"] in objects("Service")
    assert objects("Service")[workload["spec"]["serviceName"]]["spec"]["clusterIP"] == "None"


def test_graceful_termination_outlasts_the_drain() -> None:
    grace = int(config()["PRESIDENT_GRACE_SECONDS"])
    for service in APP_SERVICES:
        workload = workloads()[service]
        container = app_container(workload)
        pause = 0
        pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {})
        if pre_stop.get("command", [])[:1] == ["sleep"]:
            pause = int(pre_stop["command"][1])
        assert pod_spec(workload)["terminationGracePeriodSeconds"] > grace + pause, service


def test_pods_are_restricted() -> None:
    """What the namespace's "restricted" Pod Security level demands."""
    user = re.findall(r"^USER (\d+)", DOCKERFILE.read_text(), re.M)[-1]
    for obj in [*workloads().values(), *objects("Job").values()]:
        spec = pod_spec(obj)
        security = spec["securityContext"]
        assert security["runAsNonRoot"] is True, name_of(obj)
        assert security["seccompProfile"]["type"] == "RuntimeDefault", name_of(obj)
        assert spec.get("automountServiceAccountToken") is False, name_of(obj)
        for container in all_containers(obj):
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name_of(obj)
            assert context["capabilities"]["drop"] == ["ALL"], name_of(obj)
            if container["image"] == IMAGE:
                assert str(security["runAsUser"]) == user
                assert context["readOnlyRootFilesystem"] is True
                mounts = {m["mountPath"] for m in container["volumeMounts"]}
                assert "/tmp" in mounts
    namespace = objects("Namespace")[NAMESPACE]["metadata"]["labels"]
    assert namespace["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_prometheus_annotations_name_the_metrics_port(service: str) -> None:
    workload = workloads()[service]
    annotations = workload["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    port = int(annotations["prometheus.io/port"])
    container = app_container(workload)
    assert port in {p["containerPort"] for p in container["ports"]}
    assert container_env(container)["PRESIDENT_METRICS_PORT"] == str(port)


def test_prometheus_kubernetes_job_keeps_annotated_pods() -> None:
    job = load_all(DEPLOY / "prometheus/kubernetes.yml")[0]["scrape_configs"][0]
    assert job["kubernetes_sd_configs"][0]["namespaces"]["names"] == [NAMESPACE]
    keep = job["relabel_configs"][0]
    assert keep["action"] == "keep" and keep["regex"] == "true"
    assert keep["source_labels"] == ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"]
    port_rule = next(
        rule for rule in job["relabel_configs"] if rule.get("target_label") == "__address__"
    )
    assert (
        re.sub(
            port_rule["regex"], port_rule["replacement"].replace("$", "\\"), "10.0.0.7:50052;9100"
        )
        == "10.0.0.7:9100"
    )


def test_postgres_init_script_is_the_compose_one() -> None:
    script_path = DEPLOY / "postgres/init-databases.sh"
    data = objects("ConfigMap")["postgres-init"]["data"]
    assert list(data.values()) == [script_path.read_text()]
    assert os.access(script_path, os.X_OK), "the postgres image sources a script it cannot run"
    postgres = objects("StatefulSet")["postgres"]
    volume = next(v for v in pod_spec(postgres)["volumes"] if v.get("configMap"))
    assert volume["configMap"]["name"] == "postgres-init"
    assert volume["configMap"]["defaultMode"] & 0o111
    mounts = app_container(postgres)["volumeMounts"]
    assert any(m["mountPath"] == "/docker-entrypoint-initdb.d" for m in mounts)
    env = container_env(app_container(postgres))
    assert {"EVENTS_DB_PASSWORD", "DEALER_DB_PASSWORD", "SCORING_DB_PASSWORD"} <= set(env)
    assert "volumeClaimTemplates" in postgres["spec"]


def test_nats_is_a_jetstream_cluster() -> None:
    nats = objects("StatefulSet")["nats"]
    conf = objects("ConfigMap")["nats-config"]["data"]["nats.conf"]
    assert re.search(r"^jetstream \{", conf, re.M)
    routes = re.findall(r"nats://(nats-\d+)\.(\S+):6222", conf)
    replicas = nats["spec"]["replicas"]
    assert [name for name, _ in routes] == [f"nats-{i}" for i in range(replicas)]
    assert {service for _, service in routes} == {nats["spec"]["serviceName"]}
    headless = objects("Service")[nats["spec"]["serviceName"]]["spec"]
    assert headless["clusterIP"] == "None" and headless["publishNotReadyAddresses"] is True
    assert replicas in (1, 3, 5), "JetStream needs an odd number of servers"
    assert config()["PRESIDENT_NATS_URL"] == "nats://nats:4222"
    store = re.search(r"store_dir: (\S+)", conf)
    assert store is not None
    mounts = {m["name"]: m["mountPath"] for m in app_container(nats)["volumeMounts"]}
    assert mounts["data"] == store.group(1)
    assert [t["metadata"]["name"] for t in nats["spec"]["volumeClaimTemplates"]] == ["data"]


def test_gateway_and_web_edge_are_public_and_nothing_else_is() -> None:
    exposed = {
        obj["metadata"]["name"]
        for obj in objects("Service").values()
        if obj["spec"].get("type") in ("LoadBalancer", "NodePort")
    }
    assert exposed == {"gateway-public", "web-public"}
    public = objects("Service")["gateway-public"]["spec"]
    assert public["ports"][0]["port"] == service_port("gateway")
    assert selects(public["selector"], pod_labels(workloads()["gateway"]))


def test_addresses_name_services_that_exist() -> None:
    for key, value in config().items():
        if key.endswith("_ADDRESS"):
            host, _, port = value.rpartition(":")
            service = objects("Service")[host]
            assert int(port) in {p["port"] for p in service["spec"]["ports"]}, key
    for url in [config()["PRESIDENT_NATS_URL"]]:
        parsed = urlsplit(url)
        assert parsed.port in {
            p["port"] for p in objects("Service")[parsed.hostname]["spec"]["ports"]
        }


def test_every_manifest_file_is_yaml_of_kubernetes_objects() -> None:
    for path in manifest_files():
        for doc in load_all(path):
            assert {"apiVersion", "kind", "metadata"} <= set(doc), path.name
