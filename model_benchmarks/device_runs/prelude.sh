# sourced at the start of each device call: wheels into /tmp/site, the entry point's dist-info, PYTHONPATH
# once per machine (several jobs may source this at once on a multi-GPU machine)
if [ ! -e /tmp/site/.installed ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1 || { echo "wheel install failed"; exit 1; }
  touch /tmp/site/.installed
fi
mkdir -p /tmp/site/inductor_tile-0.1.0.dist-info
printf 'Metadata-Version: 2.1\nName: inductor-tile\nVersion: 0.1.0\n' > /tmp/site/inductor_tile-0.1.0.dist-info/METADATA
printf '[torch_dynamo_backends]\ntile = inductor_tile.backend:tile_backend\n' > /tmp/site/inductor_tile-0.1.0.dist-info/entry_points.txt
export PYTHONPATH=${PINNED:+$PINNED:}$PWD:/tmp/site PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
export MODEL_BENCHMARKS_COMMIT=${MODEL_BENCHMARKS_COMMIT:-$(cat .probe/COMMIT 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
