-- inductor_name_category(name): the category a kernel's name says when it has Inductor's
-- generated-kernel form, else NULL. Inductor names a Triton kernel
-- `triton_<category[:3]>_<fused name, empty without descriptive names>_<n>`
-- (torch/_inductor/codegen/simd.py, get_kernel_category_by_source_code) and a C++ one `cpp_fused_...`.
-- Used for a profiled kernel of a run with no output code to match names against.
CREATE OR REPLACE MACRO inductor_name_category(name) AS
    CASE WHEN regexp_matches(name, '^triton_(poi|red|per|tem|for|spl)_\w*_\d+$')
              THEN CASE substr(name, 8, 3) WHEN 'poi' THEN 'pointwise' WHEN 'red' THEN 'reduction'
                       WHEN 'per' THEN 'persistent_reduction' WHEN 'tem' THEN 'template'
                       WHEN 'for' THEN 'foreach' ELSE 'split_scan' END
         WHEN regexp_matches(name, '^cpp_fused_\w+$') THEN 'generated' END;

-- profiled_kernel_category(code_category, run_has_code, compile_id, name): a profiled kernel's
-- category when it is a generated kernel, else NULL (an extern call inside a compiled region, or an
-- eager kernel). Generated: the name of a kernel of the run's output code; with no output code in the
-- run, a kernel inside a compiled region whose name is Inductor's generated-kernel form.
CREATE OR REPLACE MACRO profiled_kernel_category(code_category, run_has_code, compile_id, name) AS
    coalesce(code_category,
             CASE WHEN NOT run_has_code AND compile_id IS NOT NULL THEN inductor_name_category(name) END);
