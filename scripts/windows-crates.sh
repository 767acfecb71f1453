# Sourced by scripts/windows-check and scripts/test-windows: the crates
# that build for Windows (issue 29), bottom of the stack first. A crate is
# added when it builds: with its binaries and tests (CRATES: windows-check
# checks them, test-windows runs their unit tests under wine; scry-lsp is
# the CLI, binary `scry`), or so far its library only (LIB_ONLY: some of
# its tests still use Unix-only calls).
CRATES=(scry-base scry-text scry-rpc scry-model scry-lsp-session scry-index scry-edit scry-workspace scry-ops scry-render scry-daemon scry-mcp scry-lsp scry-testkit)
LIB_ONLY=(scry-syntax)
TARGET=x86_64-pc-windows-gnu
