-- Run labels as (run_id, key, value) rows, scalar values only, and the label keys worth offering as
-- filters or compare sides: 2 to 12 short values across the warehouse (variant, mode, dtype...);
-- per-run values such as wall times or commit hashes would make useless choices.
CREATE OR REPLACE VIEW run_label_values AS
SELECT r.run_id, j.key AS k, j.value ->> '$' AS v
FROM runs r, json_each(r.labels) AS j
WHERE j.type IN ('VARCHAR', 'BIGINT', 'UBIGINT', 'BOOLEAN');

CREATE OR REPLACE VIEW choice_label_keys AS
SELECT k
FROM run_label_values
GROUP BY k
HAVING count(DISTINCT v) BETWEEN 2 AND 12 AND max(length(v)) <= 32;
