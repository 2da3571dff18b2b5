-- Compile events of one kind grouped by cause over the runs `f` picks (picked_runs' filters): the one
-- count behind graph_breaks/top_reasons, compile/recompile_reasons and the Graph breaks page's causes.
-- `cause`: Dynamo's registry id, pre-registry messages mapped onto it, a recompile's guard kind, else
-- the normalised reason (views/31_compile_event_reasons.sql); `reason`: the registry's title of the
-- cause, else one normalised reason of the group; `in_model` .. `in_stdlib`: where they happened
-- (compile_events.origin), every one counted; `failed_guards`: the guards that failed (a recompile's
-- compile_events.details); `example`: one normalised reason; `event_origin`: NULL, or only events of
-- that origin.
CREATE OR REPLACE MACRO event_causes(f, event_kind, event_origin) AS TABLE
    SELECT
        e.cause,
        min(e.cause_title)                           AS reason,
        count(*)                                     AS events,
        count(*) FILTER (WHERE e.origin = 'model')   AS in_model,
        count(*) FILTER (WHERE e.origin = 'package') AS in_packages,
        count(*) FILTER (WHERE e.origin = 'torch')   AS in_torch,
        count(*) FILTER (WHERE e.origin = 'stdlib')  AS in_stdlib,
        count(DISTINCT e.run_id)                     AS runs,
        count(DISTINCT r.workload)                   AS workloads,
        count(DISTINCT r.model)                      AS models,
        string_agg(DISTINCT r.model, ' ' ORDER BY r.model) AS model_list,
        string_agg(DISTINCT r.compiler_version, ' ' ORDER BY r.compiler_version) AS compiler_versions,
        mode(regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line
             ORDER BY regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS top_user_frame,
        sum(len(e.details))::BIGINT                  AS failed_guards,
        min(e.normalised)                            AS example
    FROM compile_event_reasons e
    JOIN run_workloads r USING (run_id)
    WHERE e.kind = event_kind
      AND (event_origin IS NULL OR e.origin = event_origin)
      AND r.run_id IN (SELECT run_id FROM picked_runs(f))
    GROUP BY e.cause;
