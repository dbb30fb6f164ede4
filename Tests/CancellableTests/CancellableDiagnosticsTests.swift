import Cancellable
import PromiseCore
import TestSupport
import Testing

/// Issue 8, item 5, for cancellable promises: every initialiser and factory that starts work records its call
/// site; a cancelled or resolved promise is no longer listed. Serialized: it counts what this file creates.
@Suite(.serialized) struct CancellableDiagnosticsTests {
    static func pendingHere(after start: PromiseDiagnostics.Checkpoint) -> [PendingPromise] {
        PromiseDiagnostics.pendingPromises(createdAfter: start).filter {
            $0.site.fileID == "CancellableTests/CancellableDiagnosticsTests.swift"
        }
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func everyStartingInitialiserRecordsItsCallSite() {
        let start = PromiseDiagnostics.checkpoint()
        let (plain, _) = Promise<Int>.pending()
        let lines: [Int]
        let promises: [CancellablePromise<Int>]
        do {
            let a = CancellablePromise<Int> { _ in {} }; let lineA = #line
            let b = CancellablePromise<Int> { _ in { _ in } }; let lineB = #line
            let c = CancellablePromise(using: plain, cancel: {}); let lineC = #line
            let d = CancellablePromise<Int>(wrapper: { _ in plain }); let lineD = #line
            let (e, _) = CancellablePromise<Int>.pending(); let lineE = #line
            lines = [lineA, lineB, lineC, lineD, lineE]
            promises = [a, b, c, d, e]
        }
        let listed = Self.pendingHere(after: start)
        // `plain` is listed too (a Promise made by `pending()`), before the others.
        #expect(listed.map(\.site.line).dropFirst() == lines.map(UInt.init)[...])
        #expect(listed.dropFirst().allSatisfy { $0.type == "CancellablePromise<Int>" }, "listed by their own type")
        for promise in promises { promise.cancel() }
        #expect(Self.pendingHere(after: start).count == 1, "only `plain` is still pending")
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func aTestCanAssertThatNothingItStartedIsLeftPending() {
        let start = PromiseDiagnostics.checkpoint()
        let (work, resolver) = CancellablePromise<Int>.pending()
        let chain = work.map(on: nil) { $0 * 2 }.timeout(seconds: .infinity)
        #expect(Self.pendingHere(after: start).count == 1)
        resolver.fulfill(21)
        #expect(chain.value == 42)
        #expect(Self.pendingHere(after: start).isEmpty)
    }
}
