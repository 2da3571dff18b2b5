"""The command groups of `iwh`, one module each; `cli/main.py` registers them."""
