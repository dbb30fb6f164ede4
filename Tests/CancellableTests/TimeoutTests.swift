import Cancellable
import Dispatch
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

@Suite struct TimeoutTests {
    @Test func rejectsWithATimeoutErrorAtTheDeadlineAndCancelsTheWork() {
        let scheduler = TestClock()
        let (work, _, cancels) = pendingWork()
        let limited = withPromiseClock(scheduler) { work.timeout(seconds: 5) }
        scheduler.advance(by: .milliseconds(4_999))
        #expect(limited.isPending)
        scheduler.advance(by: .milliseconds(1))
        #expect(limited.error as? TimeoutError == TimeoutError(seconds: 5))
        #expect(limited.error?.isCancelled == false, "a timeout is an error, not a cancellation")
        #expect(cancels.current == 1)
        #expect(work.isCancelled)
    }

    @Test func theDefaultCatchSeesATimeout() {
        let scheduler = TestClock()
        let (work, _, _) = pendingWork()
        nonisolated(unsafe) var caught: Error?
        withPromiseClock(scheduler) { work.timeout(seconds: 1) }.catch(on: nil) { caught = $0 }
        scheduler.advance(by: .seconds(1))
        #expect(caught is TimeoutError)
    }

    @Test func resolvingFirstReleasesTheTimer() {
        let scheduler = TestClock()
        let (work, resolver, cancels) = pendingWork()
        let limited = withPromiseClock(scheduler) { work.timeout(seconds: 5) }
        #expect(scheduler.pendingTimers == 1)
        resolver.fulfill(3)
        #expect(limited.value == 3)
        #expect(scheduler.pendingTimers == 0)
        scheduler.advance(by: .seconds(10))
        #expect(limited.value == 3)
        #expect(cancels.current == 0)
    }

    @Test func cancellingTheTimeoutCancelsTheWork() {
        let scheduler = TestClock()
        let (work, _, cancels) = pendingWork()
        let limited = withPromiseClock(scheduler) { work.timeout(seconds: 5) }
        limited.cancel()
        #expect(cancels.current == 1)
        #expect(limited.isCancelled)
        #expect(scheduler.pendingTimers == 0)
    }

    @Test(arguments: [0, -1, Double.nan])
    func nonPositiveIntervalsTimeOutAtOnce(seconds: Double) {
        let (work, _, cancels) = pendingWork()
        let limited = work.timeout(seconds: seconds)
        #expect(limited.error is TimeoutError)
        #expect(cancels.current == 1)
    }

    @Test func anAlreadyResolvedPromiseNeverTimesOut() {
        #expect(CancellablePromise.value(1).timeout(seconds: 0).value == 1)
    }

    @Test func realClockTimeout() async {
        let (work, _, cancels) = pendingWork()
        let result = await work.timeout(seconds: 0.01).asPromise().asResult().async()
        guard case .failure(let error) = result else {
            Issue.record("expected a timeout")
            return
        }
        #expect(error is TimeoutError)
        #expect(cancels.current == 1)
    }
}
