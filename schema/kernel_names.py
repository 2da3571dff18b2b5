"""What Inductor's generated-kernel names say, for the ingest (a kernel of the output code) and for
SQL (a profiled kernel's name): views/13_kernel_name_category.sql is written from here by
`make schema`, so both read one mapping.

Inductor names a Triton kernel `triton_<category[:3]>_<fused name>_<n>`, the category being the
one heuristics decorator its code imports (torch/_inductor/codegen/simd.py and
torch/_inductor/wrapper_benchmark.py, `_kernel_category_choices` and
get_kernel_category_by_source_code), and a C++ one `cpp_fused_<fused name>_<n>`.
"""

from __future__ import annotations

from inductor_warehouse.schema.ddl import VIEWS

TRITON_CATEGORIES = ("foreach", "persistent_reduction", "pointwise", "reduction", "split_scan", "template")
# a name's prefix is its category's first three letters, as Inductor cuts it
TRITON_PREFIX_CATEGORY = {category[:3]: category for category in TRITON_CATEGORIES}
VIEW_FILE = VIEWS / "13_kernel_name_category.sql"


def category_of_prefix(prefix: str) -> str | None:
    """`pointwise` for `poi`; None for a prefix Inductor gives no category (`unk`: no one decorator)."""
    return TRITON_PREFIX_CATEGORY.get(prefix)


def name_category_sql() -> str:
    """views/13_kernel_name_category.sql: the macro inductor_name_category, from TRITON_PREFIX_CATEGORY."""
    prefixes = "|".join(TRITON_PREFIX_CATEGORY)
    cases = "\n".join(f"                       WHEN '{p}' THEN '{c}'" for p, c in TRITON_PREFIX_CATEGORY.items())
    return f"""\
-- Written by `make schema` from schema/kernel_names.py (its TRITON_PREFIX_CATEGORY, which the ingest
-- reads too): edit that, not this file.

-- inductor_name_category(name): the category a kernel's name says when it has Inductor's
-- generated-kernel form, else NULL. Inductor names a Triton kernel
-- `triton_<category[:3]>_<fused name, empty without descriptive names>_<n>`
-- (torch/_inductor/codegen/simd.py, get_kernel_category_by_source_code) and a C++ one `cpp_fused_...`.
-- Used for a profiled kernel of a run with no output code to match names against.
CREATE OR REPLACE MACRO inductor_name_category(name) AS
    CASE WHEN regexp_matches(name, '^triton_({prefixes})_\\w*_\\d+$')
              THEN CASE substr(name, 8, 3)
{cases}
                   END
         WHEN regexp_matches(name, '^cpp_fused_\\w+$') THEN 'generated' END;
"""


def write_view() -> None:
    VIEW_FILE.write_text(name_category_sql())
