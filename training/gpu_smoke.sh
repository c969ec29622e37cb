#!/usr/bin/env bash
# GRPO smoke run on a CUDA GPU machine without network access.
#
#   training/gpu_smoke.sh [WHEEL_DIR] [gpu_smoke.py options]
#
# The machine needs Python with torch (CUDA) and transformers. Everything else
# (trl, datasets and their pure-Python dependencies, and this package's own
# dependencies) comes as wheels in WHEEL_DIR, prepared on a machine with network
# for the GPU machine's Python version, e.g. for Python 3.12:
#   pip download --python-version 3.12 --only-binary=:all: --no-deps -d wheels \
#       trl==1.16.0 datasets dill multiprocess jmespath xxhash pyarrow duckdb gymnasium \
#       farama-notifications cloudpickle rank-bm25 mcp ...
# They are installed with --no-deps into .smoke_deps/, never from the network.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 0 && -d "$1" ]]; then
    python -m pip install --quiet --no-index --no-deps --target .smoke_deps "$1"/*.whl
    export PYTHONPATH="$PWD/.smoke_deps:${PYTHONPATH:-}"
    shift
fi
export PYTHONPATH="$PWD:${PYTHONPATH:-}"
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU visible to torch')"
exec python training/gpu_smoke.py "$@"
