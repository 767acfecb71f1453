#!/usr/bin/env python3
"""Copy a wheel holding the static musl `scry` under a manylinux tag: a
static binary needs no glibc, so it meets manylinux2014 as it is, and pip
on glibc systems (which refuses musllinux tags) gets the same binary
without a second build.   retag.py WHEEL PLATFORM_TAG OUT_DIR"""
import base64, hashlib, os, re, sys, zipfile

src, plat, out = sys.argv[1:4]
name = os.path.basename(src)
m = re.match(r"(.+-py3-none)-(.+)\.whl$", name)
dst = os.path.join(out, f"{m.group(1)}-{plat}.whl")
with zipfile.ZipFile(src) as zin:
    items = {i.filename: zin.read(i.filename) for i in zin.infolist()}
    modes = {i.filename: i.external_attr for i in zin.infolist()}
wheel = next(k for k in items if k.endswith(".dist-info/WHEEL"))
record = next(k for k in items if k.endswith(".dist-info/RECORD"))
lines = [l for l in items[wheel].decode().splitlines() if not l.startswith("Tag:")]
lines += [f"Tag: py3-none-{t}" for t in plat.split(".")]
items[wheel] = ("\n".join(lines) + "\n").encode()
digest = base64.urlsafe_b64encode(hashlib.sha256(items[wheel]).digest()).rstrip(b"=").decode()
rec = []
for l in items[record].decode().splitlines():
    if l.startswith(wheel + ","):
        l = f"{wheel},sha256={digest},{len(items[wheel])}"
    rec.append(l)
items[record] = ("\n".join(rec) + "\n").encode()
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for k, v in items.items():
        zi = zipfile.ZipInfo(k, date_time=(1980, 1, 1, 0, 0, 0))
        zi.external_attr = modes[k]
        zi.compress_type = zipfile.ZIP_DEFLATED
        zout.writestr(zi, v)
print(dst)
