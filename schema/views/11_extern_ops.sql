-- extern_op(kernel_name): the ATen (or custom) op an extern call site of the generated code calls,
-- as the profiler names the CPU op: `extern_kernels.mm` -> `aten::mm`,
-- `torch.ops.aten._scaled_dot_product_efficient_attention.default` ->
-- `aten::_scaled_dot_product_efficient_attention`, `aten.scatter_reduce_.two` -> `aten::scatter_reduce_`.
-- Profiled kernels launched inside that op carry it in timings.launched_by, and which of the graph's
-- calls of it launched them in timings.launch_index: the graph's extern call sites of one op, in
-- order (kernels.site), take those indexes 0, 1, ...
CREATE OR REPLACE MACRO extern_op(kernel_name) AS
    CASE WHEN starts_with(kernel_name, 'extern_kernels.') THEN 'aten::' || split_part(kernel_name, '.', 2)
         ELSE split_part(regexp_replace(kernel_name, '^torch\.ops\.', ''), '.', 1) || '::'
              || split_part(regexp_replace(kernel_name, '^torch\.ops\.', ''), '.', 2) END;
