#!/usr/bin/env python3
"""Prints the README's table of published training peaks from tst_published's own output.

Usage: tests/data/published/training/readme_table.py build/dev/tests/tst_published
Reads only this directory's case files and the test's log lines; writes Markdown to stdout.
"""
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r"everyCaseModelledOrRefused\(\) (\S+)\s+(\S+)\s+(\S+)\s+measured\s+(\S+) predicted\s+(\S+) (GiB|GB)\s+error\s+(\S+) % \(tolerance (\d+) %\)")


def main():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.argv[1]], capture_output=True, text=True, env=env).stdout
    predicted = {m.group(1): m.groups() for m in map(LINE.search, out.splitlines()) if m}
    print("| case | counter | measured | predicted | error | status |")
    print("|---|---|---|---|---|---|")
    errors = []
    for f in sorted(glob.glob(os.path.join(HERE, "*.json"))):
        case = json.load(open(f))
        cid, meas = case["id"], case["measured"]
        measured = f"{meas['value']} {meas['unit']}"
        if cid in predicted:
            _, kind, against, _, pred, unit, err, tol = predicted[cid]
            errors.append(abs(float(err)))
            # The prediction compared: the caching-allocator replay's counter, or the live peak less the context.
            counter = f"{kind} (allocator replay)" if against == "replay" else kind
            print(f"| `{cid}` | {counter} | {measured} | {pred} {unit} | {float(err):+.1f} % | modelled, within {tol} % |")
        else:
            print(f"| `{cid}` | {meas['kind']} | {measured} | | | off: `{case['expected_refusal']}` |")
    total = len(glob.glob(os.path.join(HERE, "*.json")))
    print()
    print(f"Modelled: {len(errors)} of {total} cases, mean absolute error "
          f"{sum(errors) / max(1, len(errors)):.1f} %, worst {max(errors, default=0):.1f} %.")


if __name__ == "__main__":
    main()
