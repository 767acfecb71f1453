#!/usr/bin/env python3
"""Stamp scry-lsp's npm packages and the MCP registry's server.json from
the workspace's one version and repository (`cargo metadata`), so that no
copy of either is kept by hand.

  stamp.py OUT_DIR [PLATFORM_KEY=BINARY ...]

writes OUT_DIR/npm/scry-lsp (the wrapper), OUT_DIR/npm/scry-lsp-KEY (one
per given binary), OUT_DIR/server.json and OUT_DIR/scry-lsp-installer.ps1
(the Windows installer, packaging/install.ps1 with the version and
repository filled in)."""
import json, os, re, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# npm platform key (process.platform-process.arch) -> (os, cpu). Linux
# packages carry the static musl binary: no `libc` field, it runs on glibc
# and musl alike. The Windows package carries `bin/scry.exe`.
PLATFORMS = {
    "linux-x64": ("linux", "x64"),
    "linux-arm64": ("linux", "arm64"),
    "darwin-x64": ("darwin", "x64"),
    "darwin-arm64": ("darwin", "arm64"),
    "win32-x64": ("win32", "x64"),
}


def mcp_name():
    """The MCP registry's server name, from its one home: README.md's
    `<!-- mcp-name: NAME -->` marker, which the registry also reads on PyPI
    (the wheel's description) to check ownership. npm's `mcpName` and
    server.json's `name` are stamped from it."""
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"<!-- mcp-name: (\S+) -->", readme)
    if not m:
        sys.exit("stamp.py: README.md has no `<!-- mcp-name: NAME -->` marker")
    return m.group(1)


def meta():
    out = subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"], cwd=ROOT
    )
    pkg = next(p for p in json.loads(out)["packages"] if p["name"] == "scry-lsp")
    return pkg


def main():
    out = sys.argv[1]
    bins = dict(a.split("=", 1) for a in sys.argv[2:])
    pkg = meta()
    version, repo = pkg["version"], pkg["repository"]
    name = mcp_name()
    common = {
        "version": version,
        "license": pkg["license"],
        "repository": {"type": "git", "url": repo},
        "homepage": repo,
    }
    npm = os.path.join(out, "npm")
    shutil.rmtree(npm, ignore_errors=True)
    wrapper = os.path.join(npm, "scry-lsp")
    os.makedirs(os.path.join(wrapper, "bin"))
    names = {k: f"scry-lsp-{k}" for k in PLATFORMS}
    launcher = open(os.path.join(HERE, "npm", "scry.js")).read()
    launcher = launcher.replace("__PLATFORMS__", json.dumps(names))
    with open(os.path.join(wrapper, "bin", "scry.js"), "w") as f:
        f.write(launcher)
    os.chmod(os.path.join(wrapper, "bin", "scry.js"), 0o755)
    shutil.copy(os.path.join(ROOT, "README.md"), wrapper)
    manifest = {
        "name": "scry-lsp",
        "description": pkg["description"],
        **common,
        "mcpName": name,
        "bin": {"scry": "bin/scry.js"},
        "files": ["bin/scry.js", "README.md"],
        "engines": {"node": ">=16"},
        "optionalDependencies": {n: version for n in names.values()},
    }
    json.dump(manifest, open(os.path.join(wrapper, "package.json"), "w"), indent=2)
    for key, binary in bins.items():
        os_, cpu = PLATFORMS[key]
        d = os.path.join(npm, names[key])
        os.makedirs(os.path.join(d, "bin"))
        target = os.path.join(d, "bin", "scry.exe" if os_ == "win32" else "scry")
        shutil.copy(binary, target)
        os.chmod(target, 0o755)
        json.dump(
            {
                "name": names[key],
                "description": f"The scry binary for {key} (used by the scry-lsp package)",
                **common,
                "os": [os_],
                "cpu": [cpu],
                "files": ["bin/"],
                "preferUnplugged": True,
            },
            open(os.path.join(d, "package.json"), "w"),
            indent=2,
        )
    server = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
        "name": name,
        "description": pkg["description"],
        "repository": {"url": repo, "source": "github"},
        "version": version,
        "packages": [
            {
                "registryType": t,
                "identifier": "scry-lsp",
                "version": version,
                "transport": {"type": "stdio"},
                "packageArguments": [{"type": "positional", "value": "mcp"}],
            }
            for t in ("npm", "pypi", "cargo")
        ],
    }
    json.dump(server, open(os.path.join(out, "server.json"), "w"), indent=2)
    installer = open(os.path.join(HERE, "install.ps1"), encoding="utf-8").read()
    installer = installer.replace("__VERSION__", version).replace("__REPOSITORY__", repo)
    # CRLF, as PowerShell scripts are kept on Windows.
    with open(os.path.join(out, "scry-lsp-installer.ps1"), "w", encoding="utf-8", newline="\r\n") as f:
        f.write(installer)
    print(f"stamped scry-lsp {version} ({repo}) into {out}")


if __name__ == "__main__":
    main()
