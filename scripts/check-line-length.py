#!/usr/bin/env python3
"""Fails if a Swift file of the repository has a line longer than .swift-format's lineLength, counted in characters.

swift-format breaks code at that length but leaves comments and string literals as they are; this holds them to the
same limit. Generated files are checked by their articles' own width. Usage: scripts/check-line-length.py
"""
import json
import pathlib
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
limit = json.loads((root / ".swift-format").read_text())["lineLength"]
files = subprocess.run(
    ["git", "ls-files", "*.swift"], cwd=root, check=True, capture_output=True, text=True
).stdout.split()
long_lines = []
for name in files:
    if "/Generated/" in name:
        continue
    for number, line in enumerate((root / name).read_text(encoding="utf-8").splitlines(), 1):
        if len(line) > limit:
            long_lines.append(f"{name}:{number}: {len(line)} characters")
if long_lines:
    print("\n".join(long_lines))
    print(f"FAIL: {len(long_lines)} lines longer than {limit} characters (.swift-format's lineLength)")
    sys.exit(1)
print(f"every line of {len(files)} Swift files is at most {limit} characters")
