#!/usr/bin/env python3
"""Checks every case file: required keys, and each logged number appears verbatim in the quote."""
import json, sys, pathlib, re
d = pathlib.Path(__file__).parent
bad = 0
for p in sorted(d.glob("*.json")):
    c = json.loads(p.read_text())
    for k in ("id", "source", "engine", "model", "gpu", "gpus", "flags", "logged"):
        if k not in c:
            print(p.name, "missing", k); bad += 1
    if c["id"] != p.stem:
        print(p.name, "id mismatch"); bad += 1
    q = "\n".join(c["source"]["quote"])
    for k, v in c["logged"].items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        s = str(v)
        # numbers are stored as in the log; allow thousands separators in the log
        if s not in q and s not in q.replace(",", ""):
            print(p.name, "logged", k, "=", s, "not in quote"); bad += 1
print("cases:", len(list(d.glob('*.json'))), "problems:", bad)
sys.exit(1 if bad else 0)
