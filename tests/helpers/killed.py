"""A worker killed mid-run, for the tests that nothing told is lost (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).parent / "worker.py"


def tell_then_kill(storage, told: int = 8, timeout: float = 60.0) -> list[int]:
    """Run ``worker.py`` on ``storage`` (a trial told every 0.05 s), SIGKILL it once it has reported
    ``told`` tells, and return the ids it reported (each reported after its commit)."""
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(storage), "1000", "0.05"], stdout=subprocess.PIPE, text=True
    )
    ids: list[int] = []
    for line in proc.stdout:
        ids.append(int(line.split()[1]))
        if len(ids) == told:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=timeout)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return ids
