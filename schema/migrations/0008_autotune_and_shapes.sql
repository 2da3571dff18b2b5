-- max-autotune: the candidates timed for each autotuned op and the winner. From the run's stderr
-- (TORCH_LOGS text: the AUTOTUNE tables, top candidates only, `num_choices` says how many were timed)
-- and from the trace (the `<op>_template_autotuning` span: the winner, with its compile id).
--   seq        the nth op autotuned in the run (tables and trace spans come in the same order)
--   rank       1 = fastest (the winner) ... ; time_ms and pct (of the winner's speed) as printed
CREATE TABLE autotune_choices (
    run_id       VARCHAR NOT NULL,
    compile_id   VARCHAR,
    seq          BIGINT,
    op           VARCHAR,     -- addmm, mm, bmm, convolution, ...
    shapes       VARCHAR,     -- the inputs' sizes as printed: 8x1024, 8x512, 512x1024
    strides      VARCHAR,
    dtypes       VARCHAR,
    num_choices  BIGINT,
    rank         BIGINT,
    choice       VARCHAR,     -- triton_mm_1, bias_addmm, ...
    config       VARCHAR,     -- BLOCK_M=16, ..., num_stages=2, num_warps=2 (empty for extern choices)
    time_ms      DOUBLE,
    pct          DOUBLE,
    winner       BOOLEAN,
    source       VARCHAR,     -- torch_logs | torch_trace
    line         BIGINT
);
-- Dynamic shapes, from the trace's shape-environment records, per compile:
--   kind  symbol (create_symbol) | unbacked_symbol | specialization (symbolic_shape_specialization:
--         a symbol pinned to a value) | guard (guard_added[_fast]) | automatic_dynamic (a dimension
--         made dynamic after it changed between calls)
CREATE TABLE shape_events (
    run_id      VARCHAR NOT NULL,
    compile_id  VARCHAR,
    kind        VARCHAR,
    symbol      VARCHAR,     -- s77, u0 (names differ across releases: compare sources)
    source      VARCHAR,     -- L['x'].size()[0]
    value       VARCHAR,     -- the hint, the specialized value, the new sizes
    expr        VARCHAR,     -- a guard's expression; a symbol's value range
    reason      VARCHAR,
    user_file   VARCHAR,
    user_line   BIGINT,
    user_code   VARCHAR,
    line        BIGINT
);
