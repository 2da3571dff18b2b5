"""Questions over many runs: comparing two sides (`compare`), the rules that call a change a
regression (`regress`), and rendering their results (`render`). Reads the warehouse through
`schema`; never imports the ingest or the surfaces."""
