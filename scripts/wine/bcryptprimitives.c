/* A stand-in for Windows' bcryptprimitives.dll, for running the tests
 * under Debian's wine 8.0 (scripts/test-windows) and nothing else: never
 * shipped. Rust's std (1.78 and later) imports ProcessPrng from
 * bcryptprimitives.dll, which wine 8.0 lacks, so a cross-built .exe fails
 * to load (status c0000135). This DLL, placed beside the .exe, exports
 * ProcessPrng and fills the buffer from RtlGenRandom (advapi32's
 * SystemFunction036), which wine has.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll \
 *          bcryptprimitives.c -ladvapi32
 */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length: fill in pieces. */
    while (len > 0) {
        ULONG part = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, part))
            return FALSE;
        data += part;
        len -= part;
    }
    return TRUE;
}
