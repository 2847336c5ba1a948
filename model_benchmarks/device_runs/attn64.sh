# h-attn64 A/B on the GPU (< 150 s): causal attention d64/d128 x 64x64/4w, 128x64/8w; tile default,
# TILE_PIPELINE=nofence, =resident (q in a one-slot ring), =resident,nofence; Triton 3.6; two rounds each.
[ -f .probe/prelude.sh ] && . .probe/prelude.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} TILE_CACHE_DIR=/tmp/attn64_cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 140 python3 .probe/attn64.py 2>&1 | grep -v Warning | tail -25
