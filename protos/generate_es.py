#!/usr/bin/env python3
"""Generate TypeScript (protobuf-es v2) from every proto of ``protos/`` into a folder.

The one way TypeScript is generated here: for the TypeScript client package
(``clients/typescript/build.py``, into ``clients/typescript/src/gen/``), which the web
table uses (``web/bundle.py``) rather than generating its own. grpcio-tools' protoc runs the
folder's own ``@bufbuild/protoc-gen-es`` (from its ``node_modules``, as its lockfile pins
it), with ``target=ts``. The folder's previous output is removed first.

    python protos/generate_es.py PACKAGE_FOLDER OUT_FOLDER [--opt import_extension=js]
        [--only 'president/gateway/**/*.proto' ...]  # these protos only (default: all)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"


def generate(package: Path, out: Path, options: list[str], only: list[str]) -> None:
    """``out`` (emptied) holds the code ``package``'s protoc-gen-es makes of ``protos/`` (of
    the protos matching ``only``'s globs, when given)."""
    import grpc_tools

    plugin = package / "node_modules" / ".bin" / "protoc-gen-es"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    paths = {path for pattern in only or ["**/*.proto"] for path in PROTOS.glob(pattern)}
    protos = sorted(str(path.relative_to(PROTOS)) for path in paths)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={PROTOS}",
            f"--proto_path={Path(grpc_tools.__file__).parent / '_proto'}",
            f"--plugin=protoc-gen-es={plugin}",
            f"--es_out={out}",
            "--es_opt=target=ts",
            *(f"--es_opt={option}" for option in options),
            *protos,
        ],
        check=True,
        env=os.environ.copy(),
        cwd=ROOT,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path, help="the npm folder whose protoc-gen-es runs")
    parser.add_argument("out", type=Path, help="where the TypeScript goes (emptied first)")
    parser.add_argument("--opt", action="append", default=[], help="a protoc-gen-es option")
    parser.add_argument("--only", action="append", default=[], help="a glob of protos/ to use")
    arguments = parser.parse_args(argv)
    generate(arguments.package.resolve(), arguments.out.resolve(), arguments.opt, arguments.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
