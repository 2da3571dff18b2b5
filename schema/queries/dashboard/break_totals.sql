-- Graph breaks, uncounted breaks, recompiles, restarts and failures of the runs in view, summed
-- @internal used by the dashboards' pages
-- One row per kind: its run_metrics count summed over the runs whose files tell it (`total`, NULL
-- where no run's does), how many of those runs had one (`runs`), and how many runs it is unknown in
-- (`unknown_runs`: NULL in run_metrics, as for a profile, a debug tree, torch-spyre files, or a log
-- before 2.6 that cannot tell its breaks). Runs holding only a benchmark harness's results count too:
-- their graph_breaks is the harness's. `in_model` .. `in_stdlib`, `ran_eagerly`: the events of those
-- runs by where they happened (compile_events.origin) and, of failures, those the frame then ran eagerly
-- after (`eagerly_unknown`: those whose log does not say, a hard failure before 2.6); events of a run whose count of that kind is unknown are left out (a log before 2.6 lists
-- some breaks but cannot tell all).
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH m AS (
    SELECT * FROM run_metrics
    WHERE run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices,
                                                          'labels': $labels}))
), counts AS (
    SELECT run_id, 'graph_break' AS kind, graph_breaks AS n FROM m WHERE graph_breaks IS NOT NULL
    UNION ALL SELECT run_id, 'uncounted_break', uncounted_breaks FROM m WHERE uncounted_breaks IS NOT NULL
    UNION ALL SELECT run_id, 'recompile', recompiles FROM m WHERE recompiles IS NOT NULL
    UNION ALL SELECT run_id, 'restart', restarts FROM m WHERE restarts IS NOT NULL
    UNION ALL SELECT run_id, 'failure', failures FROM m WHERE failures IS NOT NULL
), located AS (
    SELECT c.kind,
           count(*) FILTER (WHERE e.origin = 'model')   AS in_model,
           count(*) FILTER (WHERE e.origin = 'package') AS in_packages,
           count(*) FILTER (WHERE e.origin = 'torch')   AS in_torch,
           count(*) FILTER (WHERE e.origin = 'stdlib')  AS in_stdlib,
           count(*) FILTER (WHERE e.fallback)           AS ran_eagerly,
           count(*) FILTER (WHERE e.kind = 'failure' AND e.fallback IS NULL) AS eagerly_unknown
    FROM counts c
    JOIN compile_events e ON e.run_id = c.run_id AND e.kind = c.kind
    GROUP BY c.kind
), kinds AS (
    SELECT * FROM (VALUES ('graph_break', 1), ('uncounted_break', 2), ('recompile', 3), ('restart', 4), ('failure', 5))
        AS k(kind, position)
)
SELECT
    k.kind,
    sum(c.n)::BIGINT                                            AS total,
    count(DISTINCT c.run_id) FILTER (WHERE c.n > 0)             AS runs,
    count(DISTINCT c.run_id)                                    AS known_runs,
    (SELECT count(*) FROM m) - count(DISTINCT c.run_id)         AS unknown_runs,
    coalesce(any_value(l.in_model), 0)                          AS in_model,
    coalesce(any_value(l.in_packages), 0)                       AS in_packages,
    coalesce(any_value(l.in_torch), 0)                          AS in_torch,
    coalesce(any_value(l.in_stdlib), 0)                         AS in_stdlib,
    coalesce(any_value(l.ran_eagerly), 0)                       AS ran_eagerly,
    coalesce(any_value(l.eagerly_unknown), 0)                   AS eagerly_unknown
FROM kinds k
LEFT JOIN counts c USING (kind)
LEFT JOIN located l USING (kind)
GROUP BY k.kind, k.position
ORDER BY k.position;
