# bash .probe/tvgaps.sh: h-tvgaps kernels (Swin masked softmax fused; stem copy with TILE_TILED_SHORT_DIMS), < 2 min.
. .probe/prelude.sh
timeout 140 python3 .probe/tvgaps.py 2>&1 | grep -v Warning | tail -20
