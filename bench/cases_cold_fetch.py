"""``krm-merge update`` against ``kpt pkg update`` on a machine that has never seen the repository (issue 33).

    python bench/cases_cold_fetch.py --catalog DIR --samples DIR [--runs 3] [--record bench/results.json]

``DIR``: a git clone (bare is fine) of nephio-project/catalog and of
kptdev/kpt-samples.  Unlike ``bench/cases_real_update.py`` (a throw-away
repository holding the package only), the upstream here is the whole real
repository (every branch, tag and commit of the clone), as a user meets it:
the fetch must not cost in proportion to it.  Each package of
``cases_real_update.PACKAGES`` is fetched ``@v1`` with ``kpt pkg get``, edited
the same way, and updated ``@v2`` by kpt and by krm-merge on fresh copies,
alternately:

* **cold**: both tools' caches emptied before each run (kpt's clone cache
  ``$HOME/.kpt/repos``, ours ``$XDG_CACHE_HOME/krm-merge``), as on a CI
  machine;
* **warm**: the same update again with the caches the cold run left.

over three transports: ``file://``; smart HTTP on 127.0.0.1 (``git
http-backend`` behind Python's http.server, ``tests/git_http.py``) with no
added latency (the cost of git's processes and requests alone); and the same
server answering each request after ``--latency`` seconds and each new
connection after ``--connect-latency`` (a simple model of a distant forge:
a round trip per request, a TCP+TLS set-up per connection).  The HTTP rows
also count the requests and connections each tool made.  Every answer is
checked against kpt's as data.  ``--record`` keeps the run as ``cold_fetch``
in the results JSON, from which ``bench/report.py`` writes the table of
docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]

from cases_real_update import (  # noqa: E402
    COLD_TARGET, PACKAGES, WARM_TARGET, common_options, kpt_version, local_edits, median, parse_options, timed, tree,
)

from tests.git_http import GitHttpServer  # noqa: E402

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
NAMES = {"catalog": "catalog.git", "samples": "samples.git"}


def environment(root: Path) -> dict[str, str]:
    env = dict(os.environ, HOME=str(root / "home"), TMPDIR=str(root / "tmp"), XDG_CACHE_HOME=str(root / "cache"),
               GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null", GIT_TERMINAL_PROMPT="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed for a user: compiled modules are cached
    return env


def empty_caches(root: Path) -> None:
    shutil.rmtree(root / "home" / ".kpt", ignore_errors=True)
    shutil.rmtree(root / "cache" / "krm-merge", ignore_errors=True)


def run(cmd: list[str], cwd: Path, env: dict[str, str], server: GitHttpServer | None) -> dict[str, float]:
    """One timed run: wall and CPU seconds (``cases_real_update.timed``), and the HTTP requests and connections
    it made."""
    if server is not None:
        server.reset_counts()
    wall, cpu = timed(cmd, cwd, env)
    counts = {"requests": len(server.requests), "connections": server.connections} if server is not None else {}
    return {"wall": wall, "cpu": cpu, **counts}


def case(root: Path, url: str, directory: str, tags: tuple[str, str], runs: int,
         server: GitHttpServer | None) -> dict[str, Any]:
    env = environment(root)
    ws = root / "ws"
    for d in ("home", "tmp", "cache", "ws"):
        (root / d).mkdir(parents=True, exist_ok=True)
    old, new = (ref.removeprefix("heads/") for ref in tags)  # a branch by its name, as a user writes it for kpt
    subprocess.run(["kpt", "pkg", "get", f"{url}/{directory}@{old}", "local"], cwd=ws, env=env, check=True,
                   capture_output=True, timeout=300)
    local = ws / "local"
    local_edits(local)
    samples: dict[str, list[dict[str, float]]] = {"kpt_cold": [], "ours_cold": [], "kpt_warm": [], "ours_warm": []}
    for _ in range(runs):
        for who in ("kpt", "ours"):
            empty_caches(root)
            for temperature in ("cold", "warm"):
                target = ws / who
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(local, target)
                cmd = ["kpt", "pkg", "update", f"{who}@{new}"] if who == "kpt" else [KRM_MERGE, "update", f"{target}@{new}"]
                samples[f"{who}_{temperature}"].append(run(cmd, ws, env, server))
    theirs, ours = tree(ws / "kpt"), tree(ws / "ours")
    wrong = sorted(rel for rel in set(theirs) | set(ours) if theirs.get(rel) != ours.get(rel))
    row: dict[str, Any] = {"package": directory, "wrong": wrong}
    for key, values in samples.items():
        row[key] = median([(v["wall"], v["cpu"]) for v in values], 0)
        row[key + "_cpu"] = median([(v["wall"], v["cpu"]) for v in values], 1)
        if server is not None:
            row[key + "_requests"] = values[-1]["requests"]
            row[key + "_connections"] = values[-1]["connections"]
    return row


def serving_root(tmp: Path, sources: dict[str, Path]) -> Path:
    """Bare clones of the sources (every ref), as the server side of every transport."""
    root = tmp / "srv"
    root.mkdir()
    for name, source in sources.items():
        subprocess.run(["git", "clone", "-q", "--bare", "--no-local", str(source), str(root / NAMES[name])],
                       check=True, capture_output=True, timeout=300)
        # as GitHub's: partial fetches and fetches of a commit by id are allowed
        for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
            subprocess.run(["git", "--git-dir", str(root / NAMES[name]), "config", key, "true"], check=True)
    return root


def transports(args: argparse.Namespace, srv: Path) -> Iterator[tuple[str, GitHttpServer | None, str]]:
    """(name, server, base URL) of each transport measured, the server running while its rows are."""
    yield "file", None, f"file://{srv}"
    with GitHttpServer(srv) as server:
        yield "http", server, server.url("").rstrip("/")
    if args.latency or args.connect_latency:
        with GitHttpServer(srv, latency=args.latency, connect_latency=args.connect_latency) as server:
            yield f"http+{args.latency:g}s/request+{args.connect_latency:g}s/connection", server, server.url("").rstrip("/")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common_options(parser, "cold_fetch")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before each HTTP answer (model row)")
    parser.add_argument("--connect-latency", type=float, default=0.1, help="seconds per new HTTP connection (model row)")
    args = parse_options(parser, argv)
    load_start, started_at = os.getloadavg()[0], datetime.datetime.now(datetime.timezone.utc)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="krm-merge-bench-cold-") as tmp:
        srv = serving_root(Path(tmp), {"catalog": Path(args.catalog), "samples": Path(args.samples)})
        n = 0
        for transport, server, base in transports(args, srv):
            for src, directory, old, new in PACKAGES:
                if args.only and directory != args.only:
                    continue
                n += 1
                row = case(Path(tmp) / str(n), f"{base}/{NAMES[src]}", directory, (old, new), args.runs, server)
                row["transport"] = transport
                rows.append(row)
                print(line(row), flush=True)
    wrong = any(r["wrong"] for r in rows)
    if args.record and not wrong:
        record(args, rows, started_at, load_start)
    return 1 if wrong else 0


def line(row: dict[str, Any]) -> str:
    counts = ""
    if "ours_cold_requests" in row:
        counts = (f"; cold HTTP requests/connections kpt {row['kpt_cold_requests']}/{row['kpt_cold_connections']}, "
                  f"krm-merge {row['ours_cold_requests']}/{row['ours_cold_connections']}")
    return (f"{row['transport']} {row['package']}: cold kpt {row['kpt_cold']:.2f} s, krm-merge {row['ours_cold']:.2f} s, "
            f"ratio {row['ours_cold'] / row['kpt_cold']:.2f}; warm kpt {row['kpt_warm']:.2f} s, krm-merge "
            f"{row['ours_warm']:.2f} s, ratio {row['ours_warm'] / row['kpt_warm']:.2f}; cold CPU kpt "
            f"{row['kpt_cold_cpu']:.2f} s, krm-merge {row['ours_cold_cpu']:.2f} s{counts}"
            + (f"; NOT EQUAL AS DATA: {row['wrong']}" if row["wrong"] else ""))


def record(args: argparse.Namespace, rows: list[dict[str, Any]], started_at: datetime.datetime, load_start: float) -> None:
    """Write the run into the results JSON's ``cold_fetch`` (the rest of the file is kept)."""
    path: Path = args.record
    results = json.loads(path.read_text()) if path.exists() else {}
    results["cold_fetch"] = {
        "date": started_at.strftime("%Y-%m-%d %H:%M UTC"), "runs": args.runs,
        "latency": args.latency, "connect_latency": args.connect_latency,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kpt": kpt_version(),
                    "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
                    "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2)},
        "targets": {"cold_ratio": COLD_TARGET, "warm_ratio": WARM_TARGET},
        "rows": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }
    path.write_text(json.dumps(results, indent=1) + "\n")
    print(f"recorded in {path}; now: python bench/report.py")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
