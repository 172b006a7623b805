"""The operator's signing key in every deploy form: the table service gets the key file
(read-only, and no other service does), the gateway its public key, and the key command
the files and the docs name makes a key whose signatures the published key verifies."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from typer.testing import CliRunner

from president.cli.main import app
from president.hosting.signatures import OperatorKeys, Signer, receipt_bytes
from president.servicekit.config.fields import public_keys
from president.servicekit.config.gateway import GatewaySettings
from president.servicekit.config.table import TableSettings
from president.services.table.bootstrap import operator_signer
from tests.support.deployment import (
    DEPLOY,
    DOCKERFILE,
    ROOT,
    app_container,
    compose_env,
    compose_raw,
    compose_services,
    container_env,
    interpolate,
    objects,
    pod_spec,
    workloads,
)

MAKER = "operator-key"
VARIABLE = "PRESIDENT_OPERATOR_KEYS"


def env_of(spec: dict[str, Any]) -> dict[str, str]:
    return {key: str(value) for key, value in spec.get("environment", {}).items()}


def compose_with(env: dict[str, str]) -> dict[str, Any]:
    """The compose services as ``docker compose`` sees them with this ``.env``."""
    services: dict[str, Any] = interpolate(compose_raw(), env)["services"]
    return services


def mounted_at(spec: dict[str, Any], directory: str) -> tuple[str, str] | None:
    """The named volume a compose service mounts at ``directory``, and its mode."""
    for volume in spec.get("volumes", []):
        source, target, *mode = str(volume).split(":")
        if target == directory:
            return source, (mode or ["rw"])[0]
    return None


def published_line(output: str) -> str:
    (line,) = [line for line in output.splitlines() if line.startswith(f"{VARIABLE}=")]
    return line.removeprefix(f"{VARIABLE}=")


def signs_for(key_file: Path, published: str) -> bool:
    """Whether the table service's signer, read from ``key_file``, makes receipts that the
    keys a gateway publishes from ``published`` verify."""
    signer = operator_signer(str(key_file))
    assert signer is not None
    signature = signer.sign_receipt("table-t", 7, "ab" * 32)
    keys = OperatorKeys.from_hex(public_keys(VARIABLE, published))
    return keys.signed(
        receipt_bytes("table-t", 7, "ab" * 32), signature.key_id, signature.signature
    )


# --- docker compose ------------------------------------------------------------


@pytest.mark.parametrize("file_name", [None, "operator-key-2.pem"])
def test_compose_table_reads_the_key_file_the_one_shot_step_makes(file_name: str | None) -> None:
    services = compose_with({"OPERATOR_KEY_FILE": file_name} if file_name else {})
    key_file = TableSettings.from_env(env_of(services["table"])).signing_key_file
    assert key_file, "the table service would run unsigned"
    directory = str(PurePosixPath(key_file).parent)
    maker = services[MAKER]
    assert maker["command"][:3] == ["president", "operator-key", key_file]
    assert mounted_at(maker, directory) == (MAKER, "rw")
    assert mounted_at(services["table"], directory) == (MAKER, "ro")
    assert MAKER in compose_raw()["volumes"], "a named volume: the key outlives the containers"
    condition = services["table"]["depends_on"][MAKER]["condition"]
    assert condition == "service_completed_successfully"
    assert maker["restart"] == "no" and maker["image"] == services["table"]["image"]
    # The image's folder there belongs to the service user: a new volume starts as it.
    assert re.search(
        rf"install -d -m 0700 -o president -g president {directory}\n", DOCKERFILE.read_text()
    )
    if file_name:
        assert key_file.endswith(f"/{file_name}")


def test_compose_private_key_reaches_the_table_service_only() -> None:
    for name, spec in compose_services().items():
        holds = any(str(v).split(":")[0] == MAKER for v in spec.get("volumes", []))
        assert holds == (name in (MAKER, "table")), name
        assert ("PRESIDENT_SIGNING_KEY_FILE" in compose_env(name)) == (name == "table"), name


def test_compose_one_shot_step_gives_the_gateway_the_key_the_table_signs_with(
    tmp_path: Path,
) -> None:
    """The step's own command, run for real (its volume is a folder here), then its line
    put in .env: the gateway publishes the key the table signs with; a rerun keeps the key,
    and a rotation lists the new key first and the old one after it."""
    keys = tmp_path / "keys"
    runner = CliRunner()

    def step(env: dict[str, str]) -> tuple[str, Path, str]:
        services = compose_with(env)
        key_file = PurePosixPath(TableSettings.from_env(env_of(services["table"])).signing_key_file)
        local = keys / key_file.name
        command = [
            str(local) if part == str(key_file) else part for part in services[MAKER]["command"]
        ]
        done = runner.invoke(app, command[1:])
        assert done.exit_code == 0, done.output
        line = published_line(done.stdout)
        gateway = GatewaySettings.from_env(env_of(compose_with({**env, VARIABLE: line})["gateway"]))
        assert gateway.operator_keys == tuple(line.split(","))
        assert signs_for(local, ",".join(gateway.operator_keys))
        return line, local, done.stderr

    first, key_file, _ = step({})
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert step({VARIABLE: first})[0] == first, "a rerun must keep the key"
    rotated, new_file, warning = step({VARIABLE: first, "OPERATOR_KEY_FILE": "operator-key-2.pem"})
    assert new_file != key_file and rotated.split(",")[1:] == [first]
    assert "do not publish this key first yet" in warning
    assert not signs_for(key_file, rotated.split(",")[0])


# --- Kubernetes ------------------------------------------------------------------


def test_k8s_table_mounts_the_key_secret_read_only() -> None:
    table = workloads()["table"]
    container = app_container(table)
    key_file = container_env(container)["PRESIDENT_SIGNING_KEY_FILE"]
    mount = next(m for m in container["volumeMounts"] if key_file.startswith(m["mountPath"] + "/"))
    assert mount["readOnly"] is True
    volume = next(v for v in pod_spec(table)["volumes"] if v["name"] == mount["name"])
    secret = objects("Secret")[volume["secret"]["secretName"]]
    assert key_file.removeprefix(mount["mountPath"] + "/") in secret["stringData"]
    # The service user reads it through the pod's group, nobody else can.
    security = pod_spec(table)["securityContext"]
    assert security["fsGroup"] == security["runAsGroup"]
    assert volume["secret"]["defaultMode"] & 0o777 == 0o440
    for name, workload in [*workloads().items(), *objects("Job").items()]:
        if name != "table":
            volumes = pod_spec(workload).get("volumes", [])
            assert all(
                v.get("secret", {}).get("secretName") != secret["metadata"]["name"] for v in volumes
            ), f"{name} must not hold the operator's private key"


def test_k8s_gateway_publishes_the_key_from_its_config() -> None:
    gateway = container_env(app_container(workloads()["gateway"]))
    source = next(
        s["configMapRef"]["name"]
        for s in app_container(workloads()["gateway"])["envFrom"]
        if "configMapRef" in s
        and VARIABLE in objects("ConfigMap")[s["configMapRef"]["name"]]["data"]
    )
    assert source != "president-config", "the public keys are the gateway's alone"
    assert VARIABLE in gateway
    for name in workloads():
        if name != "gateway":
            assert VARIABLE not in container_env(app_container(workloads()[name])), name


def test_k8s_example_key_is_refused_so_nothing_runs_unsigned(tmp_path: Path) -> None:
    """Until the operator puts a real key in, the table and the gateway refuse to start
    with a sentence naming the setting, rather than run unsigned."""
    table = container_env(app_container(workloads()["table"]))
    secret = objects("Secret")["president-operator-key"]["stringData"]
    example = tmp_path / "operator-key.pem"
    example.write_text(secret[Path(table["PRESIDENT_SIGNING_KEY_FILE"]).name])
    with pytest.raises(SystemExit, match=r"PRESIDENT_SIGNING_KEY_FILE: signing key .*not a PEM"):
        operator_signer(str(example))
    gateway = container_env(app_container(workloads()["gateway"]))
    with pytest.raises(SystemExit, match=rf"{VARIABLE} lists .*president operator-key"):
        GatewaySettings.from_env({VARIABLE: gateway[VARIABLE]})


# --- the command the docs show -----------------------------------------------------


def test_the_documented_key_command_makes_a_key_that_signs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command operations.md shows (test_docs runs it as a process too) and deploy/README.md
    repeats: its key signs what the key it prints verifies."""
    shown = re.findall(
        r"^\$ (president operator-key [\w.-]+)$", (ROOT / "docs/operations.md").read_text(), re.M
    )
    assert shown, "docs/operations.md shows no key command"
    assert shown[0] in (DEPLOY / "README.md").read_text()
    argv = shown[0].split()
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, argv[1:])
    assert done.exit_code == 0, done.output
    key_file = tmp_path / argv[-1]
    identifier = Signer.from_file(key_file).key_id
    assert f"operator signing key {identifier} (made now)" in done.stdout
    assert signs_for(key_file, published_line(done.stdout))


def test_key_command_makes_the_key_once_and_prints_its_public_key(tmp_path: Path) -> None:
    runner = CliRunner()
    key_file = tmp_path / "keys" / "operator-key.pem"
    first = runner.invoke(app, ["operator-key", str(key_file)])
    assert first.exit_code == 0, first.output
    signer = Signer.from_file(key_file)
    assert f"operator signing key {signer.key_id} (made now)" in first.stdout
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    published = published_line(first.stdout)
    signature = signer.sign_receipt("table-t", 7, "ab" * 32)
    keys = OperatorKeys.from_hex(published.split(","))
    assert keys.signed(
        receipt_bytes("table-t", 7, "ab" * 32), signature.key_id, signature.signature
    )
    again = runner.invoke(app, ["operator-key", str(key_file), "--published", published])
    assert "(kept)" in again.stdout and published_line(again.stdout) == published
    rotated = runner.invoke(
        app, ["operator-key", str(tmp_path / "k2.pem"), "--published", published]
    )
    assert published_line(rotated.stdout).split(",")[1:] == [published]
    assert "do not publish this key first yet" in rotated.stderr


def test_key_command_refuses_bad_input_and_changes_nothing(tmp_path: Path) -> None:
    runner = CliRunner()
    not_a_key = tmp_path / "notes.pem"
    not_a_key.write_text("hello")
    done = runner.invoke(app, ["operator-key", str(not_a_key)])
    assert done.exit_code == 2 and "not a PEM private key" in done.stderr
    assert not_a_key.read_text() == "hello"
    fresh = tmp_path / "fresh.pem"
    done = runner.invoke(app, ["operator-key", str(fresh), "--published", "abc"])
    assert done.exit_code == 2 and "is not an Ed25519 public key" in done.stderr
    assert not fresh.exists()
