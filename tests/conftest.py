"""Shared fixtures: a real PostgreSQL server for the storage tests (started once per session).

The server is Debian's (``apt-get install postgresql``; ``.ci/run`` installs it): ``initdb`` into a
temporary folder and ``pg_ctl start`` listening only on a Unix socket in that folder. PostgreSQL
refuses to run as root, so as root (CI) both run as the ``postgres`` user via ``runuser``. If the
server cannot be started, the tests that need it fail (they do not skip).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest


def _bindir() -> Path:
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True)
        candidate = Path(out.stdout.strip())
        if (candidate / "initdb").exists():
            return candidate
    for path in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(path, "initdb").exists():
            return Path(path)
    raise RuntimeError("PostgreSQL's initdb was not found: apt-get install postgresql (see .ci/run)")


class PostgresServer:
    def __init__(self):
        self.bindir = _bindir()
        self.root = Path(tempfile.mkdtemp(prefix="warmbo-pg-"))
        self.data = self.root / "data"
        self.socket = self.root / "sock"
        self.socket.mkdir()
        self.as_root = os.geteuid() == 0
        self.user = "postgres" if self.as_root else os.environ.get("USER") or "postgres"
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.socket, "postgres", "postgres")
            os.chmod(self.root, 0o755)

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {done.stdout[-2000:]} {done.stderr[-2000:]}")

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8")
        options = f"-k {self.socket} -c listen_addresses='' -c max_connections=100"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        self._run("createdb", "-h", str(self.socket), "-U", self.user, "warmbo")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, study: str | None = None) -> str:
        study = study or f"s{uuid.uuid4().hex[:12]}"
        return f"postgresql://{self.user}@/warmbo?host={self.socket}&study={study}"


@pytest.fixture(scope="session")
def postgres_server():
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The URL of a fresh, empty study on the session's PostgreSQL server."""
    return postgres_server.url()


@pytest.fixture
def minimised_study(tmp_path) -> str:
    """The path of a finished warmbo study that minimises ``(x - 0.5)^2`` on ``x in [0, 1]`` (three
    trials, its best at 0.5): a prior whose direction the integrations must read as it is."""
    import warmbo as wb

    path = str(tmp_path / "minimised.db")
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), storage=path, seed=0)
    for x in (0.1, 0.5, 0.9):
        opt.tell({"x": x}, (x - 0.5) ** 2)
    opt.study.close()
    return path


@pytest.fixture
def likelihood_rows(monkeypatch) -> list[int]:
    """The number of rows of every GP hyperparameter-objective evaluation made while the test runs
    (which GPs were fitted: a stored fit that is reused shows as no evaluation on its rows)."""
    import warmbo.models.gp as gp_module

    rows: list[int] = []
    objective_function = gp_module.GP._objective_function

    def counted(self, X, *args, **kwargs):
        function = objective_function(self, X, *args, **kwargs)

        def evaluate(params):
            rows.append(X.shape[0])
            return function(params)

        return evaluate

    monkeypatch.setattr(gp_module.GP, "_objective_function", counted)
    return rows
