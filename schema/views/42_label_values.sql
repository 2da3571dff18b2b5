-- Run labels as (run_id, key, value) rows, scalar values only, and the label keys worth offering as
-- filters or compare sides: 2 to 12 short values across the warehouse (variant, mode, dtype...);
-- per-run values such as wall times or commit hashes would make useless choices.
CREATE OR REPLACE VIEW run_label_values AS
-- kept at ingest as run_tallies of kind 'label' (key=value; a key holds no '=')
SELECT run_id, split_part(name, '=', 1) AS k, substr(name, strpos(name, '=') + 1) AS v
FROM run_tallies
WHERE kind = 'label';

CREATE OR REPLACE VIEW choice_label_keys AS
SELECT k
FROM run_label_values
GROUP BY k
HAVING count(DISTINCT v) BETWEEN 2 AND 12 AND max(length(v)) <= 32;
