"""Autotuning results on disk: `tuning.db` (SQLite through sqlite-utils) in the cache directory.

One table, `tuning`, whose primary key is (kernel source hash with its dependencies, device,
the autotune `key` argument values, the argument dtypes, the candidate configs, the compiler
version); the value is the chosen config (JSON) and every config's timing (JSON). The database
runs in WAL mode with a busy timeout, so processes tuning in parallel can read and write it.
Every failure here (locked, read-only, damaged database) is logged and ignored: tuning then
simply is not remembered across processes.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from . import disk_cache

log = logging.getLogger("inductor_tile")

DB_NAME = "tuning.db"
TABLE = "tuning"
PRIMARY_KEY = ("source_hash", "device", "key_values", "dtypes", "configs", "compiler_version")
BUSY_TIMEOUT_MS = 30_000

_lock = threading.Lock()
_databases: dict[str, Any] = {}


def db_path(root: Path | None = None) -> Path | None:
    root = root if root is not None else disk_cache.cache_dir()
    return None if root is None else root / DB_NAME


def open_db(path: Path) -> Any:
    """A sqlite_utils.Database in WAL mode with a busy timeout, the table created if missing."""
    import sqlite_utils

    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db = sqlite_utils.Database(conn)
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    if TABLE not in db.table_names():
        try:
            db[TABLE].create({"source_hash": str, "device": str, "key_values": str, "dtypes": str, "configs": str,
                              "compiler_version": str, "kernel": str, "config": str, "timings": str,
                              "created": float}, pk=PRIMARY_KEY, if_not_exists=True)
        except sqlite3.OperationalError as e:  # another process created it meanwhile
            if TABLE not in db.table_names():
                raise e
    return db


_unavailable: str | None = None  # why the database cannot be used in this process (warned once)


def _db() -> Any:
    global _unavailable
    if _unavailable is not None:
        return None
    try:
        import sqlite_utils  # noqa: F401
    except ImportError as e:
        _unavailable = str(e)
        log.warning("inductor_tile: tuning results are not kept on disk (%s)", e)
        return None
    path = db_path()
    if path is None:
        return None
    with _lock:
        db = _databases.get(str(path))
        if db is None:
            db = _databases[str(path)] = open_db(path)
        return db


def lookup(row_key: dict[str, str]) -> dict[str, Any] | None:
    """The stored result for a key: {"config": dict, "timings": list}, or None."""
    try:
        db = _db()
        if db is None:
            return None
        where = " and ".join(f"[{column}] = ?" for column in PRIMARY_KEY)
        with _lock:
            rows = list(db.query(f"select config, timings from [{TABLE}] where {where}",
                                 [row_key[c] for c in PRIMARY_KEY]))
        if not rows:
            return None
        return {"config": json.loads(rows[0]["config"]), "timings": json.loads(rows[0]["timings"])}
    except Exception as e:  # noqa: BLE001 - a cache must never break a launch
        log.warning("inductor_tile: tuning database lookup failed (%s: %s)", type(e).__name__, e)
        return None


def store(row_key: dict[str, str], kernel: str, config: dict[str, Any], timings: list[Any]) -> None:
    try:
        db = _db()
        if db is None:
            return
        row = dict(row_key)
        row.update({"kernel": kernel, "config": json.dumps(config, sort_keys=True), "timings": json.dumps(timings),
                    "created": time.time()})
        with _lock:
            db[TABLE].upsert(row, pk=PRIMARY_KEY)
    except Exception as e:  # noqa: BLE001
        log.warning("inductor_tile: could not store a tuning result (%s: %s)", type(e).__name__, e)


def count(path: Path) -> int:
    if not path.exists():
        return 0
    db = open_db(path)
    try:
        return db[TABLE].count
    finally:
        db.conn.close()


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    db = open_db(path)
    try:
        return list(db[TABLE].rows)
    finally:
        db.conn.close()


def clear(path: Path) -> None:
    """Delete the database (and its WAL files)."""
    with _lock:
        for cached_path, db in list(_databases.items()):
            if cached_path == str(path):
                db.conn.close()
                del _databases[cached_path]
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def forget_connections() -> None:
    """Close every open database (tests switch TILE_CACHE_DIR)."""
    with _lock:
        for db in _databases.values():
            try:
                db.conn.close()
            except Exception:  # noqa: BLE001
                pass
        _databases.clear()
