#!/bin/bash
# h-warm (issue 18): warm start on the GPU.  Carry .probe (nv.pkl: the 155 recorded sm_90 kernels of the 4 small
# models; warm_base/: inductor_tile at 20407e9, before h-warm).
#   .probe/warm.sh          compile_times of GPT-2, cold and warm, Inductor beside (~110 s)
#   .probe/warm.sh loads    warm-load host cost of the 155 kernels, real driver: base (20407e9) vs this tree,
#                           alternating, 2 rounds x 3 processes each (~120 s)
set -e
[ -f .probe/prelude.sh ] && source .probe/prelude.sh
REPO=$PWD
if [ "${1:-times}" = times ]; then
  python -m model_benchmarks.compile_times --device cuda --runs 1 --models GPT2ForSequenceClassification 2>&1 \
    | grep -v "^$" | grep -v "^GPT2ForSequenceClassification \(tile\|inductor\):" | cut -c1-400
  exit 0
fi
WORK=$(mktemp -d); cd $WORK   # not the repo: the package copy first on PYTHONPATH is the one imported
declare -A PKG=([base]=$REPO/.probe/warm_base [this]=$REPO)
for v in base this; do   # entries keyed by each version's own kernel keys
  PYTHONPATH=${PKG[$v]}:$REPO:$PYTHONPATH python -m model_benchmarks.nvidia_warm_loads --fill $REPO/.probe/nv.pkl \
    --cache $WORK/cache_$v --any-compiler --target cuda:90 2>&1 | tail -1
done
echo "version | module | key | entry | runner | total (CPU s, 155 kernels, median of 3 processes) | per kernel | first"
for round in 1 2; do
  for v in base this; do
    printf "%-5s " $v
    PYTHONPATH=${PKG[$v]}:$REPO:$PYTHONPATH python -m model_benchmarks.nvidia_warm_loads --load $REPO/.probe/nv.pkl \
      --cache $WORK/cache_$v --any-compiler --target cuda:90 --driver real --runs 3 2>&1 | sed -n 4p
  done
done
PYTHONPATH=$REPO:$PYTHONPATH python -m model_benchmarks.nvidia_warm_loads --load $REPO/.probe/nv.pkl --cache $WORK/cache_this \
  --any-compiler --target cuda:90 --driver real --runs 1 --profile 40 2>&1 | grep -E "ncalls|cuda|cuModule|cuFunc|_load\b|CUDAKernel" | cut -c1-160 | head -12
