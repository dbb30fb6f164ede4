#!/usr/bin/env python3
"""Must-not-compile checks: main-actor code in a handler that may run off the main actor is a compile-time error.

For each combination of what the body touches (a main-actor function, a main-actor type's initialiser, a
main-actor property), where it runs (`on: .global()`, `on: nil`), the promise type (`Promise`,
`CancellablePromise`) and the client's mode (Swift 6 with explicit `@MainActor`, Swift 6 with default MainActor
isolation and the approachable-concurrency features), a small client file is type-checked against the modules
of a debug build and must fail with an actor-isolation error. A control file with the same code on the default
queue must compile, so a failure cannot come from a broken snippet.

Usage: scripts/check-isolation-errors.py [modules directory, default .build/debug/Modules]
"""
import os
import re
import subprocess
import sys
import tempfile

MODULES = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/Modules"
MODES = {
    "swift6": ["-swift-version", "6"],
    "default-main-actor": [
        "-swift-version", "6", "-default-isolation", "MainActor",
        "-enable-upcoming-feature", "NonisolatedNonsendingByDefault",
        "-enable-upcoming-feature", "InferIsolatedConformances",
    ],
}
# What the body touches; `{annotation}` is `@MainActor` in Swift 6 mode and nothing in default-isolation mode.
DECLARATIONS = """
import PromiseCore
import Cancellable
{annotation} struct Item {{ let id: Int; init(raw: Int) {{ id = raw }} }}
{annotation} func parse(_ raw: Int) -> Int {{ raw }}
{annotation} final class Model {{
    var count = 0
    func load(_ promise: {promise}<Int>) {{
        {call}
    }}
}}
"""
USES = {
    "main-actor function": "parse(raw)",
    "main-actor initialiser": "Item(raw: raw).id",
    "main-actor property": "self.count + raw",
}
# Every handler-taking method, with a body that computes `{use}` from `raw` (an Int).
CALLS = {
    "then": "_ = promise.then({on}) {{ raw -> Promise<Int> in .value({use}) }}",
    "map": "_ = promise.map({on}) {{ raw -> Int in {use} }}",
    "compactMap": "_ = promise.compactMap({on}) {{ raw -> Int? in {use} }}",
    "done": "_ = promise.done({on}) {{ raw in _ = {use} }}",
    "get": "_ = promise.get({on}) {{ raw in _ = {use} }}",
    "tap": "_ = promise.tap({on}) {{ _ in let raw = 0; _ = {use} }}",
    "catch": "promise.catch({on}) {{ _ in let raw = 0; _ = {use} }}",
    "recover": "_ = promise.recover({on}) {{ _ -> Promise<Int> in let raw = 0; return .value({use}) }}",
    "ensure": "_ = promise.ensure({on}) {{ let raw = 0; _ = {use} }}",
    "ensureThen": "_ = promise.ensureThen({on}) {{ let raw = 0; _ = {use}; return Guarantee.value(()) }}",
    "finally": "promise.catch({on}) {{ _ in }}.finally({on}) {{ let raw = 0; _ = {use} }}",
    "mapValues": "_ = promise.map({on}) {{ [$0] }}.mapValues({on}) {{ raw in {use} }}",
    "retry(when:)": "_ = retry(2, {onsep}when: {{ _ in let raw = 0; return {use} > 0 }}) {{ promise }}",
}
# Closures that may run off the main actor even without `on:` (retry's `shouldRetry` runs on the rejecting
# thread): their control must fail to compile as well.
NO_CONTROL = {"retry(when:)"}
EXPECTED = re.compile(r"error: .*(main actor-isolated|loses global actor)")


def typecheck(source, flags):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "client.swift")
        with open(path, "w") as file:
            file.write(source)
        result = subprocess.run(
            ["swiftc", "-typecheck", "-I", MODULES, *flags, path], capture_output=True, text=True
        )
        return result.returncode, result.stdout + result.stderr


failures = 0
checked = 0
for mode, flags in MODES.items():
    annotation = "@MainActor" if mode == "swift6" else ""
    for promise in ("Promise", "CancellablePromise"):
        cases = [(method, what, use) for method in CALLS for what, use in USES.items() if method == "map" or what == "main-actor function"]
        for method, what, use in cases:
            def source_for(on):
                call = CALLS[method].format(on=on, onsep=on + ", " if on else "", use=use)
                return DECLARATIONS.format(annotation=annotation, promise=promise, call=call)
            control = source_for("")
            status, output = typecheck(control, flags)
            if method in NO_CONTROL:
                checked += 1
                if status == 0 or not EXPECTED.search(output):
                    print(f"FAIL not rejected as expected: {mode}, {promise} {method} (no on:) using a {what}")
                    failures += 1
                else:
                    print(f"ok   rejected: {mode}, {promise} {method} (no on:) using a {what}")
            elif status != 0:
                print(f"FAIL control ({mode}, {promise}.{method}, {what}, default queue) does not compile:\n{output}")
                failures += 1
                continue
            for on in ("on: .global()", "on: nil"):
                source = source_for(on)
                status, output = typecheck(source, flags)
                checked += 1
                if status == 0:
                    print(f"FAIL compiles: {mode}, {promise}.{method}({on}) using a {what}")
                    failures += 1
                elif not EXPECTED.search(output):
                    print(f"FAIL wrong diagnostic: {mode}, {promise}.{method}({on}) using a {what}:\n{output}")
                    failures += 1
                else:
                    print(f"ok   rejected: {mode}, {promise}.{method}({on}) using a {what}")
print(f"{checked - failures} of {checked} snippets rejected as expected" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
