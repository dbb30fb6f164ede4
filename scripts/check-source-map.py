#!/usr/bin/env python3
"""CONTRIBUTING's map of Sources/CancellableURLSession names every file of every folder, and nothing else.

The map lists, per folder, the files' names without `.swift` after the folder's description and a colon. A file
added, moved or deleted without the map changing fails this check, which names what differs.
"""
import os
import re
import sys

MODULE = "Sources/CancellableURLSession"
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
text = open(os.path.join(root, "CONTRIBUTING.md")).read()

# The block starts at the module's line and ends at the next top-level `Sources/` or `Tests/` line.
block = re.search(r"^" + re.escape(MODULE) + r"/.*?\n(.*?)(?=^\S)", text, re.S | re.M)
if not block:
    sys.exit(f"FAIL: CONTRIBUTING.md has no map of {MODULE}")
listed = {}
folder = None
for line in block.group(1).splitlines():
    match = re.match(r"^  (\w+)/\s+(.*)$", line)
    if match:
        folder, rest = match.group(1), match.group(2)
        listed[folder] = rest
    elif folder and line.startswith(" " * 10):
        listed[folder] += " " + line.strip()

failures = []
on_disk = {
    entry: {name[:-6] for name in os.listdir(os.path.join(root, MODULE, entry)) if name.endswith(".swift")}
    for entry in os.listdir(os.path.join(root, MODULE))
    if os.path.isdir(os.path.join(root, MODULE, entry)) and not entry.endswith(".docc")
}
for folder in sorted(set(on_disk) | set(listed)):
    if folder not in listed:
        failures.append(f"{folder}/ is not in the map")
        continue
    if folder not in on_disk:
        failures.append(f"{folder}/ is in the map but not in {MODULE}")
        continue
    names = listed[folder].split(":", 1)[-1]
    names = {name.strip().rstrip(".") for name in names.split(",")}
    for name in sorted(on_disk[folder] - names):
        failures.append(f"{folder}/{name}.swift is not in the map")
    for name in sorted(names - on_disk[folder]):
        failures.append(f"{folder}/{name} is in the map but not on disk")
if failures:
    print("FAIL: CONTRIBUTING.md's map of " + MODULE + " is out of date:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"the map of {MODULE} names its {sum(map(len, on_disk.values()))} files in {len(on_disk)} folders")
