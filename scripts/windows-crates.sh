# Sourced by scripts/windows-check and scripts/test-windows: the crates
# that build for Windows (issue 29) with their binaries and tests, bottom
# of the stack first (scry-lsp is the CLI, binary `scry`; scry-testkit the
# fake server). windows-check checks them, library, binaries and every
# test; test-windows runs their unit tests under wine.
CRATES=(scry-base scry-text scry-rpc scry-model scry-lsp-session scry-index scry-syntax scry-edit scry-workspace scry-ops scry-render scry-daemon scry-mcp scry-lsp scry-testkit)
TARGET=x86_64-pc-windows-gnu
