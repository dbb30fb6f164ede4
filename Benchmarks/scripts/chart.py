#!/usr/bin/env python3
"""Turns a `promise-benchmarks --json FILE` run into an SVG bar chart of each contestant's ratio to the floor.

    python3 Benchmarks/scripts/chart.py results.json Sources/PromiseCore/PromiseCore.docc/performance-chart.svg

Bars use a log scale (ratios run from ~0.3× to ~20×); the floor is the line at 1×, lower is better.
"""
import json
import math
import sys

COLORS = {"floor": "#9e9e9e", "PromiseCore": "#e4572e", "SwiftNIO": "#4c72b0", "Swift Concurrency": "#55a868",
          "OpenCombine": "#8172b2"}
BASELINE_COLOR = "#f2a541"  # a "before (REF)" contestant of Benchmarks/scripts/baseline.sh


def main(source: str, target: str) -> None:
    run = json.load(open(source))
    contestants = [c["name"] for c in run["contestants"] if c["name"] != "floor"]
    workloads = []
    for result in run["results"]:
        if result["workload"] not in workloads and result["ratioToFloor"] is not None:
            workloads.append(result["workload"])
    ratio = {(r["workload"], r["contestant"]): r["ratioToFloor"] for r in run["results"] if r["ratioToFloor"]}

    left, top, bar, gap, width = 230, 60, 11, 14, 520
    low, high = math.log10(0.2), math.log10(30)
    x = lambda value: left + (math.log10(value) - low) / (high - low) * width
    rows = len(workloads) * (len(contestants) * bar + gap)
    height = top + rows + 50
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
           'font-family="-apple-system, Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15" font-weight="bold">Time relative to the floor '
           '(log scale; lower is better)</text>']
    for tick in [0.25, 0.5, 1, 2, 4, 8, 16]:
        out.append(f'<line x1="{x(tick):.1f}" y1="{top - 8}" x2="{x(tick):.1f}" y2="{top + rows}" '
                   f'stroke="{"#333" if tick == 1 else "#ddd"}" stroke-width="{1.5 if tick == 1 else 1}"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{top + rows + 16}" text-anchor="middle">{tick:g}×</text>')
    y = top
    for workload in workloads:
        out.append(f'<text x="{left - 8}" y="{y + len(contestants) * bar / 2 + 4:.1f}" text-anchor="end">'
                   f'{workload}</text>')
        for contestant in contestants:
            value = ratio.get((workload, contestant))
            if value:
                out.append(f'<rect x="{left}" y="{y}" width="{max(1, x(value) - left):.1f}" height="{bar - 2}" '
                           f'fill="{COLORS.get(contestant, BASELINE_COLOR)}"><title>{contestant}: {value:.2f}×</title></rect>')
            y += bar
        y += gap
    legend_x = left
    for contestant in contestants:
        out.append(f'<rect x="{legend_x}" y="{height - 22}" width="12" height="12" fill="{COLORS.get(contestant, BASELINE_COLOR)}"/>')
        out.append(f'<text x="{legend_x + 16}" y="{height - 12}">{contestant}</text>')
        legend_x += 130
    out.append('</svg>')
    open(target, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
