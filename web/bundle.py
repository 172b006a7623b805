#!/usr/bin/env python3
"""Build the web table's bundle, and check that the committed one is fresh.

The browser gets ``web/public/bundle/table.js``, built from the TypeScript of
``web/src/`` (on the TypeScript client package ``@president/client`` of
``clients/typescript/``, the one TypeScript generated from ``protos/``, and the DEAL.md
library of ``web/public/lib/``) by esbuild. The package is built first (its own
``build.py``); ``web/.npmrc``'s ``install-links`` makes ``npm ci`` copy it into
``web/node_modules`` like a published package, so that it and the page share one copy of
``@bufbuild/protobuf`` and ``@connectrpc/connect``. The bundle is committed so that ``make
install`` and ``make run`` need no npm; ``web/public/bundle/manifest.json`` records the
SHA-256 of every source that went into it (and of the bundle itself).

    python web/bundle.py build  # make web-build: the package, npm ci, tsc, esbuild, manifest
    python web/bundle.py check  # exit 1 unless sources and bundle match the manifest (no npm)
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
BUNDLE = WEB / "public" / "bundle" / "table.js"
MANIFEST = WEB / "public" / "bundle" / "manifest.json"
#: Everything the bundle is made from (relative to the repository's root).
SOURCE_GLOBS = (
    "web/src/**/*.ts",
    "web/public/lib/*.js",
    "protos/**/*.proto",
    "web/package.json",
    "web/package-lock.json",
    "web/.npmrc",
    "web/build.mjs",
    "web/tsconfig.json",
    "clients/typescript/src/*.ts",
    "clients/typescript/package.json",
    "clients/typescript/package-lock.json",
    "clients/typescript/tsconfig.json",
    "clients/typescript/build.py",
    "protos/generate_es.py",
)
#: The packages the page and ``@president/client`` must share (one copy in the bundle).
SHARED = ("@bufbuild/protobuf", "@connectrpc/connect")


def sources() -> list[Path]:
    """The bundle's sources, sorted by path."""
    found = {path for pattern in SOURCE_GLOBS for path in ROOT.glob(pattern) if path.is_file()}
    return sorted(found, key=lambda path: path.relative_to(ROOT).as_posix())


def sources_sha256() -> str:
    """One hash over every source's path and bytes."""
    digest = hashlib.sha256()
    for path in sources():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    return digest.hexdigest()


def bundle_sha256() -> str:
    return hashlib.sha256(BUNDLE.read_bytes()).hexdigest()


def problems() -> list[str]:
    """What is stale about the committed bundle, in words (empty: it is fresh)."""
    if not MANIFEST.is_file() or not BUNDLE.is_file():
        return ["web/public/bundle/ has no table.js or manifest.json: run make web-build"]
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    out = []
    if manifest.get("sources_sha256") != sources_sha256():
        out.append(
            "the web table's sources (web/src, web/public/lib, protos, clients/typescript, "
            "the lockfiles) changed "
            "since the bundle was built: run make web-build and commit web/public/bundle/"
        )
    if manifest.get("bundle_sha256") != bundle_sha256():
        out.append("web/public/bundle/table.js is not the bundle make web-build wrote")
    return out


def duplicated(node_modules: Path) -> list[str]:
    """The shared packages that ``@president/client`` got a copy of its own of, in
    ``node_modules`` (empty: it uses the page's)."""
    own = node_modules / "@president" / "client" / "node_modules"
    return [name for name in SHARED if (own / name).exists()]


def build() -> None:
    sys.path.insert(0, str(WEB))
    import npm

    subprocess.run([sys.executable, str(ROOT / "clients" / "typescript" / "build.py")], check=True)
    env = npm.node_environment()
    installed = npm.ci(WEB)
    if installed.returncode != 0:
        print(installed.stdout, installed.stderr, file=sys.stderr)
        raise SystemExit("npm ci failed")
    twice = duplicated(WEB / "node_modules")
    if twice:
        raise SystemExit(
            f"@president/client has its own {', '.join(twice)}: web/package.json's ranges "
            "must admit the versions clients/typescript's lockfile pins"
        )
    tsc = WEB / "node_modules" / ".bin" / "tsc"
    subprocess.run([str(tsc), "-p", "."], check=True, cwd=WEB, env=env)
    subprocess.run(["node", "build.mjs"], check=True, cwd=WEB, env=env)
    manifest = {
        "built_by": "make web-build (python web/bundle.py build)",
        "sources_sha256": sources_sha256(),
        "bundle_sha256": bundle_sha256(),
        "sources": [path.relative_to(ROOT).as_posix() for path in sources()],
    }
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {BUNDLE.relative_to(ROOT)} ({BUNDLE.stat().st_size} bytes) and its manifest")


def main(argv: list[str]) -> int:
    if argv == ["build"]:
        build()
        return 0
    if argv == ["check"]:
        stale = problems()
        for problem in stale:
            print(f"web bundle: {problem}", file=sys.stderr)
        return 1 if stale else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
