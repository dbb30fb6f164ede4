#!/usr/bin/env python3
"""Checks that the command-line recipe printed in "Using PromiseCore in Swift 6 apps" is the code of
Examples/Sources/CommandLineTool/main.swift that CI runs: the lines after its "// The article's recipe" comment are
one of the article's Swift blocks, line for line."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "Examples/Sources/CommandLineTool/main.swift"
ARTICLE = ROOT / "Sources/PromiseCore/PromiseCore.docc/UsingPromiseCoreInSwift6Apps.md"

lines = EXAMPLE.read_text().splitlines()
marker = next(i for i, line in enumerate(lines) if line.startswith("// The article's recipe"))
recipe = "\n".join(lines[marker + 1:]).strip()
blocks = [block.strip() for block in re.findall(r"^```swift\n(.*?)^```", ARTICLE.read_text(), flags=re.S | re.M)]
if recipe not in blocks:
    print(f"FAIL: the recipe in {EXAMPLE.relative_to(ROOT)} is not a Swift block of {ARTICLE.relative_to(ROOT)}:")
    print(recipe)
    sys.exit(1)
print(f"the article prints the recipe that {EXAMPLE.relative_to(ROOT)} runs ({len(recipe.splitlines())} lines)")
