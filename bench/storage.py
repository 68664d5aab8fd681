"""Ask/tell throughput of one study shared by 4 and 8 worker processes, SQLite against PostgreSQL,
and the time to reclaim a killed worker's trial (issue 16).

Every worker process runs ``asks`` ask/tell rounds on the same study with a cheap objective
(Branin) and fixed GP hyperparameters (so the figure is the store and the optimizer's ask, not
ML-II); throughput = complete trials / wall time of the whole group. The PostgreSQL server is a
temporary one started here exactly as the tests start theirs (tests/conftest.py: Debian's
postgresql, Unix socket). Reclaim: a worker is SIGKILLed while evaluating, and another asks every
0.1 s with ``heartbeat_grace`` = 2 s; the time from the kill to the hand-over is reported.
Trials lost = trials a worker reported as told that are not complete in the store (must be 0).

    python bench/storage.py [--asks 25]

Results: bench/results/storage.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import PostgresServer  # noqa: E402

import warmbo as wb  # noqa: E402

WORKER = ROOT / "tests" / "helpers" / "worker.py"
SPACE = wb.Space.box([(-5.0, 10.0), (0.0, 15.0)])


def throughput(url: str, workers: int, asks: int) -> dict:
    wb.Optimizer(SPACE, storage=url, seed=0, n_initial=6)
    started = time.perf_counter()
    procs = [
        subprocess.Popen([sys.executable, str(WORKER), url, str(asks)], stdout=subprocess.PIPE, text=True)
        for _ in range(workers)
    ]
    told = []
    for proc in procs:
        out, _ = proc.communicate(timeout=1800)
        told += [int(line.split()[1]) for line in out.splitlines() if line.startswith("told")]
    seconds = time.perf_counter() - started
    trials = wb.Study(url).trials()
    complete = {t.id for t in trials if t.is_complete}
    return {
        "workers": workers,
        "asks_per_worker": asks,
        "seconds": round(seconds, 2),
        "trials_per_second": round(len(complete) / seconds, 2),
        "complete": len(complete),
        "distinct_points": len({tuple(t.params.values()) for t in trials}),
        "lost": len(set(told) - complete),
    }


def reclaim_time(url: str, grace: float = 2.0) -> dict:
    code = (
        "import sys, time, warmbo as wb\n"
        "space = wb.Space.box([(-5.0, 10.0), (0.0, 15.0)])\n"
        f"opt = wb.Optimizer(space, storage=sys.argv[1], seed=0, worker='doomed', heartbeat_grace={grace})\n"
        "opt.run(lambda p: time.sleep(600) or 0.0, budget=1, progress=False)\n"
    )
    wb.Optimizer(SPACE, storage=url, seed=0)
    proc = subprocess.Popen([sys.executable, "-c", code, url])
    while not wb.Study(url).count("pending"):
        time.sleep(0.02)
    (pending,) = wb.Study(url).trials(("pending",))
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.perf_counter()
    proc.wait()
    survivor = wb.Optimizer(SPACE, storage=url, seed=0, worker="survivor", heartbeat_grace=grace)
    while True:
        s = survivor.ask()
        if s.trial_id == pending.id:
            break
        survivor.tell(s, 1.0)
        time.sleep(0.1)
    return {"grace_s": grace, "kill_to_handover_s": round(time.perf_counter() - killed, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=25)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "storage.json"))
    args = parser.parse_args()
    server = PostgresServer()
    server.start()
    results = {"load_average_start": os.getloadavg(), "cpu_count": os.cpu_count(), "rows": [], "reclaim": {}}
    tmp = Path(server.root) / "sqlite"
    tmp.mkdir()
    try:
        for workers in (4, 8):
            for backend in ("sqlite", "postgresql"):
                url = str(tmp / f"t{workers}.db") if backend == "sqlite" else server.url(f"t{workers}")
                row = {"backend": backend, **throughput(url, workers, args.asks)}
                results["rows"].append(row)
                print(row, flush=True)
        for backend in ("sqlite", "postgresql"):
            url = str(tmp / "reclaim.db") if backend == "sqlite" else server.url("reclaim")
            results["reclaim"][backend] = reclaim_time(url)
            print(backend, results["reclaim"][backend], flush=True)
    finally:
        server.stop()
    results["load_average_end"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
