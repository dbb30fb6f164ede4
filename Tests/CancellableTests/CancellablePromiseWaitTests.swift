import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// `CancellablePromise.wait()`, as PromiseKit users call `Promise.wait()`: it blocks until the promise resolves, and
/// a cancellation from another thread ends the wait with the cancellation's error.
@Suite struct CancellablePromiseWaitTests {
    @Test func waitReturnsTheValueOnceAnotherThreadFulfills() throws {
        let (promise, resolver, _) = pendingWork()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { resolver.fulfill(42) }
        #expect(try promise.wait() == 42)
    }

    @Test func waitThrowsTheRejectionsError() {
        let error = TestError()
        let failed = CancellablePromise<Int>(error: error)
        #expect(throws: error) { try failed.wait() }
    }

    @Test func aCancelFromAnotherThreadEndsTheWaitWithItsReason() {
        let (promise, _, cancels) = pendingWork()
        let cancelReturned = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
            promise.cancel(reason: .timeout)
            cancelReturned.signal()
        }
        do {
            _ = try promise.wait()
            Issue.record("a cancelled promise must not fulfill")
        } catch {
            #expect(error.cancellationReason == .timeout)
        }
        cancelReturned.wait()
        #expect(cancels.current == 1, "the work was stopped, once")
    }
}
