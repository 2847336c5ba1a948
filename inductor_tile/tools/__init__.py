"""Command-line tools around the torch.compile backend (``python -m inductor_tile.tools.<name>``)."""
