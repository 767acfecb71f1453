#!/usr/bin/env node
// scry-lsp's npm launcher: finds the `scry` binary of this platform's
// package (an exact-version optionalDependency, `scry-lsp-<os>-<cpu>`) and
// runs it with this process's argv, stdio and environment, forwarding
// signals and the exit status. No install script, no download.
// SCRY_LSP_PLATFORM overrides the platform key (tests).
"use strict";
const { spawn } = require("child_process");
const path = require("path");

const PLATFORMS = __PLATFORMS__;
const key = process.env.SCRY_LSP_PLATFORM || `${process.platform}-${process.arch}`;
const pkg = PLATFORMS[key];

function fail(msg) {
  process.stderr.write(`scry-lsp: ${msg}\n`);
  process.exit(1);
}

if (!pkg) {
  fail(
    `no prebuilt scry for this platform (${key}); prebuilt: ${Object.keys(PLATFORMS).join(", ")}.\n` +
      "Install it otherwise: `cargo install scry-lsp` (Rust 1.88+), or from the sources: " +
      "`cargo install --locked --path crates/scry-lsp`."
  );
}
let bin;
try {
  const dir = path.dirname(require.resolve(`${pkg}/package.json`));
  bin = path.join(dir, "bin", process.platform === "win32" ? "scry.exe" : "scry");
} catch (_) {
  fail(
    `the platform package ${pkg} (for ${key}) is not installed; it is an optional dependency ` +
      "of scry-lsp: reinstall without --no-optional / --omit=optional, or `cargo install scry-lsp`."
  );
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
const forward = (sig) => () => {
  if (child.exitCode === null) child.kill(sig);
};
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, forward(sig));
child.on("error", (e) => fail(`cannot run ${bin}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
