"""v1 changes only additively: ``make lint`` runs the real ``buf breaking`` (FILE rules, from
``protos/buf.yaml``) against ``protos/baseline/v1.binpb``, the contract as last recorded
(``make protos-baseline``). This checks that the protos agree with it, and that the check
catches what it must: a renumbered field, a removed method."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROTOS = ROOT / "protos"
BASELINE = PROTOS / "baseline" / "v1.binpb"
sys.path.insert(0, str(ROOT / "tools" / "buf"))
import buf  # noqa: E402  (tools/buf/buf.py: npm's @bufbuild/buf, from its lockfile)


def breaking(protos: Path) -> subprocess.CompletedProcess[str]:
    return buf.run("breaking", "--against", str(BASELINE), cwd=protos)


def test_the_protos_keep_the_recorded_v1() -> None:
    result = breaking(PROTOS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_renumbered_field_or_a_removed_method_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "protos"
    shutil.copytree(PROTOS, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    game = copy / "president" / "game" / "v1" / "game.proto"
    text = game.read_text()
    assert "bool muted = 11;" in text
    game.write_text(text.replace("bool muted = 11;", "bool muted = 12;"))
    gateway = copy / "president" / "gateway" / "v1" / "gateway.proto"
    lines = gateway.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.lstrip().startswith("rpc MuteSeat(")]
    assert len(kept) == len(lines) - 1
    gateway.write_text("".join(kept))
    result = breaking(copy)
    assert result.returncode != 0
    assert "muted" in result.stdout and "MuteSeat" in result.stdout, result.stdout
