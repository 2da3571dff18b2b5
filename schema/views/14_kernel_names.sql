-- profiled_kernel_category(code_category, run_has_code, compile_id, name): a profiled kernel's
-- category when it is a generated kernel, else NULL (an extern call inside a compiled region, or an
-- eager kernel). Generated: the name of a kernel of the run's output code; with no output code in the
-- run, a kernel inside a compiled region whose name is Inductor's generated-kernel form.
CREATE OR REPLACE MACRO profiled_kernel_category(code_category, run_has_code, compile_id, name) AS
    coalesce(code_category,
             CASE WHEN NOT run_has_code AND compile_id IS NOT NULL THEN inductor_name_category(name) END);
