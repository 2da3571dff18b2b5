"""What SQL that people type may do (`iwh sql`, the dashboard's SQL console, `Warehouse.sql`): one
read statement that reads only the warehouse. DuckDB decides what every name in it refers to; this
module only compares DuckDB's answers with two allow-lists, before the statement runs:

- its parser (`json_serialize_sql`, `check_read_statement`): one SELECT (or EXPLAIN of one); table
  functions among TABLE_FUNCTIONS and the warehouse's macros; scalar, aggregate and window
  functions among DuckDB's own (`read_functions.txt`), less those that read or change the session;
  names of tables that are the warehouse's own, a few information_schema views, or a CTE of the
  statement. Which of those a name means where it stands is not decided here (SQL's scoping rules,
  which a CTE named after a system view or a file used to walk around), but by
- its binder (`json_serialize_plan`, `bound_plan.check_bound_plan`, on the reader's own connection): every scan
  in the bound plan reads a table of the warehouse's own database or calls an allowed table
  function, and every function the plan calls is on the list.

Anything else is refused, whatever DuckDB or an extension adds tomorrow: the PostgreSQL extension's
postgres_execute, postgres_scan and postgres_query reach servers (and wrote a lake's catalog
through its own attached session), read_* and sqlite_scan read files, and duckdb_settings(),
current_setting() and duckdb_databases() showed S3 keys and catalog passwords. Below both lists,
the reader's connection itself holds nothing else to reach (store/bounds.py).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
# session's settings and variables, or change its state (sequences, the random seed, its log), or
# bind SQL given as text (json_serialize_plan, whose optimizer folds a setting's value into its answer)
SESSION_FUNCTIONS = frozenset({"current_setting", "getvariable", "nextval", "currval", "setseed", "write_log",
                               "pg_sleep", "sleep_ms", "json_serialize_plan"})
# a select list's unnest/unlist: the binder unfolds the list or struct it is given; duckdb_functions()
# lists unnest only as a table function (schema/queries/spyre/profiled_kernels.sql needs it)
SELECT_LIST_FUNCTIONS = frozenset({"unnest", "unlist"})
_EXPRESSIONS = frozenset({"AGGREGATE", "BETWEEN", "CASE", "CAST", "COLLATE", "COLUMN_REF", "COMPARISON",
                          "CONJUNCTION", "CONSTANT", "DEFAULT", "FUNCTION", "LAMBDA", "LAMBDA_REF", "OPERATOR",
                          "PARAMETER", "POSITIONAL_REFERENCE", "STAR", "SUBQUERY", "WINDOW"})
_TABLE_REFS = frozenset({"BASE_TABLE", "EMPTY", "EXPRESSION_LIST", "JOIN", "SHOW_REF", "SUBQUERY", "TABLE_FUNCTION"})
_QUERY_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
EXPLAIN_PREFIX = re.compile(r"(?:\s|--[^\n]*\n|/\*.*?\*/)*EXPLAIN\b\s*(?:ANALY[SZ]E\b\s*)?", re.I | re.S)
# an EXPLAIN's options list, `(ANALYZE, FORMAT json)`: option names, each with one word, number or
# string; DuckDB also takes a parenthesised query there, `EXPLAIN (SELECT ...)`, told apart by its first word
_OPTION = r"[a-z_][a-z0-9_$]*(?:\s+(?:'(?:[^']|'')*'|[-+]?[a-z0-9_.$]+))?"
_EXPLAIN_OPTIONS = re.compile(rf"\(\s*({_OPTION})\s*(?:,\s*{_OPTION}\s*)*\)\s*", re.I)


class QueryRefused(duckdb.Error):
    """SQL the warehouse will not run for a reader; the message says why and what it takes."""


@dataclass(frozen=True)
class ReadStatement:
    """A statement check_read_statement let through: its text as DuckDB's parser split it out of what
    was typed (what is checked is what is bound and run), and the names of its `$name` parameters."""
    text: str
    parameters: frozenset[str]


def check_read_statement(sql: str, stopped: Callable[[], bool] | None = None) -> ReadStatement:
    """Raise QueryRefused unless `sql` is one SELECT (WITH, FROM, VALUES, SHOW, DESCRIBE,
    SUMMARIZE...) or EXPLAIN of one that names only what the allow-list holds. The reader's
    connection then checks its bound plan (check_bound_plan). `stopped`: whether the caller's time
    is up (store/bounds.py), asked between the steps and while walking the parse; then the check
    stops with DuckDB's InterruptException, as an interrupted statement does."""
    stop = Stop(stopped)
    with parsing() as cursor:
        statements = cursor.extract_statements(sql)
    if len(statements) != 1:
        raise QueryRefused(f"one statement at a time, please ({len(statements)} given)")
    kind, text = statements[0].type, statements[0].query
    if kind == duckdb.StatementType.EXPLAIN:
        text = explained(text)
    elif kind not in READ_STATEMENTS:
        raise QueryRefused(f"the warehouse is read-only here: {kind.name} statements are not run "
                           "(SELECT, SHOW, DESCRIBE, SUMMARIZE and EXPLAIN are)")
    stop()
    node = serialized(text)["node"]
    stop()
    try:
        _Check(_cte_names(node, stop), stop).node(node)
    except RecursionError:
        raise QueryRefused("the statement is nested too deeply to be checked") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise unknown_shape(e) from None
    return ReadStatement(statements[0].query, frozenset(statements[0].named_parameters))


def explained(text: str) -> str:
    """The statement an EXPLAIN (one statement's text, as DuckDB split it out) explains: what follows
    `EXPLAIN`, `ANALYZE` and an options list, whose first name is not one of DuckDB's reserved words
    (a query's SELECT, FROM, WITH, TABLE or a parenthesis is) unless it is ANALYZE."""
    m = EXPLAIN_PREFIX.match(text)
    if not m:
        raise QueryRefused("EXPLAIN takes one SELECT here")
    rest = text[m.end():]
    options = _EXPLAIN_OPTIONS.match(rest)
    if options:
        first = options[1].split()[0].lower()
        if first in ("analyze", "analyse") or first not in _reserved_words():
            rest = rest[options.end():]
    if not rest.strip():
        raise QueryRefused("EXPLAIN takes one SELECT here")
    return rest


def unknown_shape(e: Exception) -> QueryRefused:
    """A parse or plan of a shape the check does not know (a DuckDB release's new form): refused, not a traceback."""
    return QueryRefused(f"the statement has a form this check does not know ({type(e).__name__}: {e}); "
                        "it is not run here")


def serialized(text: str) -> dict:
    """DuckDB's parse of one statement (`json_serialize_sql`): its node and its parameters."""
    with parsing() as cursor:
        parsed = json.loads(cursor.execute("SELECT json_serialize_sql(?)", [text]).fetchone()[0])  # type: ignore[index]
    if parsed.get("error"):
        if parsed.get("error_type") == "parser":
            raise QueryRefused(parsed.get("error_message", "the statement does not parse"))
        raise QueryRefused("only plain SELECT statements are run here (PIVOT, PRAGMA and the like are not)")
    if len(parsed.get("statements") or []) != 1:
        raise QueryRefused(f"one SELECT statement at a time, please ({len(parsed.get('statements') or [])} given)")
    return parsed["statements"][0]


PARSER_LOCK = threading.Lock()


@contextlib.contextmanager
def parsing() -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of the parser's connection, for one check: checks in several threads (the console's
    users) parse at once instead of one after another behind a long statement."""
    with PARSER_LOCK:
        cursor = parser().cursor()
    try:
        yield cursor
    finally:
        with PARSER_LOCK:
            cursor.close()


class Stop:
    """Asks the caller's `stopped` every STOP_EVERY calls (and at each step): the walk of a long
    statement's parse takes as long as its parse."""

    def __init__(self, stopped: Callable[[], bool] | None):
        self.stopped, self.calls = stopped, 0

    def __call__(self, every: int = 1) -> None:
        self.calls += 1
        if self.stopped is not None and self.calls % every == 0 and self.stopped():
            raise duckdb.InterruptException("the statement's check was stopped at the time limit")


STOP_EVERY = 4096


@functools.cache
def parser() -> duckdb.DuckDBPyConnection:
    """A connection of its own that only parses: the reader's connection never sees a refused text."""
    return duckdb.connect(":memory:", config={"autoload_known_extensions": False, "enable_external_access": False})


@functools.cache
def _reserved_words() -> frozenset[str]:
    with PARSER_LOCK:
        rows = parser().execute("SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'").fetchall()
    return frozenset(n.lower() for (n,) in rows)


def _cte_names(node, stop: Stop | None = None) -> frozenset[str]:
    """The names of every CTE the statement defines, wherever it defines them: a name of the
    statement may mean one of them, or the warehouse's table of that name; the binder says which.
    A CTE may not take the name of DuckDB's own views and table functions, nor of a file: a name that
    is both would be the view's where the CTE is not in scope (its own anchor, or before it)."""
    names: set[str] = set()
    for found in walk(node):
        if stop is not None:
            stop(STOP_EVERY)
        if isinstance(found.get("cte_map"), dict):
            for entry in found["cte_map"]["map"]:
                name = entry["key"].lower()
                if not _IDENTIFIER.match(name) or name in _system_names():
                    raise QueryRefused(f"a CTE named {entry['key']!r} is not run here: DuckDB has a view, table "
                                       "function or file of that name; name it otherwise")
                names.add(name)
    return frozenset(names)


_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_$]*$")


@functools.cache
def _system_names() -> frozenset[str]:
    """The views and table functions a bare name reaches in a DuckDB without extensions."""
    with PARSER_LOCK:
        rows = parser().execute(
            "SELECT view_name FROM duckdb_views() WHERE internal AND schema_name IN ('main', 'pg_catalog') "
            "UNION SELECT function_name FROM duckdb_functions() WHERE function_type IN ('table', 'table_macro')").fetchall()
    return frozenset(n.lower() for (n,) in rows)


def walk(node):
    """Every dict in a parsed or bound tree, depth first (the tree's depth is DuckDB's, bounded by its parser)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class _Check:
    def __init__(self, ctes: frozenset[str], stop: Stop | None = None):
        self.ctes, self.stop = ctes, stop or Stop(None)

    def node(self, root) -> None:
        stack = [root]
        while stack:
            self.stop(STOP_EVERY)
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            if not isinstance(item, dict):
                continue
            kind = item.get("type") if isinstance(item.get("type"), str) else None
            if "class" in item:
                self.expression(item)
            elif kind and kind.endswith("_NODE") and "modifiers" in item:
                if kind not in _QUERY_NODES:
                    raise QueryRefused(f"a {kind} is not run here")
            elif kind and "alias" in item and "sample" in item:
                self.table_ref(item)
                if kind == "TABLE_FUNCTION":  # its name is a table function's, its arguments expressions
                    stack.extend(item["function"].get("children") or [])
                    stack.extend(v for k, v in item.items() if k != "function")
                    continue
            stack.extend(item.values())

    def expression(self, node: dict) -> None:
        kind = node["class"]
        if kind not in _EXPRESSIONS:
            raise QueryRefused(f"a {kind} expression is not run here")
        if kind in ("FUNCTION", "WINDOW", "AGGREGATE"):
            name = node.get("function_name", "").lower()
            if not _builtin(node) or (name not in read_functions() and name not in warehouse_names()):
                raise QueryRefused(not_callable(name))

    def table_ref(self, node: dict) -> None:
        kind = node["type"]
        if kind not in _TABLE_REFS:
            raise QueryRefused(f"a {kind} is not read here")
        if kind == "TABLE_FUNCTION":
            function = node["function"]
            name = function.get("function_name", "").lower()
            if not _builtin(function) or (name not in TABLE_FUNCTIONS and name not in warehouse_names()):
                raise QueryRefused(not_readable(name))
            if name == "pragma_table_info":
                _check_described(function.get("children") or [])
        elif kind == "BASE_TABLE":
            _check_table(node.get("catalog_name", ""), node.get("schema_name", ""), node["table_name"], self.ctes)
        elif kind == "SHOW_REF" and node.get("query") is None:
            table = node.get("table_name", "").strip('"')
            if table != "tables":  # SHOW TABLES; SHOW name is DESCRIBE name
                _check_table(node.get("catalog_name", ""), node.get("schema_name", ""), table, frozenset())


def _check_described(arguments: list) -> None:
    """pragma_table_info's one argument: the name of a table of the warehouse, as a constant (DuckDB
    looks the name up in every database it has attached)."""
    value = arguments[0].get("value", {}) if len(arguments) == 1 and arguments[0].get("class") == "CONSTANT" else {}
    name = str(value.get("value", "")).lower().removeprefix("main.").strip('"')
    if name not in warehouse_names():
        raise QueryRefused("pragma_table_info() takes the name of a table of the warehouse, as text: "
                           "pragma_table_info('runs')")


def not_callable(name: str) -> str:
    return (f"{name}() is not among the functions a read may call here "
            "(DuckDB's own, less those that read settings, variables or secrets)")


def not_readable(name: str) -> str:
    return (f"{name}() is not read here: a read calls the warehouse's macros, range, generate_series, unnest, "
            "json_each, json_tree, pragma_table_info and the catalog's duckdb_tables()-like listings, nothing "
            "that reaches files, servers or settings")


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
    raise QueryRefused(not_a_table(".".join(p for p in (catalog, schema, name) if p)))


def not_a_table(shown: str) -> str:
    return (f"{shown} is not a table of the warehouse: a read names its tables and views (SHOW TABLES lists "
            "them) and information_schema.tables, .columns and the like")


# ---- the lists -----------------------------------------------------------------------------------

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
