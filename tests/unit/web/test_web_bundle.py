"""The committed web table bundle is the one its sources build (no npm needed to check).

``web/public/bundle/manifest.json`` records the SHA-256 of every source of the
bundle (web/src, web/public/lib, protos, the TypeScript client package it is built on,
the package files and lockfiles, the build scripts) and of the bundle; ``make web-build``
rewrites both. A source changed without a rebuild, or a bundle edited by hand, fails here.

The page speaks to the gateway through ``@president/client`` (``clients/typescript``), the
one TypeScript generated from ``protos/``: it generates no code of its own.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def bundle_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("web_bundle", ROOT / "web" / "bundle.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_bundle_is_fresh() -> None:
    bundle = bundle_module()
    assert bundle.problems() == []


def test_the_manifest_covers_the_sources_the_bundle_is_made_of() -> None:
    bundle = bundle_module()
    listed = set(json.loads(bundle.MANIFEST.read_text())["sources"])
    for needed in (
        "web/src/main.ts",
        "web/public/lib/deal.js",
        "web/package-lock.json",
        "protos/president/gateway/v1/gateway.proto",
        "clients/typescript/src/index.ts",
        "clients/typescript/package-lock.json",
    ):
        assert needed in listed


def test_the_page_uses_the_client_package_and_generates_nothing() -> None:
    package = json.loads((ROOT / "web" / "package.json").read_text())
    needs = package.get("dependencies", {}) | package.get("devDependencies", {})
    assert needs["@president/client"] == "file:../clients/typescript"
    assert "@bufbuild/protoc-gen-es" not in needs
    # A real copy, sharing the page's protobuf and connect (not a symlink with its own).
    assert "install-links=true" in (ROOT / "web" / ".npmrc").read_text().splitlines()
    generated = re.compile(r"""from\s+["'][^"']*/gen/|from\s+["']@bufbuild/protobuf/wire""")
    sources = sorted((ROOT / "web" / "src").glob("*.ts"))
    importing = [path.name for path in sources if generated.search(path.read_text())]
    assert importing == []


def test_a_changed_source_makes_the_bundle_stale(tmp_path: Path) -> None:
    bundle = bundle_module()
    fresh = bundle.sources_sha256()
    copy = tmp_path / "web" / "src"
    copy.mkdir(parents=True)
    for path in bundle.sources():
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    bundle.ROOT = tmp_path
    assert bundle.sources_sha256() == fresh  # the hash depends on paths and bytes only
    (copy / "main.ts").write_text((copy / "main.ts").read_text() + "\n// changed\n")
    assert bundle.sources_sha256() != fresh
