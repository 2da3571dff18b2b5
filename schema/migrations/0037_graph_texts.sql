-- The texts the provenance viewer shows beside each other: a graph's pre-grad graph (the graph
-- Inductor received), its post-grad graph and its generated code (the Python wrapper with its
-- Triton / C++ kernels, or AOTInductor's C++). Kept once by hash in graph_sources, as kernel
-- sources are: a model's code repeats from run to run, and a training step's forward and backward
-- graphs share one pre-grad graph.
CREATE TABLE graph_sources (
    text_hash  VARCHAR PRIMARY KEY,
    text       VARCHAR NOT NULL
);
CREATE TABLE graph_texts (
    run_id     VARCHAR NOT NULL,
    graph_id   VARCHAR NOT NULL,
    kind       VARCHAR NOT NULL,
    text_hash  VARCHAR NOT NULL,
    "source"   VARCHAR,
    run_key    BIGINT
);
