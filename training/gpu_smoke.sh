#!/usr/bin/env bash
# GRPO smoke run on a CUDA GPU machine without network access.
#
#   training/gpu_smoke.sh [WHEEL_DIR] [gpu_smoke.py options]
#
# The machine needs Python with torch (CUDA), transformers and accelerate. Everything
# else comes as wheels in WHEEL_DIR, prepared on a machine with network for the GPU
# machine's Python version and installed here with --no-deps, never from the network.
# What the run imports beyond torch/transformers: trl and datasets (with dill,
# multiprocess, xxhash, pyarrow, jmespath), and this package's runtime needs for
# training (duckdb, gymnasium, farama-notifications, cloudpickle, pydantic,
# pydantic-core, pyyaml, rank-bm25, numpy). Leave out what the machine already has, e.g.:
#   pip download --python-version 3.12 --only-binary=:all: --no-deps -d wheels \
#       trl==1.16.0 datasets==5.2.0 dill multiprocess jmespath duckdb gymnasium \
#       farama-notifications cloudpickle rank-bm25
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"   # the interpreter that has torch and transformers
if [[ $# -gt 0 && -d "$1" ]]; then
    "$PYTHON" -m pip install --quiet --no-index --no-deps --target .smoke_deps "$1"/*.whl
    export PYTHONPATH="$PWD/.smoke_deps:${PYTHONPATH:-}"
    shift
fi
export PYTHONPATH="$PWD:${PYTHONPATH:-}"
"$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU visible to torch')"
exec "$PYTHON" training/gpu_smoke.py "$@"
