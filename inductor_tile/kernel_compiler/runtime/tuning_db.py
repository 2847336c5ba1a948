"""Autotuning results on disk: `tuning.db` (SQLite, through the standard library's sqlite3) in the cache directory.

One table, `tuning`, whose primary key is (kernel source hash with its dependencies, device,
the autotune `key` argument values, the argument dtypes, the candidate configs, the compiler
version); the value is the chosen config (JSON) and every config's timing (JSON). The database
runs in WAL mode with a busy timeout, so processes tuning in parallel can read and write it.
Every failure here (locked, read-only, damaged database) is logged and ignored: tuning then
simply is not remembered across processes.

Start-up: a process opens the database once, at its first lookup (a warm start's first tuned kernel),
and imports nothing beyond sqlite3 (sqlite-utils took 70-90 ms to import after torch, 160 ms alone; the table is plain SQL).
`stats` counts the opens, lookups and their time (model_benchmarks/compile_times prints them).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import disk_cache

log = logging.getLogger("inductor_tile")

DB_NAME = "tuning.db"
TABLE = "tuning"
PRIMARY_KEY = ("source_hash", "device", "key_values", "dtypes", "configs", "compiler_version")
BUSY_TIMEOUT_MS = 30_000

_lock = threading.Lock()
_databases: dict[str, sqlite3.Connection] = {}


def db_path(root: Path | None = None) -> Path | None:
    root = root if root is not None else disk_cache.cache_dir()
    return None if root is None else root / DB_NAME


#: the columns of the table, in order (the primary key first); all TEXT but `created` (seconds since the epoch)
COLUMNS = PRIMARY_KEY + ("kernel", "config", "timings", "created")


@dataclass
class DBStats:
    """Process-wide counters (tests, compile_times)."""

    opens: int = 0  # connections opened by `_db` (one per database per process)
    lookups: int = 0
    lookup_seconds: float = 0.0  # opening included

    def reset(self) -> None:
        self.opens = self.lookups = 0
        self.lookup_seconds = 0.0


stats = DBStats()


def _create_table(conn: sqlite3.Connection) -> None:
    columns = ", ".join(f"[{c}] {'FLOAT' if c == 'created' else 'TEXT'}" for c in COLUMNS)
    key = ", ".join(f"[{c}]" for c in PRIMARY_KEY)
    conn.execute(f"CREATE TABLE IF NOT EXISTS [{TABLE}] ({columns}, PRIMARY KEY ({key}))")


def open_db(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode with a busy timeout, the table created if missing (the schema sqlite-utils
    made in earlier versions: databases written by either are read by both)."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        _create_table(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _db() -> sqlite3.Connection | None:
    path = db_path()
    if path is None:
        return None
    with _lock:
        conn = _databases.get(str(path))
        if conn is None:
            conn = _databases[str(path)] = open_db(path)
            stats.opens += 1
        return conn


def lookup(row_key: dict[str, str]) -> dict[str, Any] | None:
    """The stored result for a key: {"config": dict, "timings": list}, or None."""
    started = time.perf_counter()
    stats.lookups += 1
    try:
        conn = _db()
        if conn is None:
            return None
        where = " and ".join(f"[{column}] = ?" for column in PRIMARY_KEY)
        with _lock:
            row = conn.execute(f"select config, timings from [{TABLE}] where {where}",
                               [row_key[c] for c in PRIMARY_KEY]).fetchone()
        if row is None:
            return None
        return {"config": json.loads(row[0]), "timings": json.loads(row[1])}
    except Exception as e:  # noqa: BLE001 - a cache must never break a launch
        log.warning("inductor_tile: tuning database lookup failed (%s: %s)", type(e).__name__, e)
        return None
    finally:
        stats.lookup_seconds += time.perf_counter() - started


def store(row_key: dict[str, str], kernel: str, config: dict[str, Any], timings: list[Any]) -> None:
    try:
        conn = _db()
        if conn is None:
            return
        row = dict(row_key)
        row.update({"kernel": kernel, "config": json.dumps(config, sort_keys=True), "timings": json.dumps(timings),
                    "created": time.time()})
        names = ", ".join(f"[{c}]" for c in COLUMNS)
        with _lock:  # every column is written: replacing the row is an upsert
            conn.execute(f"INSERT OR REPLACE INTO [{TABLE}] ({names}) VALUES ({', '.join('?' * len(COLUMNS))})",
                         [row[c] for c in COLUMNS])
    except Exception as e:  # noqa: BLE001
        log.warning("inductor_tile: could not store a tuning result (%s: %s)", type(e).__name__, e)


def count(path: Path) -> int:
    if not path.exists():
        return 0
    conn = open_db(path)
    try:
        return conn.execute(f"select count(*) from [{TABLE}]").fetchone()[0]
    finally:
        conn.close()


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    conn = open_db(path)
    try:
        cursor = conn.execute(f"select * from [{TABLE}]")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        conn.close()


def clear(path: Path) -> None:
    """Delete the database (and its WAL files)."""
    with _lock:
        for cached_path, conn in list(_databases.items()):
            if cached_path == str(path):
                conn.close()
                del _databases[cached_path]
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def forget_connections() -> None:
    """Close every open database (tests switch TILE_CACHE_DIR)."""
    with _lock:
        for conn in _databases.values():
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass
        _databases.clear()
