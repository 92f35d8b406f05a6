"""Why a store files rows as blocks of raw bytes: the layouts a store could use, measured on the
same rows in the same run.

    python benchmarks/store_format.py            # the tables (about a minute on 2 cores)
    python benchmarks/store_format.py --quick    # tiny sizes, to check the script runs

Layouts (each an SQLite file in WAL mode, a transaction per chunk, as a store files them):

- ``blocks``: the store's (format 4): per leaf, a block line of up to ~3.5 KB of raw element
  bytes of several lanes and rows; the ``history`` view decodes them in SQL;
- ``wide``:   formats 0-3: a line per (run, lane, step) with a column per leaf (at most 2,000
  leaves in one file), NaNs as NULL with their bytes in a side table;
- ``long``:   a line per (run, lane, step, leaf, component): readable as is, no column limit.

Workloads: (1) one lane, 10^5 steps of 3 float32 scalars, chunks of 2,000 rows; (2) 4,096 vmap
lanes x 300 steps of a loss and a 4-vector (1 + 4 float32), chunks of 12 rows. Columns: CPU
µs per row filed (a row: one lane's step), file bytes per value, seconds to read the run back
per 10^6 values (`load_runs` for blocks, the same vectorised reader of the old format for
wide, one SELECT reshaped for long), and µs per value read through SQL (the ``history`` view;
the table itself for long).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget._host import Run
from jaxhist_widget._host.runtime import RunWriter
from jaxhist_widget._host.store import _legacy as legacy
from jaxhist_widget._host.store._stored import layout_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine
from store import print_table, synthetic_layout


def chunks(workload, quick):
    """(layout, lanes, list of chunks: per leaf (lanes, rows, *shape))."""
    rng = np.random.default_rng(0)
    if workload == 1:
        steps, per = (10_000 if quick else 100_000), 2000
        layout = synthetic_layout(["a", "b", "c"], [(), (), ()], steps)
        parts = [[rng.random((1, per), np.float32) for _ in range(3)] for _ in range(steps // per)]
        return layout, None, parts
    lanes, steps, per = (256 if quick else 4096), 300, 12
    layout = synthetic_layout(["loss", "x"], [(), (4,)], steps)
    parts = [
        [rng.random((lanes, per), np.float32), rng.random((lanes, per, 4), np.float32)]
        for _ in range(steps // per)
    ]
    return layout, lanes, parts


def feed(rows, parts, write):
    """Append each chunk through ``rows`` (a run's writer) and file it with ``write(run, start,
    stop)``; CPU s."""
    cpu, at = 0.0, 0
    for part in parts:
        n = part[0].shape[1]
        rows.append_lanes(list(range(part[0].shape[0])), at, part)
        t = time.process_time()
        write(rows.run, at, at + n)
        cpu += time.process_time() - t
        at += n
    return cpu


def blocks(folder, layout, lanes, parts):
    path = folder / "blocks.db"
    store = jhw.Store(path)
    rows = _run(layout, lanes)
    run = rows.run
    store._start(run)
    store.flush()  # the file made and its run's line filed: a user keeps a store open
    t = time.process_time()

    def write(run, start, stop):  # the store's own hook, then its worker's filing
        store.on_rows(run, [])
        store.flush()

    feed(rows, parts, write)
    rows.finish([1] * len(run.counts))
    store._end(run)
    store.flush()
    cpu = time.process_time() - t  # worker and caller: filing is all this process does
    store.close()

    def read():
        return jhw.load_runs(path)

    return path, cpu, read, "SELECT value FROM history"


def wide(folder, layout, lanes, parts):
    path = folder / "wide.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT, status TEXT, statuses TEXT, "
        "rows TEXT, lanes INTEGER, max_steps INTEGER, fields TEXT, columns TEXT, dtypes TEXT, "
        "shapes TEXT, kinds TEXT, tree TEXT, started TEXT, ended TEXT, elapsed REAL, host TEXT, "
        "pid INTEGER)"
    )
    cols = list(layout.names)
    conn.execute(
        f"CREATE TABLE rows (run, lane, step, {', '.join(cols)}, PRIMARY KEY (run, lane, step))"
        " WITHOUT ROWID"
    )
    conn.execute("CREATE TABLE nan_bits (run, lane, step, col, bits)")
    kinds = ["float" if s == () else "blob" for s in layout.shapes]
    b = 1 if lanes is None else lanes

    def write(run, start, stop):  # formats 0-3's filing: an object array, rows as tuples
        n = stop - start
        leaves = run.block(np.arange(b), start, stop)
        block = np.empty((b, n, 3 + len(cols)), object)
        block[..., 0] = 1
        block[..., 1] = np.arange(b)[:, None]
        block[..., 2] = np.arange(start, stop)[None, :]
        for j, (kind, leaf) in enumerate(zip(kinds, leaves, strict=True)):
            if kind == "float":
                block[..., 3 + j] = leaf.astype(np.float64)
            else:
                flat = np.ascontiguousarray(leaf).reshape(b * n, -1)
                items = np.empty(b * n, object)  # each row's bytes, by numpy's own loop
                items[:] = flat.view(np.dtype((np.void, flat.shape[1] * 4))).ravel().tolist()
                block[..., 3 + j] = items.reshape(b, n)
        conn.execute("BEGIN IMMEDIATE")
        marks = ",".join("?" * (3 + len(cols)))
        conn.executemany(f"INSERT INTO rows VALUES ({marks})", block.reshape(b * n, -1).tolist())
        conn.execute("COMMIT")

    cpu = feed(_run(layout, lanes), parts, write)
    conn.execute(
        "INSERT INTO runs VALUES (1, 'w', 'converged', NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL, "
        "NULL, NULL, NULL, NULL, NULL)",
        (
            str([len(parts) * parts[0][0].shape[1]] * b),
            lanes,
            layout.max_steps,
            _j(cols),
            _j(cols),
            _j(list(layout.dtypes)),
            _j([list(s) for s in layout.shapes]),
            _j(kinds),
        ),
    )
    conn.close()

    def read():
        c = sqlite3.connect(path)
        c.row_factory = sqlite3.Row
        line = c.execute("SELECT * FROM runs").fetchone()
        out = legacy.read(c, line, layout_of(line), b)
        c.close()
        return out

    return path, cpu, read, "SELECT * FROM rows"


def long(folder, layout, lanes, parts):
    path = folder / "long.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE vals (run, leaf, lane, step, k, value, PRIMARY KEY (run, leaf, lane, step, "
        "k)) WITHOUT ROWID"
    )
    b = 1 if lanes is None else lanes

    def write(run, start, stop):
        conn.execute("BEGIN IMMEDIATE")
        for j, leaf in enumerate(run.block(np.arange(b), start, stop)):
            flat = leaf.reshape(b, stop - start, -1).astype(np.float64)
            lane, step, k = np.indices(flat.shape)
            table = np.stack(
                [np.full(flat.size, j), lane.ravel(), step.ravel() + start, k.ravel()], 1
            ).astype(object)
            rows = np.concatenate(
                [np.ones((flat.size, 1), object), table, flat.reshape(-1, 1).astype(object)], 1
            )
            conn.executemany("INSERT INTO vals VALUES (?,?,?,?,?,?)", rows.tolist())
        conn.execute("COMMIT")

    cpu = feed(_run(layout, lanes), parts, write)
    conn.close()

    def read():
        c = sqlite3.connect(path)
        out = [
            np.array(
                c.execute(
                    "SELECT value FROM vals WHERE leaf=? ORDER BY lane, step, k", (j,)
                ).fetchall(),
                np.float32,
            )
            for j in range(len(layout.names))
        ]
        c.close()
        return out

    return path, cpu, read, "SELECT value FROM vals"


def _run(layout, lanes):
    """A run of ``lanes``, and the writer that fills it (the hub's half)."""
    rows = RunWriter(Run(1, layout))
    rows.lanes(lanes)
    return rows


def _j(value):
    import json

    return json.dumps(value)


def sql_read_us(path, query, values):
    c = sqlite3.connect(path)
    t = time.perf_counter()
    got = 0
    for _ in c.execute(query):
        got += 1
    c.close()
    return (time.perf_counter() - t) / max(got, 1) * 1e6, got


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (checks the script)")
    opts = parser.parse_args()
    print(machine())
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"SQLite {sqlite3.sqlite_version}\n"
    )
    for workload, title in [
        (1, "(1) 1 lane x 10^5 steps x 3 float32"),
        (2, "(2) 4,096 lanes x 300 steps x (1 + 4) float32"),
    ]:
        layout, lanes, parts = chunks(workload, opts.quick)
        b = 1 if lanes is None else lanes
        rows = b * sum(p[0].shape[1] for p in parts)
        values = rows * (3 if workload == 1 else 5)
        table = []
        for name, make in [("blocks", blocks), ("wide", wide), ("long", long)]:
            folder = Path(tempfile.mkdtemp(prefix=f"jhw-{name}-"))
            path, cpu, read, query = make(folder, layout, lanes, parts)
            size = sum(p.stat().st_size for p in folder.iterdir())
            t = time.perf_counter()
            read()
            read_s = time.perf_counter() - t
            sql_us, _ = sql_read_us(path, query, values)
            table.append(
                [
                    name,
                    f"{cpu / rows * 1e6:.2f}",
                    f"{size / values:.1f}",
                    f"{read_s / values * 1e6:.3f}",
                    f"{sql_us:.2f}",
                ]
            )
        print(title, f"({rows:,} rows, {values:,} values)")
        print_table(
            [
                "layout",
                "CPU µs / row filed",
                "file bytes / value",
                "read s / 10^6 values",
                "SQL µs / value",
            ],
            table,
        )
        print()
    print(
        "blocks: the cost of a copy to write and to read, any number of leaves or lanes, "
        "exact bytes; SQL readers decode through the history view"
    )


if __name__ == "__main__":
    main()
