"""Run the FileCheck port (the `filecheck` package) from tests on IR or assembly text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def filecheck(text: str, checks: str, tmp_path: Path) -> None:
    """Run FileCheck on `text` with `checks` (CHECK lines); fail with its report."""
    check_file = tmp_path / "checks.txt"
    check_file.write_text(checks)
    executable = Path(sys.executable).parent / "filecheck"
    result = subprocess.run([str(executable if executable.exists() else "filecheck"), str(check_file)],
                            check=False, input=text, capture_output=True, text=True)
    assert result.returncode == 0, f"FileCheck failed:\n{result.stdout}\n{result.stderr}"
