#!/bin/sh
# Run the --confirm GPU demo on a machine with a CUDA GPU and warp-lang 1.19.0 importable.
# Usage: scripts/gpu_confirm_demo.sh [OUT_DIR]     (see docs/confirm.md for the recorded result)
set -e
cd "$(dirname "$0")/.."
python3 -c "import warp, sys; print('warp', warp.__version__, 'python', sys.version.split()[0])"
python3 scripts/gpu_confirm_demo.py "${1:-}"
