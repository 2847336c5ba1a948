"""``python -m inductor_tile.profile [--out DIR] script.py [args...]``: run a script as ``__main__``
under the profiler (as ``python -m cProfile`` does), print the profile and write its directory.

``python -m inductor_tile.profile --from-trace DIR [--out DIR2]``: the profile of an earlier GPU run
again, from the trace.json[.gz] and profile.json it wrote (``offline``)."""

from __future__ import annotations

import argparse
import os
import runpy
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_tile.profile",
                                     description="Profile the tile kernels a script runs, by the script's source lines.")
    parser.add_argument("--out", default="tile_profile", help="directory for trace.json, chart.html, profile.txt "
                                                               "(default: %(default)s)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="where the kernels run (default: cuda when available)")
    parser.add_argument("--limit", type=int, default=30, help="kernels and source lines printed (default: %(default)s; "
                                                                 "profile.txt has all)")
    parser.add_argument("--gzip-trace", action="store_true", help="write the trace as trace.json.gz")
    parser.add_argument("--from-trace", metavar="PATH", help="no script: read an earlier GPU run's trace.json[.gz] "
                                                               "(PATH, or a directory with it) and its profile.json")
    parser.add_argument("script", nargs="?", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)

    from . import Profiler, from_trace

    if options.from_trace:
        profiler = from_trace(options.from_trace)
        profiler.print(options.limit)
        paths = profiler.save(options.out, options.gzip_trace)
        print(f"\nwrote {paths['chart']}, {paths['trace']}, {paths['text']}")
        return 0
    if options.script is None:
        parser.error("a script to run, or --from-trace")

    script = os.path.abspath(options.script)
    sys.argv = [script, *options.args]
    sys.path.insert(0, os.path.dirname(script))
    profiler = Profiler(device=options.device)
    with profiler:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                print(f"inductor_tile.profile: {options.script} exited with {e.code}", file=sys.stderr)
    profiler.print(options.limit)
    paths = profiler.save(options.out, options.gzip_trace)
    print(f"\nwrote {paths['chart']}, {paths['trace']}, {paths['text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
