#!/usr/bin/env bash
# Builds scry's fuzz targets with the stable toolchain (RUSTC_BOOTSTRAP for
# the -Z-free sanitizer-coverage flags cargo-fuzz would pass) and runs them
# one after the other, niced, for SECONDS each; never in CI.
#
#   fuzz/run.sh [SECONDS] [TARGET...]   build, then run each target
#   fuzz/run.sh build                   build only
#   NOBUILD=1 fuzz/run.sh SECONDS ...   run the targets as built
#   fuzz/run.sh merge [TARGET...]       minimise corpus/<target> (-merge=1)
#
# New inputs go to target/work/<target> (not committed); crashes to
# artifacts/<target>/. Each run's log is target/logs/<target>.log; the
# executions come from libFuzzer's final stats (-print_final_stats=1).
# FUZZ_ARGS adds libFuzzer flags (e.g. FUZZ_ARGS=-max_len=256: short inputs,
# many more executions per second).
set -euo pipefail
cd "$(dirname "$0")"
TRIPLE=x86_64-unknown-linux-gnu
BIN=target/$TRIPLE/release
ALL=(line_index framing messages mcp_args workspace_edit syntax_extract name_lookup journal_recover reply_paths)

build() {
	# --target keeps the flags off build scripts and proc macros.
	RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
--cfg fuzzing -Cdebug-assertions" \
		nice cargo build --release --target "$TRIPLE" --bins
}

# Seeds and regressions are kept as they are; the other inputs are
# replaced by a minimal set covering the same features.
merge() {
	local t=$1 tmp
	tmp=$(mktemp -d)
	mkdir -p "target/work/$t" "$tmp/min" "$tmp/in"
	find "corpus/$t" -maxdepth 1 -type f ! -name 's*' ! -name 'regression-*' ! -name all ! -name none ! -name 'bytes*' -exec mv {} "$tmp/in/" \;
	nice -n 19 "$BIN/$t" -merge=1 -timeout=20 "$tmp/min" "$tmp/in" "target/work/$t" \
		>"target/logs/$t.merge.log" 2>&1
	# The seeds' features are in the merged set already only if seeded; keep
	# at most 50 of the merged inputs (libFuzzer writes them by content hash).
	find "$tmp/min" -type f | sort | sed -n 1,50p | xargs -r -I{} cp {} "corpus/$t/"
	rm -rf "$tmp"
	echo "$t: $(find "corpus/$t" -type f | wc -l) inputs"
}

run() {
	local t=$1 secs=$2 log=target/logs/$1.log
	mkdir -p "target/work/$t" "artifacts/$t" target/logs
	set +e
	nice -n 19 "$BIN/$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="artifacts/$t/" ${FUZZ_ARGS:-} \
		"target/work/$t" "corpus/$t" >"$log" 2>&1
	local rc=$?
	set -e
	local execs
	execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
	printf '%-16s %12s executions  rc=%s  %s\n' "$t" "${execs:-?}" "$rc" \
		"$(ls "artifacts/$t" 2>/dev/null | tr '\n' ' ')"
}

case "${1:-}" in
build) build ;;
merge)
	shift
	mkdir -p target/logs
	[ $# -gt 0 ] || set -- "${ALL[@]}"
	for t in "$@"; do merge "$t"; done
	;;
*)
	secs=${1:-60}
	shift || true
	[ -n "${NOBUILD:-}" ] || build
	[ $# -gt 0 ] || set -- "${ALL[@]}"
	for t in "$@"; do run "$t" "$secs"; done
	;;
esac
