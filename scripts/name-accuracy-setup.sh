#!/usr/bin/env bash
# Prepares real third-party code, available offline, for the name-accuracy
# benchmark (crates/scry-lsp/examples/name_accuracy.rs), one project per language,
# under ${1:-/tmp/scry-name-bench}:
#   rust/        regex-syntax from the cargo registry (a scry dependency)
#   python/      the pure-Python `attr` package from site-packages (attrs)
#   typescript/  bash-language-server's src/*.ts (it ships its sources)
#   go/          encoding/json from Go's own std sources, as a module
#   c/           zlib as vendored by the libz-sys crate, with compile_commands.json
# Idempotent; each part is skipped when its source is not on this machine.
set -euo pipefail
OUT=${1:-/tmp/scry-name-bench}
mkdir -p "$OUT"
REG=$(ls -d "$HOME"/.cargo/registry/src/*/ 2>/dev/null | head -1)

# Rust
if [ ! -d "$OUT/rust" ] && [ -d "$REG/regex-syntax-0.8.12" ]; then
  cp -r "$REG/regex-syntax-0.8.12" "$OUT/rust"
  rm -rf "$OUT/rust/benches" "$OUT/rust/test"
fi

# Python
PYSITE=$(python3 -c 'import attr, os; print(os.path.dirname(os.path.dirname(attr.__file__)))' 2>/dev/null || true)
if [ ! -d "$OUT/python" ] && [ -n "$PYSITE" ]; then
  mkdir -p "$OUT/python"
  cp -r "$PYSITE/attr" "$OUT/python/attr"
  find "$OUT/python" -name __pycache__ -prune -exec rm -rf {} +
  printf '[project]\nname = "attr-bench"\nversion = "0"\n' > "$OUT/python/pyproject.toml"
fi

# TypeScript
BLS=$(npm root -g 2>/dev/null)/bash-language-server
if [ ! -d "$OUT/typescript" ] && [ -d "$BLS/src" ]; then
  mkdir -p "$OUT/typescript"
  cp -r "$BLS/src" "$BLS/package.json" "$OUT/typescript/"
  find "$OUT/typescript/src" -name __tests__ -prune -exec rm -rf {} +
  ln -s "$BLS/node_modules" "$OUT/typescript/node_modules"
  cat > "$OUT/typescript/tsconfig.json" <<'J'
{ "compilerOptions": { "target": "es2019", "module": "commonjs", "moduleResolution": "node",
    "strict": true, "esModuleInterop": true, "skipLibCheck": true, "outDir": "out",
    "lib": ["es2019"] },
  "include": ["src"] }
J
fi

# Go
GOSRC=$(go env GOROOT 2>/dev/null)/src
if [ ! -d "$OUT/go" ] && [ -d "$GOSRC/encoding/json" ]; then
  mkdir -p "$OUT/go/json"
  for f in "$GOSRC"/encoding/json/*.go; do
    case "$f" in *_test.go) ;; *) cp "$f" "$OUT/go/json/" ;; esac
  done
  GOV=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')
  printf 'module example.com/bench\n\ngo %s\n' "$GOV" > "$OUT/go/go.mod"
fi

# C
if [ ! -d "$OUT/c" ]; then
  Z=$(ls -d "$REG"/libz-sys-*/src/zlib 2>/dev/null | tail -1 || true)
  if [ -z "$Z" ]; then
    T=$(mktemp -d)
    (cd "$T" && cargo init -q --name fetchz && cargo add -q libz-sys@1.1 && cargo fetch -q) || true
    rm -rf "$T"
    Z=$(ls -d "$REG"/libz-sys-*/src/zlib 2>/dev/null | tail -1 || true)
  fi
  if [ -n "$Z" ]; then
    mkdir -p "$OUT/c"
    cp "$Z"/*.c "$Z"/*.h "$Z"/LICENSE "$OUT/c/" 2>/dev/null || cp "$Z"/*.c "$Z"/*.h "$OUT/c/"
    ( cd "$OUT/c"; echo '['; first=1
      for f in *.c; do
        [ $first = 1 ] || echo ','; first=0
        printf '{"directory":"%s","file":"%s","arguments":["cc","-c","-DHAVE_UNISTD_H","-DHAVE_STDARG_H","-I.","%s"]}' "$PWD" "$PWD/$f" "$f"
      done; echo ']' ) > "$OUT/c/compile_commands.json.tmp"
    mv "$OUT/c/compile_commands.json.tmp" "$OUT/c/compile_commands.json"
  fi
fi
ls "$OUT"
