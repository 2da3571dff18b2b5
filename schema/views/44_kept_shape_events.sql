-- The shape events of the attempts whose work Dynamo kept: a frame's compile that restarts (a
-- `restart` row of compile_events names the attempt: 1/0 goes on as 1/0_1) throws that attempt's
-- output graph and shape environment away, so its symbols, specializations and guards are none of
-- the compile's; counting them would double a release's counts wherever it restarts more.
CREATE OR REPLACE VIEW kept_shape_events AS
SELECT s.*
FROM shape_events s
ANTI JOIN (SELECT run_key, compile_id FROM compile_events WHERE kind = 'restart') r
    ON r.run_key = s.run_key AND r.compile_id = s.compile_id;
