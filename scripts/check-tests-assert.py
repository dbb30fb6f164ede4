#!/usr/bin/env python3
"""Fails if a test function checks nothing: a swift-testing `@Test` function, or an XCTest `func test…`, whose body
has no `#expect`, `#require`, `Issue.record`, `withKnownIssue`, `XCTAssert…`, `XCTFail`, `XCTUnwrap` or XCTest
expectation wait — and calls (or passes on) no function of the test sources that has one (found to a fixed point: a helper that calls a helper that asserts counts). A test that
passes by not crashing, not hanging or not being reported by a sanitizer says so in ALLOWED, with the reason.

    scripts/check-tests-assert.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ASSERTS = re.compile(
    r"#expect\b|#require\b|Issue\.record\b|withKnownIssue\b|XCTAssert\w*|XCTFail\b|XCTUnwrap\b|XCTExpectFailure\b"
    r"|\bwait\(for:|\bfulfillment\(of:"  # an XCTest expectation that is never fulfilled fails the test
)
# file:function → why it asserts nothing itself.
ALLOWED: dict[str, str] = {
}


def strip_strings(text: str) -> str:
    """Blanks string literals and comments, keeping offsets, so that braces inside them do not count."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i, min(j + 1, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def functions(path: pathlib.Path):
    """Yields (name, is_test, body) for each function declared in the file."""
    raw = path.read_text()
    text = strip_strings(raw)
    for match in re.finditer(r"\bfunc\s+(\w+)", text):
        name = match.group(1)
        start = text.find("{", match.end())
        if start < 0:
            continue
        # A protocol requirement has no body: the next declaration comes first.
        if re.search(r"\n\s*(func|var|let|init|case|}\s*$)", text[match.end():start]):
            continue
        depth, end = 0, start
        for end in range(start, len(text)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    break
        before = text[max(0, match.start() - 400):match.start()]
        attributes = before[before.rfind("\n\n") + 1:] if "\n\n" in before else before
        is_test = bool(re.search(r"@Test\b", attributes.split("func ")[-1])) or (
            name.startswith("test") and "XCTestCase" in text
        )
        yield name, is_test, text[start:end + 1]


def main() -> int:
    files = [p for p in sorted(ROOT.glob("Tests/**/*.swift")) if "Generated" not in p.parts and ".build" not in str(p)]
    bodies: list[tuple[pathlib.Path, str, bool, str]] = []
    for path in files:
        for name, is_test, body in functions(path):
            bodies.append((path, name, is_test, body))
    asserting = {name for _, name, _, body in bodies if ASSERTS.search(body)}
    while True:
        names = "|".join(map(re.escape, sorted(asserting)))
        # A call, or a reference passed on (`repeated(Self.scenario)`).
        calls = re.compile(r"\b(" + names + r")\s*[({]|\.(" + names + r")\b") if asserting else None
        grown = {name for _, name, _, body in bodies if name not in asserting and calls and calls.search(body)}
        if not grown:
            break
        asserting |= grown
    failures = []
    tests = 0
    for path, name, is_test, body in bodies:
        if not is_test:
            continue
        tests += 1
        key = f"{path.relative_to(ROOT)}:{name}"
        if ASSERTS.search(body) or (calls and calls.search(body)) or key in ALLOWED:
            continue
        failures.append(key)
    stale = [key for key in ALLOWED if key not in {f"{p.relative_to(ROOT)}:{n}" for p, n, t, _ in bodies if t}]
    for key in failures:
        print(f"FAIL: {key} asserts nothing (add an expectation, or an ALLOWED entry saying why it needs none)")
    for key in stale:
        print(f"FAIL: ALLOWED names {key}, which is not a test any more")
    if failures or stale:
        return 1
    print(f"every one of {tests} test functions asserts something, or says in ALLOWED why it need not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
