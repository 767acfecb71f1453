#!/usr/bin/env bash
# Name-accuracy benchmark over real third-party code (see
# crates/scry-lsp/examples/name_accuracy.rs): N questions per language, asked by
# (path, symbol, line) and compared with the server's answer at the exact
# position. Prints the misses and one summary line per language.
#   scripts/name-accuracy.sh [N=100] [SEED=7] [LANGS="rust python typescript go c"]
# Results per question go to ${OUT:-/tmp/scry-name-bench}/results-LANG.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
N=${1:-100}; SEED=${2:-7}; LANGS=${3:-"rust python typescript go c"}
OUT=${OUT:-/tmp/scry-name-bench}
scripts/name-accuracy-setup.sh "$OUT" >/dev/null
cargo build -q -p scry-lsp --example name_accuracy
for l in $LANGS; do
  [ -d "$OUT/$l" ] || { echo "$l: no project under $OUT (see scripts/name-accuracy-setup.sh)"; continue; }
  ./target/debug/examples/name_accuracy "$l" "$OUT/$l" "$N" "$SEED" "$OUT/results-$l.jsonl"
done
