"""The bundled tile compiler: front end, IR, passes, targets and runtime."""
