-- A run's cache time saved (run_rollups.time_saved_s) summed every hit's saving, though the caches
-- nest: an AOTAutograd hit's saving holds the Inductor compile the FX graph cache's hit of the same
-- compile also reports (a warm compile "saved" 13.4 s of a 7.3 s cold one). run_rollups_of now takes
-- each compile's outermost hits. The rollups are made again by the migration's caller.
DELETE FROM run_rollups;
