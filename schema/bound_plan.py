"""The binder's answer (the second wall of schema/readonly.py): the plan DuckDB's binder makes of a
statement that the allow-list let through, on the reader's own connection, unoptimized (what each name
was bound to, before the optimizer drops what it proves empty), must scan only the warehouse's own
tables and the allowed table functions, and call only allowed functions."""

from __future__ import annotations

import json
from collections.abc import Callable

import duckdb

from inductor_warehouse.schema.readonly import (EXPLAIN_PREFIX, STOP_EVERY, TABLE_FUNCTIONS, QueryRefused, Stop, explained,
                                                not_a_table,
                                                not_callable, not_readable, parsing, read_functions, serialized,
                                                unknown_shape, walk, warehouse_names)

# what a bound read plan is made of: anything else (a write, a copy to a file, a pragma) is refused
_PLAN_OPERATORS = frozenset({
    "PROJECTION", "FILTER", "AGGREGATE_AND_GROUP_BY", "WINDOW", "UNNEST", "LIMIT", "ORDER_BY", "TOP_N",
    "DISTINCT", "SAMPLE", "PIVOT", "GET", "CHUNK_GET", "DELIM_GET", "EXPRESSION_GET", "DUMMY_SCAN",
    "EMPTY_RESULT", "CTE_REF", "COMPARISON_JOIN", "ANY_JOIN", "DEPENDENT_JOIN", "DELIM_JOIN", "POSITIONAL_JOIN",
    "ASOF_JOIN", "CROSS_PRODUCT", "UNION", "EXCEPT", "INTERSECT", "RECURSIVE_CTE", "MATERIALIZED_CTE",
    "EXPLAIN", "SHOW", "COLUMN_DATA_GET"})
# the table functions that scan a database's tables: file warehouses' and lakes'
_TABLE_SCANS = frozenset({"seq_scan", "ducklake_scan"})
_FUNCTION_EXPRESSIONS = frozenset({"BOUND_FUNCTION", "BOUND_AGGREGATE", "BOUND_WINDOW"})


def check_bound_plan(con: duckdb.DuckDBPyConnection, sql: str, database: str, params: dict | list | None = None,
                     stopped: Callable[[], bool] | None = None) -> None:
    """Raise QueryRefused unless DuckDB's binder, on the reader's connection `con`, binds `sql` (one
    statement check_read_statement let through, with `params`) to a plan that reads only tables of
    `database` (the warehouse's) and the allowed table functions, and calls only the allowed functions.
    Binding reads no data; a DESCRIBE of a query is checked on the query it describes."""
    stop = Stop(stopped)
    try:
        for plan in bound_plans(con, sql, params):
            for item in walk(plan):
                stop(STOP_EVERY)
                _check_bound(item, database)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise unknown_shape(e) from None


def bound_plans(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None) -> list:
    """The plans DuckDB's binder on `con` makes of `sql` (an EXPLAIN's statement; a DESCRIBE's query
    too), unoptimized: what each name was bound to, before the optimizer drops what it proves empty.
    Its parameters are bound as the constants they will be (NULL where not given): DuckDB 1.5 cannot
    serialize some plans that hold a parameter (one in a macro's regexp_matches)."""
    text = explained(sql) if EXPLAIN_PREFIX.match(sql) else sql
    statement = serialized(text)
    if any(item.get("class") == "PARAMETER" for item in walk(statement)):
        statement = _with_values(statement, params)
        text = _deserialized(statement)
    plans = []
    for query in [text, *(_deserialized({"node": q, "named_param_map": []}) for q in _described(statement))]:
        plan = json.loads(con.execute("SELECT json_serialize_plan(?)", [query]).fetchone()[0])  # type: ignore[index]
        if plan.get("error"):
            if plan.get("error_type") == "not implemented":  # a scan DuckDB cannot describe: another server's
                raise QueryRefused("the statement reads something that is not the warehouse's "
                                   f"({plan.get('error_message', '')})")
            raise duckdb.BinderException(plan.get("error_message") or "the statement does not bind")
        plans.append(plan["plans"])
    return plans


def _check_bound(item: dict, database: str) -> None:
    kind = item.get("type")
    if isinstance(kind, str) and kind.startswith("LOGICAL_"):
        operator = kind[len("LOGICAL_"):]
        if operator not in _PLAN_OPERATORS:
            raise QueryRefused(f"a {operator} is not run here")
        if operator == "GET":
            _check_scan(item, database)
    elif item.get("expression_class") in _FUNCTION_EXPRESSIONS and "name" in item:  # a built-in window's has none
        name = str(item["name"]).lower()
        if name not in read_functions() and not name.startswith("__internal"):
            raise QueryRefused(not_callable(name))


def _check_scan(get: dict, database: str) -> None:
    name = str(get.get("name", "")).lower()
    data = get.get("function_data") or {}
    if name in _TABLE_SCANS:
        catalog = data.get("catalog", data.get("catalog_name"))
        schema = data.get("schema", data.get("schema_name"))
        table = str(data.get("table", data.get("table_name", "")))
        if catalog == database and schema == "main" and table.lower() in warehouse_names():
            return
        raise QueryRefused(not_a_table(".".join(str(p) for p in (catalog, schema, table) if p)))
    if get.get("catalog_name", "") in ("", "system") and get.get("schema_name", "") in ("", "main") \
            and name in TABLE_FUNCTIONS:
        return
    raise QueryRefused(not_readable(name))


def _deserialized(statement: dict) -> str:
    with parsing() as cursor:
        return cursor.execute("SELECT json_deserialize_sql(?::JSON)",  # type: ignore[index]
                              [json.dumps({"error": False, "statements": [statement]})]).fetchone()[0]


def _described(statement: dict) -> list[dict]:
    """The queries a DESCRIBE of a query describes: its plan holds their columns, not their scans."""
    return [item["query"] for item in walk(statement) if item.get("type") == "SHOW_REF" and isinstance(item.get("query"), dict)]


def _with_values(statement: dict, params: dict | list | None) -> dict:
    """The parsed statement with each `$name` (or `?`) parameter replaced by its value, as a constant."""
    def replaced(node):
        if isinstance(node, list):
            return [replaced(item) for item in node]
        if not isinstance(node, dict):
            return node
        if node.get("class") == "PARAMETER":
            return {**_constant(_value_of(params, str(node.get("identifier", "")))), "alias": node.get("alias", "")}
        return {k: replaced(v) for k, v in node.items()}

    return {**replaced(statement), "named_param_map": []}


def _value_of(params: dict | list | None, identifier: str):
    if isinstance(params, dict):
        return params.get(identifier)
    if isinstance(params, (list, tuple)) and identifier.isdigit() and 0 < int(identifier) <= len(params):
        return params[int(identifier) - 1]
    return None


_CONSTANT_TYPES = ((bool, "BOOLEAN"), (int, "BIGINT"), (float, "DOUBLE"))


def _constant(value) -> dict:
    if value is None:
        typed = {"type": {"id": "NULL", "type_info": None}, "is_null": True}
    else:
        kind = next((name for py, name in _CONSTANT_TYPES if isinstance(value, py)), "VARCHAR")
        typed = {"type": {"id": kind, "type_info": None}, "is_null": False,
                 "value": str(value) if kind == "VARCHAR" else value}
    return {"class": "CONSTANT", "type": "VALUE_CONSTANT", "alias": "", "query_location": 0, "value": typed}
