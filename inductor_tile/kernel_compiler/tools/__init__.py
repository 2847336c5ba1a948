"""Command-line tools: `tile_opt` (tile-opt)."""
