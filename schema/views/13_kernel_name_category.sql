-- Written by `make schema` from schema/kernel_names.py (its TRITON_PREFIX_CATEGORY, which the ingest
-- reads too): edit that, not this file.

-- inductor_name_category(name): the category a kernel's name says when it has Inductor's
-- generated-kernel form, else NULL. Inductor names a Triton kernel
-- `triton_<category[:3]>_<fused name, empty without descriptive names>_<n>`
-- (torch/_inductor/codegen/simd.py, get_kernel_category_by_source_code) and a C++ one `cpp_fused_...`.
-- Used for a profiled kernel of a run with no output code to match names against.
CREATE OR REPLACE MACRO inductor_name_category(name) AS
    CASE WHEN regexp_matches(name, '^triton_(for|per|poi|red|spl|tem)_\w*_\d+$')
              THEN CASE substr(name, 8, 3)
                       WHEN 'for' THEN 'foreach'
                       WHEN 'per' THEN 'persistent_reduction'
                       WHEN 'poi' THEN 'pointwise'
                       WHEN 'red' THEN 'reduction'
                       WHEN 'spl' THEN 'split_scan'
                       WHEN 'tem' THEN 'template'
                   END
         WHEN regexp_matches(name, '^cpp_fused_\w+$') THEN 'generated' END;
