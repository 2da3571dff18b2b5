"""What SQL that people type may do (`iwh sql`, the dashboard's SQL console, `Warehouse.sql`): one
read statement that names only what a read of the warehouse needs. The check is an allow-list,
run on DuckDB's own parse of the statement (`json_serialize_sql`) before it runs:

- tables: the warehouse's own tables and views (and the statement's CTEs), a few
  information_schema views; nothing of another database (a lake's PostgreSQL catalog is attached
  beside it as `__ducklake_metadata_wh`), no file or Python variable named as a table;
- table functions: TABLE_FUNCTIONS and the warehouse's macros;
- scalar, aggregate and window functions: DuckDB's own (`read_functions.txt`, with a select list's
  unnest), less those that read or change the session (its settings, variables, sequences, random
  seed, log).

Anything else is refused, whatever DuckDB or an extension adds tomorrow: the PostgreSQL extension's
postgres_execute, postgres_scan and postgres_query reach servers (and wrote a lake's catalog
through its own attached session), read_* and sqlite_scan read files, and duckdb_settings(),
current_setting() and duckdb_databases() showed S3 keys and catalog passwords.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path

import duckdb

HERE = Path(__file__).parent
FUNCTIONS_FILE = HERE / "read_functions.txt"

READ_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
# table functions a read may call: numbers to join against, lists and JSON to unfold, and the
# catalog's description of the warehouse (names, columns, types, macro texts: no paths, settings)
TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "json_each", "json_tree",
    "duckdb_tables", "duckdb_views", "duckdb_columns", "duckdb_functions", "duckdb_schemas", "duckdb_types",
    "duckdb_constraints", "duckdb_indexes", "duckdb_keywords", "pragma_table_info",
})
INFORMATION_SCHEMA = frozenset({"tables", "columns", "schemata", "views", "table_constraints", "key_column_usage",
                                "referential_constraints"})
# DuckDB's own functions that a read does not need, left out of read_functions.txt: they read the
# session's settings and variables, or change its state (sequences, the random seed, its log)
SESSION_FUNCTIONS = frozenset({"current_setting", "getvariable", "nextval", "currval", "setseed", "write_log",
                               "pg_sleep", "sleep_ms"})
# a select list's unnest/unlist: the binder unfolds the list or struct it is given; duckdb_functions()
# lists unnest only as a table function (schema/queries/spyre/profiled_kernels.sql needs it)
SELECT_LIST_FUNCTIONS = frozenset({"unnest", "unlist"})
_EXPRESSIONS = frozenset({"AGGREGATE", "BETWEEN", "CASE", "CAST", "COLLATE", "COLUMN_REF", "COMPARISON",
                          "CONJUNCTION", "CONSTANT", "DEFAULT", "FUNCTION", "LAMBDA", "LAMBDA_REF", "OPERATOR",
                          "PARAMETER", "POSITIONAL_REFERENCE", "STAR", "SUBQUERY", "WINDOW"})
_TABLE_REFS = frozenset({"BASE_TABLE", "EMPTY", "EXPRESSION_LIST", "JOIN", "SHOW_REF", "SUBQUERY", "TABLE_FUNCTION"})
_QUERY_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
_EXPLAIN = re.compile(r"(?:\s|--[^\n]*\n|/\*.*?\*/)*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?", re.I | re.S)


class QueryRefused(duckdb.Error):
    """SQL the warehouse will not run for a reader; the message says why and what it takes."""


def check_read_statement(sql: str) -> set[str]:
    """Raise QueryRefused unless `sql` is one SELECT (WITH, FROM, VALUES, SHOW, DESCRIBE,
    SUMMARIZE...) or EXPLAIN of one that names only what the allow-list holds; return the names
    of its `$name` parameters."""
    with _PARSER_LOCK:
        statements = _parser().extract_statements(sql)
    if len(statements) != 1:
        raise QueryRefused(f"one statement at a time, please ({len(statements)} given)")
    kind, text = statements[0].type, statements[0].query
    if kind == duckdb.StatementType.EXPLAIN:
        m = _EXPLAIN.match(text)
        if not m:
            raise QueryRefused("EXPLAIN takes one SELECT here")
        text = text[m.end():]
    elif kind not in READ_STATEMENTS:
        raise QueryRefused(f"the warehouse is read-only here: {kind.name} statements are not run "
                           "(SELECT, SHOW, DESCRIBE, SUMMARIZE and EXPLAIN are)")
    try:
        _Check().node(_parse(text), frozenset())
    except RecursionError:
        raise QueryRefused("the statement is nested too deeply to be checked") from None
    return set(statements[0].named_parameters)


def _parse(text: str) -> dict:
    with _PARSER_LOCK:
        (serialized,) = _parser().execute("SELECT json_serialize_sql(?)", [text]).fetchall()
        parsed = json.loads(serialized[0])
    if parsed.get("error"):
        if parsed.get("error_type") == "parser":
            raise QueryRefused(parsed.get("error_message", "the statement does not parse"))
        raise QueryRefused("only plain SELECT statements are run here (PIVOT, PRAGMA and the like are not)")
    (statement,) = parsed["statements"]
    return statement["node"]


_PARSER_LOCK = threading.Lock()


@functools.cache
def _parser() -> duckdb.DuckDBPyConnection:
    """A connection of its own that only parses: the reader's connection never sees a refused text."""
    return duckdb.connect(":memory:", config={"autoload_known_extensions": False, "enable_external_access": False})


class _Check:
    def node(self, node, ctes: frozenset[str]) -> None:
        if isinstance(node, list):
            for item in node:
                self.node(item, ctes)
            return
        if not isinstance(node, dict):
            return
        if isinstance(node.get("cte_map"), dict):
            ctes = self.ctes(node["cte_map"]["map"], ctes)
        kind = node.get("type") if isinstance(node.get("type"), str) else None
        if "class" in node:
            self.expression(node)
        elif kind and kind.endswith("_NODE") and "modifiers" in node:
            if kind not in _QUERY_NODES:
                raise QueryRefused(f"a {kind} is not run here")
        elif kind and "alias" in node and "sample" in node:
            self.table_ref(node, ctes)
            if kind == "TABLE_FUNCTION":
                self.node(node["function"].get("children"), ctes)
                node = {k: v for k, v in node.items() if k != "function"}
        for key, value in node.items():
            if key != "cte_map":
                self.node(value, ctes)

    def ctes(self, entries: list[dict], outer: frozenset[str]) -> frozenset[str]:
        """The names in scope below a WITH: each CTE sees those before it, a recursive one itself."""
        scope = set(outer)
        for entry in entries:
            name = entry["key"].lower()
            recursive = entry["value"]["query"]["node"].get("type") == "RECURSIVE_CTE_NODE"
            self.node(entry["value"], frozenset(scope | ({name} if recursive else set())))
            scope.add(name)
        return frozenset(scope)

    def expression(self, node: dict) -> None:
        kind = node["class"]
        if kind not in _EXPRESSIONS:
            raise QueryRefused(f"a {kind} expression is not run here")
        if kind in ("FUNCTION", "WINDOW", "AGGREGATE"):
            name = node.get("function_name", "").lower()
            if not _builtin(node) or (name not in read_functions() and name not in warehouse_names()):
                raise QueryRefused(f"{name}() is not among the functions a read may call here "
                                   "(DuckDB's own, less those that read settings, variables or secrets)")

    def table_ref(self, node: dict, ctes: frozenset[str]) -> None:
        kind = node["type"]
        if kind not in _TABLE_REFS:
            raise QueryRefused(f"a {kind} is not read here")
        if kind == "TABLE_FUNCTION":
            function = node["function"]
            name = function.get("function_name", "").lower()
            if not _builtin(function) or (name not in TABLE_FUNCTIONS and name not in warehouse_names()):
                raise QueryRefused(f"{name}() is not read here: a read calls the warehouse's macros, range, "
                                   "generate_series, unnest, json_each, json_tree, pragma_table_info and the "
                                   "catalog's duckdb_tables()-like listings, nothing that reaches files, servers or settings")
        elif kind == "BASE_TABLE":
            _check_table(node.get("catalog_name", ""), node.get("schema_name", ""), node["table_name"], ctes)
        elif kind == "SHOW_REF" and node.get("query") is None:
            table = node.get("table_name", "").strip('"')
            if table != "tables":  # SHOW TABLES; SHOW name is DESCRIBE name
                _check_table(node.get("catalog_name", ""), node.get("schema_name", ""), table, ctes)


def _builtin(function: dict) -> bool:
    """Called by its bare name, or as a function of the main schema (as DuckDB's parser writes some)."""
    return function.get("catalog", "") in ("", "system") and function.get("schema", "") in ("", "main")


def _check_table(catalog: str, schema: str, name: str, ctes: frozenset[str]) -> None:
    table, schema, catalog = name.lower(), schema.lower(), catalog.lower()
    if not catalog and not schema and table in ctes:
        return
    if not catalog and schema == "information_schema" and table in INFORMATION_SCHEMA:
        return
    if not catalog and schema in ("", "main") and table in warehouse_names():
        return
    shown = ".".join(p for p in (catalog, schema, name) if p)
    raise QueryRefused(f"{shown} is not a table of the warehouse: a read names its tables and views (SHOW TABLES "
                       "lists them) and information_schema.tables, .columns and the like")


@functools.cache
def warehouse_names() -> frozenset[str]:
    """The warehouse's tables, views and macros, as this version makes them."""
    from inductor_warehouse.schema.ddl import current_tables, view_names

    views = {n.lower() for n in view_names()}
    return frozenset({name.lower() for name, _ in current_tables()} | views)


@functools.cache
def read_functions() -> frozenset[str]:
    return frozenset(line.strip() for line in FUNCTIONS_FILE.read_text().splitlines()
                     if line.strip() and not line.startswith("#"))


def read_functions_text() -> str:
    """read_functions.txt's text, made from the DuckDB installed: its own scalar, aggregate and
    window functions and macros (a connection without extensions) and a select list's
    SELECT_LIST_FUNCTIONS, less SESSION_FUNCTIONS."""
    bare = duckdb.connect(":memory:", config={"autoload_known_extensions": False})
    try:
        names = [n for (n,) in bare.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type IN "
            "('scalar', 'aggregate', 'macro') AND NOT starts_with(function_name, '__') "
            "ORDER BY function_name").fetchall() if n not in SESSION_FUNCTIONS]
    finally:
        bare.close()
    names = sorted(set(names) | SELECT_LIST_FUNCTIONS)
    head = (f"# Functions that SQL people type may call (schema/readonly.py): DuckDB {duckdb.__version__}'s own\n"
            "# scalar, aggregate and window functions and macros, and a select list's unnest, less those that\n"
            "# read or change the session.\n"
            "# Generated by `make schema`; do not edit. tests/test_read_only.py checks that it is current.\n")
    return head + "".join(f"{n}\n" for n in names)


def write_read_functions() -> None:
    FUNCTIONS_FILE.write_text(read_functions_text())
