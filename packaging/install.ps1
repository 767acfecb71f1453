# scry-lsp's Windows installer, published with each release as
# `scry-lsp-installer.ps1` (stamped by packaging/stamp.py: __VERSION__ and
# __REPOSITORY__ are the workspace's one version and repository). Run:
#
#   powershell -ExecutionPolicy ByPass -c "irm REPOSITORY/releases/latest/download/scry-lsp-installer.ps1 | iex"
#
# It downloads the release archive `scry-lsp-x86_64-pc-windows-msvc.zip`
# and `SHA256SUMS` of this version, refuses an archive whose SHA-256 is not
# the one listed, puts `scry.exe` in `$env:SCRY_INSTALL_DIR` (default
# `%LOCALAPPDATA%\Programs\scry-lsp\bin`) and adds that directory to the
# user's PATH (not the machine's: no administrator rights needed). Nothing
# else is run or changed. `$env:SCRY_NO_MODIFY_PATH = 1` leaves PATH alone.

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

$Version = '__VERSION__'
$Repository = '__REPOSITORY__'
$Target = 'x86_64-pc-windows-msvc'
$Archive = "scry-lsp-$Target.zip"
$Base = "$Repository/releases/download/v$Version"

# `throw`, not `exit`: under `irm | iex` an `exit` would close the user's shell.
function Fail([string]$Message) {
    throw "scry-lsp installer: $Message"
}

# x64 only (Windows on ARM runs it emulated).
if (-not [Environment]::Is64BitOperatingSystem) {
    Fail "prebuilt scry is for 64-bit Windows only; elsewhere: cargo install scry-lsp (Rust 1.88+)"
}

$Dir = if ($env:SCRY_INSTALL_DIR) { $env:SCRY_INSTALL_DIR } else {
    Join-Path $env:LOCALAPPDATA 'Programs\scry-lsp\bin'
}
$Tmp = Join-Path ([IO.Path]::GetTempPath()) ("scry-lsp-" + [Guid]::NewGuid().ToString('N'))
New-Item -ItemType Directory -Force -Path $Tmp | Out-Null
try {
    Write-Host "downloading scry-lsp $Version ($Target) from $Base"
    # TLS 1.2 for Windows PowerShell 5.1, whose default may be older.
    [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
    $Zip = Join-Path $Tmp $Archive
    $Sums = Join-Path $Tmp 'SHA256SUMS'
    Invoke-WebRequest -UseBasicParsing -Uri "$Base/$Archive" -OutFile $Zip
    Invoke-WebRequest -UseBasicParsing -Uri "$Base/SHA256SUMS" -OutFile $Sums

    # SHA256SUMS lines: `<hex>  <name>` (sha256sum's format, possibly `*name`).
    $Want = $null
    foreach ($Line in Get-Content $Sums) {
        $Parts = $Line.Trim() -split '\s+', 2
        if ($Parts.Count -eq 2 -and ($Parts[1].TrimStart('*') -replace '^\./', '') -eq $Archive) {
            $Want = $Parts[0].ToLowerInvariant()
        }
    }
    if (-not $Want) { Fail "SHA256SUMS of v$Version does not list $Archive" }
    $Got = (Get-FileHash -Algorithm SHA256 -Path $Zip).Hash.ToLowerInvariant()
    if ($Got -ne $Want) { Fail "$Archive has SHA-256 ${Got}, SHA256SUMS says ${Want}; not installed" }

    $Out = Join-Path $Tmp 'x'
    Expand-Archive -Path $Zip -DestinationPath $Out
    $Exe = Join-Path $Out "scry-lsp-$Target\scry.exe"
    if (-not (Test-Path -LiteralPath $Exe -PathType Leaf)) { Fail "$Archive holds no scry-lsp-$Target\scry.exe" }
    New-Item -ItemType Directory -Force -Path $Dir | Out-Null
    Copy-Item -LiteralPath $Exe -Destination (Join-Path $Dir 'scry.exe') -Force
} finally {
    Remove-Item -LiteralPath $Tmp -Recurse -Force -ErrorAction SilentlyContinue
}

$Installed = Join-Path $Dir 'scry.exe'
Write-Host "installed $Installed"
& $Installed --version

if (-not $env:SCRY_NO_MODIFY_PATH) {
    $UserPath = [Environment]::GetEnvironmentVariable('Path', 'User')
    $Entries = @($UserPath -split ';' | Where-Object { $_ })
    if (-not ($Entries | Where-Object { $_.TrimEnd('\') -ieq $Dir.TrimEnd('\') })) {
        [Environment]::SetEnvironmentVariable('Path', (@($Entries) + $Dir) -join ';', 'User')
        Write-Host "added $Dir to your user PATH (new terminals see it)"
    }
}
Write-Host "next: scry doctor (which language servers are installed), or as an MCP server: scry mcp"
