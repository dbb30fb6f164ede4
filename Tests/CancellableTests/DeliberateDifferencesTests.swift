import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// The deliberate differences from CancellablePromiseKit that the migration guide's table lists (issue 14,
/// item 7): each test pins one, so that changing it is a decision, not an accident.
@Suite struct DeliberateDifferencesTests {
    /// (a) A link cancelled before its body ran skips the body: no work starts for a chain already cancelled.
    /// CancellablePromiseKit ran the body and then cancelled the promise it returned.
    @Test func aThenBodyWhoseLinkWasCancelledFirstIsSkippedAndStartsNoWork() async {
        let queue = DispatchQueue(label: "DeliberateDifferencesTests.skip")
        queue.suspend()
        let started = Shared(0)
        let chain = CancellablePromise.value(1).then(on: queue) { _ -> CancellablePromise<Int> in
            started.increment()
            return CancellablePromise<Int>.pending().promise
        }
        chain.cancel()
        queue.resume()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(started.current == 0, "the body must not start work for a chain already cancelled")
        #expect(chain.isCancelled)
    }

    /// (b) `isCancelled` stays false on a promise that had already resolved when a cancellation reached it —
    /// directly or from a link downstream. CancellablePromiseKit set it.
    @Test func aPromiseThatResolvedBeforeTheCancellationIsNotCancelled() {
        let (work, resolver) = CancellablePromise<Int>.pending()
        let (gate, _) = CancellablePromise<Void>.pending()
        let link = work.then(on: nil) { _ in gate }
        resolver.fulfill(1)
        #expect(link.cancel())
        #expect(!work.isCancelled, "work had fulfilled: the cancellation did not change its outcome")
        #expect(work.value == 1)
        #expect(!work.cancel())
        #expect(!work.isCancelled)
        #expect(link.isCancelled)
        #expect(gate.isCancelled)
    }
}
