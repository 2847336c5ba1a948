"""`python -m inductor_tile.cache list|clear|stats`: look at and clear the on-disk caches
(kernels, compiled graphs, tuning results; `clear` with no choice also the source-tree hashes of
tree_keys.py).

The cache directory is `--dir`, else TILE_CACHE_DIR, else ~/.cache/inductor_tile.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from .kernel_compiler.runtime import disk_cache, tuning_db


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _age(seconds: float) -> str:
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= length:
            return f"{seconds / length:.1f}{unit}"
    return f"{seconds:.0f}s"


def cmd_list(root: Path) -> int:
    rows = []
    now = time.time()
    for entry in disk_cache.entries(root):
        meta = disk_cache.read_metadata(entry) or {}
        created = meta.get("created") or entry.stat().st_mtime
        rows.append((meta.get("name", "?(damaged)"), meta.get("target", "?"), _human(_size(entry)),
                     _age(now - created), entry.name[:16]))
    if not rows:
        print(f"no cached kernels in {disk_cache.kernels_dir(root)}")
    else:
        widths = [max(len(str(r[i])) for r in rows + [("kernel", "target", "size", "age", "key")]) for i in range(5)]
        header = ("kernel", "target", "size", "age", "key")
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for row in sorted(rows):
            print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    db = tuning_db.db_path(root)
    if db is not None and db.exists():
        print(f"\ntuning results ({db}):")
        for row in tuning_db.rows(db):
            print(f"  {row['kernel']}  key={row['key_values']}  dtypes={row['dtypes']}  device={row['device']}  "
                  f"config={row['config']}")
    return 0


def _graph_entries(root: Path) -> list[Path]:
    graphs = root / "graphs"
    return [p for sub in ("fxgraph", "aotautograd") if (graphs / sub).is_dir()
            for p in (graphs / sub).rglob("*") if p.is_file() and not p.name.startswith(".")]


def cmd_clear(root: Path, kernels: bool, tuning: bool, graphs: bool = False, keys: bool = False) -> int:
    if keys:  # source-tree hashes kept for warm starts (tree_keys.py): recomputed when missing
        count = len(list((root / "keys").glob("*.json"))) if (root / "keys").is_dir() else 0
        shutil.rmtree(root / "keys", ignore_errors=True)
        print(f"removed {count} source hash(es) from {root / 'keys'}")
    if graphs:
        count = len(_graph_entries(root))
        shutil.rmtree(root / "graphs", ignore_errors=True)
        print(f"removed {count} cached graph(s) from {root / 'graphs'}")
    if kernels:
        count = sum(1 for _ in disk_cache.entries(root))
        shutil.rmtree(disk_cache.kernels_dir(root), ignore_errors=True)
        print(f"removed {count} cached kernel(s) from {disk_cache.kernels_dir(root)}")
    if tuning:
        db = tuning_db.db_path(root)
        rows = tuning_db.count(db) if db is not None and db.exists() else 0
        if db is not None:
            tuning_db.clear(db)
        print(f"removed {rows} tuning result(s) ({db})")
    return 0


def cmd_stats(root: Path) -> int:
    entries = list(disk_cache.entries(root))
    total = sum(_size(e) for e in entries)
    damaged = sum(1 for e in entries if disk_cache.read_metadata(e) is None)
    db = tuning_db.db_path(root)
    db_rows = tuning_db.count(db) if db is not None and db.exists() else 0
    db_size = sum(_size(Path(f"{db}{s}")) for s in ("", "-wal", "-shm") if Path(f"{db}{s}").exists()) if db else 0
    print(f"cache directory: {root}")
    print(f"kernels:         {len(entries)} entries, {_human(total)}" + (f" ({damaged} damaged)" if damaged else ""))
    graphs = _graph_entries(root)
    graphs_size = _size(root / "graphs") if (root / "graphs").exists() else 0
    print(f"tuning results:  {db_rows} rows, {_human(db_size)}")
    print(f"graphs:          {len(graphs)} entries, {_human(graphs_size)}")
    print(f"total:           {_human(total + db_size + graphs_size)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_tile.cache",
                                     description="Inspect and clear inductor_tile's on-disk caches "
                                                 "(compiled kernels, compiled graphs and autotuning results).")
    parser.add_argument("--dir", type=Path, default=None,
                        help="cache directory (default: $TILE_CACHE_DIR, else ~/.cache/inductor_tile)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list cached kernels (name, target, size, age) and tuning results")
    clear = sub.add_parser("clear", help="delete cached kernels, graphs and/or tuning results (all by default)")
    clear.add_argument("--kernels", action="store_true", help="the compiled kernels")
    clear.add_argument("--graphs", action="store_true", help="the compiled graphs (graph_cache.py)")
    clear.add_argument("--tuning", action="store_true", help="the tuning database")
    sub.add_parser("stats", help="entry counts and total size")
    args = parser.parse_args(argv)
    root = args.dir if args.dir is not None else disk_cache.default_cache_dir()
    if args.command == "list":
        return cmd_list(root)
    if args.command == "clear":
        every = not (args.kernels or args.tuning or args.graphs)
        return cmd_clear(root, args.kernels or every, args.tuning or every, args.graphs or every, keys=every)
    return cmd_stats(root)


if __name__ == "__main__":
    sys.exit(main())
