"""`iwh`, the command line: one module per command group under `cli/commands/`, registered in
`cli/main.py`. The top layer: it may import every other package, and none imports it."""
