"""The docs are tested: the generated reference pages are current and complete, every table and
column says what it holds, the query library keeps the pages' own queries apart, the README stays a
README, and every link between the pages leads somewhere."""

from __future__ import annotations

import re
import subprocess

import pytest

from inductor_warehouse.schema import queries
from inductor_warehouse.schema.reference import described_schema, queries_markdown, tables_markdown
from tests.conftest import IWH, ROOT

DOCS = ROOT / "docs"
INTERNAL_AREAS = {"dashboard", "explore", "compare", "changes"}  # queries that serve the pages and commands


def _schema_objects() -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    """The tables, the views, and (table, column, comment) of every table column of a new warehouse."""
    con = described_schema()
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()]
        views = [r[0] for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND NOT internal").fetchall()]
        columns = con.execute(
            "SELECT c.table_name, c.column_name, coalesce(c.comment, '') FROM duckdb_columns() c "
            "JOIN duckdb_tables() t ON t.table_oid = c.table_oid WHERE c.database_name = current_database()").fetchall()
    finally:
        con.close()
    return tables, views, columns


def missing_from_docs(queries_page: str, tables_page: str) -> list[str]:
    """Canned queries, tables and views the pages do not describe."""
    tables, views, _ = _schema_objects()
    missing = [f"query {q.name}" for q in queries.all_queries() if f"`{q.name}`" not in queries_page]
    missing += [f"table {t}" for t in tables if f"### `{t}`" not in tables_page]
    missing += [f"view {v}" for v in views if f"### `{v}`" not in tables_page]
    return missing


def test_the_generated_pages_are_current():
    assert (DOCS / "queries.md").read_text() == queries_markdown(), "docs/queries.md is stale: run `make docs`"
    assert (DOCS / "tables.md").read_text() == tables_markdown(), "docs/tables.md is stale: run `make docs`"


def test_every_query_table_and_view_is_in_the_docs():
    queries_page, tables_page = (DOCS / "queries.md").read_text(), (DOCS / "tables.md").read_text()
    assert missing_from_docs(queries_page, tables_page) == []
    # and the check finds what a page leaves out
    dropped = re.sub(r"### `runs`\n", "", tables_page)
    dropped_query = queries_page.replace("`kernels/kernel_count_trend`", "")
    assert missing_from_docs(dropped_query, dropped) == ["query kernels/kernel_count_trend", "table runs"]


def test_every_table_column_view_and_macro_says_what_it_holds():
    tables, views, columns = _schema_objects()
    assert len(tables) > 30 and len(columns) > 400
    assert [f"{t}.{c}" for t, c, comment in columns if not comment.strip()] == []
    page = (DOCS / "tables.md").read_text()
    empty = re.findall(r"^### `(\w+)`\n\n\n", page, re.M)  # a heading with nothing under it
    assert empty == []


def test_comments_name_only_what_exists(tmp_path, monkeypatch):
    """schema/comments.sql describes only columns the schema has: the docs are made from a schema
    with the comments applied (described_schema), which refuses a comment on a column that is gone."""
    import duckdb

    from inductor_warehouse.schema import reference

    stale = tmp_path / "comments.sql"
    stale.write_text(reference.COMMENTS.read_text() + "\nCOMMENT ON COLUMN runs.\"dropped_column\" IS 'gone';\n")
    monkeypatch.setattr(reference, "COMMENTS", stale)
    with pytest.raises(duckdb.Error, match="dropped_column"):
        reference.described_schema()


def test_the_pages_own_queries_are_marked_internal():
    wrong = [q.name for q in queries.all_queries() if bool(q.internal) != (q.area in INTERNAL_AREAS)]
    assert wrong == []


def test_iwh_queries_lists_the_library_and_all_with_all():
    public = {q.name for q in queries.all_queries() if not q.internal}
    internal = {q.name for q in queries.all_queries() if q.internal}
    assert len(public) > 30 and len(internal) > 30
    listed = subprocess.run([*IWH, "queries", "--format", "csv"], capture_output=True, text=True, check=True).stdout
    names = {line.split(",")[0] for line in listed.splitlines()[1:]}
    assert names == public
    listed = subprocess.run([*IWH, "queries", "--all", "--format", "csv"], capture_output=True, text=True,
                            check=True).stdout
    assert {line.split(",")[0] for line in listed.splitlines()[1:]} == public | internal
    assert "used by the Run explorer page" in listed


def test_the_readme_is_short_and_every_link_leads_somewhere():
    readme = ROOT / "README.md"
    assert len(readme.read_text().splitlines()) < 200
    pages = [readme, ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"\w+://|#|mailto:", target):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text()
    unlisted = [p.relative_to(DOCS).as_posix() for p in sorted(DOCS.rglob("*.md"))
                if p.name != "README.md" and f"({p.relative_to(DOCS).as_posix()})" not in index]
    assert unlisted == []
