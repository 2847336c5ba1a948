"""Run the LLVM-style FileCheck tests under tests/filecheck (one pytest case per file).

Each `// RUN:` line is a shell pipeline in which `tile-opt` is this interpreter running
`inductor_tile.kernel_compiler.tools.tile_opt`, `filecheck` is the FileCheck port
installed next to it (or on PATH), and `%s` is the test file. Every RUN line must exit 0.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FILECHECK_ROOT = Path(__file__).resolve().parent / "filecheck"
TEST_FILES = sorted(FILECHECK_ROOT.rglob("*.mlir"))


def _filecheck_executable() -> str:
    beside_python = Path(sys.executable).parent / "filecheck"
    if beside_python.exists():
        return str(beside_python)
    on_path = shutil.which("filecheck")
    if on_path is None:
        pytest.fail("the `filecheck` executable (pip package filecheck) is not installed")
    return on_path


def run_lines(path: Path) -> list[str]:
    """The commands of the `// RUN:` lines of a test file."""
    return [line.split("RUN:", 1)[1].strip() for line in path.read_text().splitlines() if re.match(r"\s*//\s*RUN:", line)]


def substitute(command: str, path: Path) -> str:
    """Expand `tile-opt`, `filecheck` and `%s` (in that order, so the path is left alone)."""
    tile_opt = f"{shlex.quote(sys.executable)} -m inductor_tile.kernel_compiler.tools.tile_opt"
    command = re.sub(r"(?<![\w/.-])tile-opt(?![\w-])", tile_opt, command)
    command = re.sub(r"(?<![\w/.-])filecheck(?![\w-])", shlex.quote(_filecheck_executable()), command)
    return command.replace("%s", shlex.quote(str(path)))


@pytest.mark.parametrize("path", TEST_FILES, ids=[str(p.relative_to(FILECHECK_ROOT)) for p in TEST_FILES])
def test_filecheck(path: Path) -> None:
    commands = run_lines(path)
    assert commands, f"{path} has no RUN line"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    for command in commands:
        expanded = substitute(command, path)
        result = subprocess.run(
            f"set -o pipefail; {expanded}",
            shell=True,
            executable="/bin/bash",
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            env=env,
        )
        assert result.returncode == 0, (
            f"RUN: {command}\n$ {expanded}\nexit status {result.returncode}\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )
