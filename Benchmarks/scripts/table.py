#!/usr/bin/env python3
"""Prints the Markdown results table of the Performance article (Sources/PromiseCore/PromiseCore.docc/Performance.md) from a `promise-benchmarks --json FILE` run.

    python3 Benchmarks/scripts/table.py results.json
"""
import json
import sys

ORDER = ["floor", "PromiseCore", "SwiftNIO", "Swift Concurrency", "OpenCombine"]
NAMES = {
    "when(fulfilled:) × 1k": "`when(fulfilled:)` × 1k",
    "when(fulfilled:) × 10k": "`when(fulfilled:)` × 10k",
    "when(fulfilled:) × 100k": "`when(fulfilled:)` × 100k",
    "race × 10k": "`race` × 10k",
    "race autoCancel × 10k": "`race(_:autoCancel: true)` × 10k",
    "any + some × 10k": "`any` + `some` × 10k",
    "create + fulfill + 1 handler": "create + fulfill + 1 handler (`pipe`)",
    "create + fulfill + map": "create + fulfill + `map`",
    "create + map + done": "create + `map` + `done`, `on: nil`",
    "cross-thread map + done × 200k": "cross-thread `map` + `done` × 200k",
    "cancel-one": "cancel-one (ratio to the cancellable floor)",
    "cancel-chain × 10k": "cancel-chain × 10k (ratio to the cancellable floor)",
    "race-cancel × 10k": "race-cancel × 10k (ratio to the cancellable floor)",
    "race-cancel shared × 10k": "race-cancel, inputs shared by two races, × 10k (ratio to the cancellable floor)",
}


def main(source: str) -> None:
    global ORDER
    run = json.load(open(source))
    # A baseline contestant (Benchmarks/scripts/baseline.sh), "before (REF)", goes right after PromiseCore.
    extra = [c["name"] for c in run.get("contestants", []) if c["name"] not in ORDER]
    ORDER = ORDER[:2] + extra + ORDER[2:]
    workloads, cells, units = [], {}, {}
    for result in run["results"]:
        workload, contestant, ratio = result["workload"], result["contestant"], result["ratioToFloor"]
        if workload not in workloads:
            workloads.append(workload)
        units[workload] = result["unit"]
        text = f"{result['median']:.0f}"
        if ratio is not None:
            text += f" (**{ratio:.2f}×**)" if contestant == "PromiseCore" else f" ({ratio:.2f}×)"
        cells[(workload, contestant)] = text
    print("| Workload | " + " | ".join(ORDER) + " | unit |")
    print("|---" * (len(ORDER) + 2) + "|")
    for workload in workloads:
        row = [cells.get((workload, contestant), "n/a") for contestant in ORDER]
        print(f"| {NAMES.get(workload, workload)} | " + " | ".join(row) + f" | {units[workload]} |")
    memory, deep = run["bytesPerPendingPromise"], run["deepChain"]
    bold = lambda contestant, text: f"**{text}**" if contestant == "PromiseCore" else text
    print("| bytes per pending promise with one handler | "
          + " | ".join(bold(c, f"{memory[c]:.0f}") if c in memory else "n/a" for c in ORDER) + " | bytes |")
    with_map = run.get("bytesPerPendingMap", {})
    if with_map:
        print("| bytes per pending promise with one `map` (two promises) | "
              + " | ".join(bold(c, f"{with_map[c]:.0f}") if c in with_map else "n/a" for c in ORDER) + " | bytes |")
    cancellable_map = run.get("bytesPerPendingCancellableMap", {})
    if cancellable_map:
        print("| bytes per pending cancellable promise with one `map` (the floor: the cancellable floor) | "
              + " | ".join(bold(c, f"{cancellable_map[c]:.0f}") if c in cancellable_map else "n/a" for c in ORDER)
              + " | bytes |")
    print("| 1M-link chain on a default 8 MiB stack | "
          + " | ".join(bold(c, deep[c]) if c in deep else "n/a" for c in ORDER) + " | |")


if __name__ == "__main__":
    main(sys.argv[1])
