#!/bin/bash
# h-gc (issue 18): a warm first call's garbage collections and tile's one-time CUDA costs, on the GPU.
#   .probe/gc.sh          compile_times of GPT-2 (cold, then warm; Inductor beside): the gc columns of the phase table
#                         and where each full collection began (~120 s)
#   .probe/gc.sh driver   tile's CUDA driver start (cuda.bindings import, cuInit, context) and the warm first launches
#                         of 6 small kernels, in fresh processes (~30 s)
set -e
[ -f .probe/prelude.sh ] && source .probe/prelude.sh
if [ "${1:-times}" = times ]; then
  python -m model_benchmarks.compile_times --device cuda --runs 1 --models GPT2ForSequenceClassification \
    > /tmp/gc_times.txt 2>&1 || true
  python .probe/gc_report.py /tmp/gc_times.txt
  exit 0
fi
CACHE=$(mktemp -d)
TILE_CACHE_DIR=$CACHE python .probe/gc_driver.py fill > /dev/null
for run in 1 2 3; do TILE_CACHE_DIR=$CACHE python .probe/gc_driver.py warm; done
