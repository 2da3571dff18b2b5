#!/usr/bin/env bash
# Rebuilds the bundled CPU archives with the zoo: demo/cpu-torch<ver>.tar.xz for each torch venv.
# Usage: demo/rebuild_archives.sh [WORKDIR]   (from the repo root; needs .venv-torch-2.13 and .venv-torch-2.14.1)
# The GPU archive is made on a GPU machine: see demo/README.md.
set -euo pipefail
work=${1:-$(mktemp -d)}
runs=()
for model in mlp transformer cnn dyn_graphbreak; do
  for mode in infer train; do runs+=(--run "${model}__${mode}__fp32__default"); done
done
runs+=(--run mlp__infer__bf16__default --run mlp__train__fp32__no_epilogue_fusion
       --run transformer__train__fp32__aggressive_fusion)
for ver in 2.13 2.14.1; do
  .venv/bin/python -m zoo.run --python ".venv-torch-$ver/bin/python" --out "$work/cpu-torch$ver" \
    --device cpu --jobs 2 --profile "${runs[@]}"
  tar -C "$work" -cJf "demo/cpu-torch$ver.tar.xz" "cpu-torch$ver"
done
