"""Where a warehouse lives and how it is opened, created, locked, migrated and written, for a DuckDB
file and a DuckLake alike (docs/architecture.md lists the modules; protocol.py draws the locks)."""
