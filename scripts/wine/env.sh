# Sourced by scripts/test-windows and scripts/wine/run: the wine set-up
# for running the cross-built (x86_64-pc-windows-gnu) tests on Linux.
#   - a private 64-bit prefix (WINEPREFIX, default target/wine/prefix),
#     made once by `wineboot -i` (without the Mono and Gecko installers);
#   - Debian's wine 8.0 (WINE, default /usr/lib/wine/wine64; `wine64` is
#     not on PATH there), quiet (WINEDEBUG=-all);
#   - the bcryptprimitives.dll shim (scripts/wine/bcryptprimitives.c:
#     ProcessPrng, which Rust's std imports and wine 8 lacks) built with
#     mingw into the prefix's system32, so every .exe a test starts (the
#     test binary, scry.exe, the fake server, one copied elsewhere) loads.
# Test set-up only: nothing here is shipped.
WINE_SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WINE_REPO="$(cd "$WINE_SCRIPTS/../.." && pwd)"
export WINEARCH=win64
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEPREFIX="${WINEPREFIX:-${CARGO_TARGET_DIR:-$WINE_REPO/target}/wine/prefix}"
# No Mono (.NET) or Gecko (HTML) prompt while the prefix is made.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree=;mshtml=}"
WINE="${WINE:-/usr/lib/wine/wine64}"
WINESERVER="${WINESERVER:-/usr/lib/wine/wineserver}"

# Make the prefix and put the shim in it, once (a stamp says it is done;
# a stamp older than the shim's source redoes the shim).
wine_prepare() {
  local stamp="$WINEPREFIX/.scry-ready" dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
  if [ -f "$stamp" ] && [ "$stamp" -nt "$WINE_SCRIPTS/bcryptprimitives.c" ] && [ -f "$dll" ]; then
    return 0
  fi
  mkdir -p "$WINEPREFIX"
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    "$WINE" wineboot -i >/dev/null 2>&1 || { echo "wine: wineboot -i failed in $WINEPREFIX" >&2; return 1; }
    "$WINESERVER" -w
  fi
  x86_64-w64-mingw32-gcc -shared -O2 -o "$dll" "$WINE_SCRIPTS/bcryptprimitives.c" -ladvapi32
  touch "$stamp"
}
