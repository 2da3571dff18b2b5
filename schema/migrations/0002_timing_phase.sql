-- Profiler kernel times are attributed to a compile id and a phase (forward kernels run inside
-- CompiledFunction, backward ones inside CompiledFunctionBackward); the phase picks the graph.
ALTER TABLE timings ADD COLUMN phase VARCHAR;
-- Spyre debug handles are 63-bit ids.
ALTER TABLE kernels ALTER debug_handle TYPE BIGINT;
ALTER TABLE lineage ALTER debug_handle TYPE BIGINT;
