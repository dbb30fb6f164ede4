import PromiseCore

#if canImport(Testing)
public import Testing
#endif
#if canImport(XCTest)
public import XCTest
#endif

/// Runs `body` and fails the test — naming each creation site — if a promise that `body` created is still
/// pending when it returns, or was left unable to resolve (its resolver released while it was pending).
///
/// ```swift
/// try await withNoPromisesLeftPending {
///     let model = SearchModel()
///     try await model.search("swift").async()
/// }
/// ```
///
/// Works in Swift Testing and XCTest; in Swift Testing, the `.noPromisesLeftPending` trait does the
/// same for a whole test or suite. It lists what `PromiseDiagnostics` records — promises that start work
/// (`Promise { … }`, `pending()`, every `CancellablePromise` initialiser) made in debug builds — and only those
/// made while `body` runs in this task, or synchronously from it: tests running in parallel do not see each other's.
/// A pending `CancellablePromise` still has its cancel handlers registered, so they are reported with it. In
/// release builds nothing is recorded and nothing is reported.
@discardableResult
public func withNoPromisesLeftPending<R>(
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    _ body: () async throws -> R
) async rethrows -> R {
    let (result, pending) = try await PromiseDiagnostics.pendingPromises(createdDuring: body)
    reportPending(pending, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return result
}

/// Fails the test with ``pendingMessage(_:)`` if `pending` is not empty.
func reportPending(_ pending: [PendingPromise], at site: CallSite) {
    if let message = pendingMessage(pending) {
        reportTestFailure(message, at: site)
    }
}

/// What a leak check says about `pending`: one line per promise, oldest first; `nil` if it is empty.
func pendingMessage(_ pending: [PendingPromise]) -> String? {
    guard !pending.isEmpty else { return nil }
    let lines = pending.map { promise in
        "  " + promise.description
            + (promise.type.hasPrefix("CancellablePromise<") && !promise.canNeverResolve
                ? " (its cancel handlers are still registered)" : "")
    }
    let count = pending.count == 1 ? "1 promise" : "\(pending.count) promises"
    return "\(count) left pending:\n" + lines.joined(separator: "\n")
}

#if canImport(Testing)
/// A Swift Testing trait that fails a test if a promise it created is still pending when it ends; see
/// `.noPromisesLeftPending` trait.
public struct NoPromisesLeftPendingTrait: TestTrait, SuiteTrait, TestScoping {
    /// Where to report; the test's own location when `nil`.
    let site: CallSite?

    /// On a suite, it applies to each of its tests.
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else {
            try await function()
            return
        }
        let (_, pending) = try await PromiseDiagnostics.pendingPromises(createdDuring: function)
        if let site {
            reportPending(pending, at: site)
        } else if let message = pendingMessage(pending) {
            Issue.record(Comment(rawValue: message), sourceLocation: test.sourceLocation)
        }
    }
}

extension Trait where Self == NoPromisesLeftPendingTrait {
    /// Fails the test, naming each creation site, if a promise it created is still pending when it ends (or was
    /// left unable to ever resolve).
    ///
    /// ```swift
    /// @Test(.noPromisesLeftPending) func searchFinishes() async throws {
    ///     try await SearchModel().search("swift").async()
    /// }
    /// ```
    ///
    /// On a suite, it checks each test. Safe with parallel tests: each test sees only the promises made in its own
    /// task (see ``withNoPromisesLeftPending(isolation:fileID:filePath:line:column:_:)``). Debug builds only.
    public static var noPromisesLeftPending: Self {
        NoPromisesLeftPendingTrait(site: nil)
    }

    /// ``noPromisesLeftPending`` with the failure reported at the given source location rather than the test's.
    public static func noPromisesLeftPending(
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) -> Self {
        NoPromisesLeftPendingTrait(site: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
}
#endif

#if canImport(XCTest)
extension XCTestCase {
    /// Fails this test, naming each creation site, if a promise created from now until the test ends is still
    /// pending at tear-down (or was left unable to ever resolve). Call it in `setUp()`, or first in a synchronous
    /// test.
    ///
    /// ```swift
    /// override func setUp() {
    ///     super.setUp()
    ///     failIfPromisesLeftPending()
    /// }
    ///
    /// func testSearchFinishes() async throws {
    ///     _ = try await SearchModel().search("swift").async()
    /// }
    /// ```
    ///
    /// XCTest runs a process's tests one at a time, so it lists every promise created meanwhile, on any thread.
    /// Debug builds only.
    ///
    /// > Important: On Linux, swift-corelibs-xctest deadlocks when a teardown block is added from inside an
    /// > `async` test; there, call this from `setUp()` for async tests (it fails the test, rather than hang, if
    /// > called from a task).
    public func failIfPromisesLeftPending(file: StaticString = #filePath, line: UInt = #line) {
        #if !canImport(Darwin)
        if withUnsafeCurrentTask(body: { $0 != nil }) {
            XCTFail(
                "failIfPromisesLeftPending() was called from an async test: on Linux, call it from setUp()",
                file: file,
                line: line
            )
            return
        }
        #endif
        let start = PromiseDiagnostics.checkpoint()
        addTeardownBlock {
            reportPending(
                PromiseDiagnostics.pendingPromises(createdAfter: start),
                at: CallSite(fileID: file, filePath: file, line: line, column: 1)
            )
        }
    }
}
#endif
