#!/usr/bin/env python3
"""Drive an installed scry over MCP stdio: initialize, tools/list, one `lsp`
call (references of `total_weight` in a copy of fixtures/python, answered
by pyright when it is on PATH, else syntactically: a real answer either
way). Exit 0 when all three answer as they should.

  mcp_check.py WORKSPACE COMMAND...   (COMMAND ends before `mcp`)"""
import json, subprocess, sys

ws, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd + ["mcp", "--root", ws, "--no-daemon"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)


def send(msg):
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()


def response(id_):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == id_:
            return m
    sys.exit(f"no response {id_}")


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "package-check", "version": "0"}}})
init = response(1)
assert init["result"]["serverInfo"]["name"] == "scry", init
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
tools = [t["name"] for t in response(2)["result"]["tools"]]
assert "lsp" in tools, tools
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "lsp", "arguments": {"action": "references", "path": "inventory.py",
                                 "symbol": "total_weight", "timeout_ms": 60000}}})
r = response(3)["result"]
text = r["content"][0]["text"]
assert r["isError"] is False and "total_weight" in text and "main.py" in text, r
p.stdin.close()
p.wait(timeout=30)
print("mcp ok:", text.splitlines()[0])
