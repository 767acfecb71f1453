#!/usr/bin/env bash
# SCIP index benchmark (crates/scry-lsp/examples/index_bench.rs; not a timed
# test): per project, builds its index with `scry index` (timed), then
# measures on cold engines the time to the first precise answer with and
# without the index, and the index answers' agreement with the warm server
# on N name-accuracy questions. Projects: the name-accuracy ones prepared by
# scripts/name-accuracy-setup.sh (rust: regex-syntax from the cargo
# registry; python: attrs' `attr` from site-packages; typescript:
# bash-language-server's src) and `scry`, this repository itself (rust-analyzer
# builds its proc-macros into its target/, which the dev build seeds).
#   scripts/index-bench.sh [N=50] [SEED=7] [PROJECTS="rust python typescript scry"]
# Indexes go to $SCRY_CACHE_DIR (default $OUT/index-cache); per-question
# results to ${OUT:-/tmp/scry-name-bench}/index-bench-PROJECT.jsonl; the last
# line per project is a JSON object of its figures. PROFILE=release to time a
# release build (default: debug).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
N=${1:-50}; SEED=${2:-7}; PROJECTS=${3:-"rust python typescript scry"}
OUT=${OUT:-/tmp/scry-name-bench}
PROFILE=${PROFILE:-debug}
export SCRY_CACHE_DIR=${SCRY_CACHE_DIR:-$OUT/index-cache}
scripts/name-accuracy-setup.sh "$OUT" >/dev/null
if [ "$PROFILE" = release ]; then
  cargo build -q --release -p scry-lsp --bin scry --example index_bench
else
  cargo build -q -p scry-lsp --bin scry --example index_bench
fi
BIN=./target/$PROFILE
for p in $PROJECTS; do
  case $p in
    scry) root=$PWD; lang=rust ;;
    *) root=$OUT/$p; lang=$p ;;
  esac
  [ -d "$root" ] || { echo "$p: no project at $root (see scripts/name-accuracy-setup.sh)"; continue; }
  t0=$(date +%s%N)
  if ! "$BIN/scry" index "$root" --timeout "${INDEX_TIMEOUT:-1200}" >"$OUT/index-$p.log" 2>&1; then
    echo "$p: scry index failed (see $OUT/index-$p.log)"; continue
  fi
  echo "$p: scry index took $(( ($(date +%s%N) - t0) / 1000000 )) ms ($(grep -m1 'files' "$OUT/index-$p.log" | sed 's/^[^:]*: //'))"
  "$BIN/examples/index_bench" "$lang" "$root" "$N" "$SEED" "$OUT/index-bench-$p.jsonl"
done
