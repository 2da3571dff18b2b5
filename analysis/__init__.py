"""Questions over many runs. `compare` puts two selections of runs side by side (what the selectors
pick: `selectors`; the workloads they pair: `pairing`; each metric judged: `metrics`, by the rules
of `regress`; the harness's suite numbers: `hud`; configs: `configs`), `kernel_diff` goes down to
the kernels (paired by `kernel_match`), `changes` finds where a series of runs changed, and `render`
writes the results out. Reads the warehouse through `schema` (canned queries: `rows`); never imports
the ingest or the surfaces."""
