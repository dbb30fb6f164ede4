import Cancellable
import Dispatch
import Foundation
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

/// Cancellable `after` and `retry`: their timers run on a manual clock, so every step is deterministic.
@Suite struct CancellableAfterTests {
    @Test func fulfilsWhenTheTimeComes() {
        let clock = TestClock()
        let delay: CancellablePromise<Void> = withPromiseClock(clock) { after(seconds: 2) }
        clock.advance(by: .milliseconds(1_999))
        #expect(delay.isPending)
        clock.advance(by: .milliseconds(1))
        #expect(delay.isFulfilled)
    }

    @Test func cancellingRejectsAndRemovesTheTimer() {
        let clock = TestClock()
        let delay: CancellablePromise<Void> = withPromiseClock(clock) { after(.seconds(5)) }
        #expect(clock.pendingTimers == 1)
        #expect(delay.cancel())
        #expect(clock.pendingTimers == 0)
        #expect(delay.error as? CancellablePromiseError == .cancelled)
        clock.advance(by: .seconds(10))
        #expect(delay.isRejected)
    }

    @Test func aCancelledDelayHoldsNothingWhileDispatchStillHoldsItsTimer() {
        // Dispatch keeps a cancelled timer's block until its deadline; the block must not keep the promise.
        weak var promise: Promise<Void>?
        do {
            let delay: CancellablePromise<Void> = after(seconds: 3_600)
            promise = delay.asPromise()
            delay.cancel()
        }
        #expect(promise == nil)
    }

    @Test func plainAfterStillMeansPromiseCoresGuarantee() {
        let clock = TestClock()
        withPromiseClock(clock) {
            let plain = after(seconds: 1)
            #expect(type(of: plain) == Guarantee<Void>.self)
            #expect(type(of: after(seconds: 1).asCancellable()) == CancellablePromise<Void>.self)
        }
    }
}

@Suite struct RetryTests {
    /// A body that rejects with a fresh error until `failures` attempts have failed, then fulfills with the
    /// attempt's number.
    static func flaky(failures: Int, errors: Shared<[TestError]>) -> () -> Promise<Int> {
        let attempts = Shared(0)
        return {
            attempts.increment()
            let attempt = attempts.current
            guard attempt > failures else {
                let error = TestError()
                errors.append(error)
                return Promise(error: error)
            }
            return .value(attempt)
        }
    }

    @Test func succeedsOnALaterAttemptAfterBackedOffDelays() {
        let clock = TestClock()
        let errors = Shared<[TestError]>([])
        let result = withPromiseClock(clock) {
            retry(3, delay: 1, backoff: 2, on: nil, Self.flaky(failures: 2, errors: errors))
        }
        #expect(errors.current.count == 1)
        clock.advance(by: .seconds(1))
        #expect(errors.current.count == 2, "the second attempt ran after 1 s")
        clock.advance(by: .seconds(1))
        #expect(result.isPending, "the second delay is 2 s")
        clock.advance(by: .seconds(1))
        #expect(result.value == 3)
    }

    @Test func givesUpWithTheLastError() {
        let clock = TestClock()
        let errors = Shared<[TestError]>([])
        let result = withPromiseClock(clock) {
            retry(3, on: nil, Self.flaky(failures: 10, errors: errors))
        }
        clock.advance(by: .seconds(0))
        clock.advance(by: .seconds(0))
        #expect(errors.current.count == 3)
        #expect(result.error as? TestError == errors.current.last)
        #expect(clock.pendingTimers == 0)
    }

    @Test func stopsWhenShouldRetrySaysNo() {
        let clock = TestClock()
        let errors = Shared<[TestError]>([])
        let seen = Shared<[Error]>([])
        let result = withPromiseClock(clock) {
            retry(
                5,
                on: nil,
                when: {
                    seen.append($0); return false
                },
                Self.flaky(failures: 10, errors: errors)
            )
        }
        #expect(errors.current.count == 1)
        #expect(seen.current.count == 1)
        #expect(result.error as? TestError == errors.current.first)
        #expect(clock.pendingTimers == 0)
    }

    @Test func aThrowingBodyCountsAsAFailedAttempt() {
        let clock = TestClock()
        let attempts = Shared(0)
        let result: CancellablePromise<Int> = withPromiseClock(clock) {
            retry(2, on: nil) { () throws -> Promise<Int> in
                attempts.increment()
                if attempts.current == 1 { throw TestError() }
                return .value(7)
            }
        }
        clock.advance(by: .seconds(0))
        #expect(result.value == 7)
        #expect(attempts.current == 2)
    }

    @Test func cancellingCancelsTheAttemptInFlightAndStartsNoOther() {
        let clock = TestClock()
        let attempts = Shared(0)
        let cancels = Shared(0)
        let result = withPromiseClock(clock) {
            retry(3, on: nil) { () -> CancellablePromise<Int> in
                attempts.increment()
                return CancellablePromise { _ in { cancels.increment() } }
            }
        }
        #expect(result.cancel())
        #expect(cancels.current == 1)
        #expect(result.error as? CancellablePromiseError == .cancelled)
        clock.advance(by: .seconds(100))
        #expect(attempts.current == 1)
    }

    @Test func cancellingDuringADelayReleasesTheTimerAndStartsNoOther() {
        let clock = TestClock()
        let errors = Shared<[TestError]>([])
        let result = withPromiseClock(clock) {
            retry(3, delay: 10, on: nil, Self.flaky(failures: 10, errors: errors))
        }
        #expect(clock.pendingTimers == 1)
        result.cancel()
        #expect(clock.pendingTimers == 0)
        clock.advance(by: .seconds(100))
        #expect(errors.current.count == 1)
        #expect(result.isCancelled)
    }

    /// The narrowest window of the race below, made deterministic: the retry is cancelled after the failure was
    /// judged worth retrying, before the next delay is in place. The delay must be released at once.
    @Test func aCancelThatLandsWhileTheNextDelayIsBeingScheduledReleasesIt() {
        let clock = TestClock()
        let errors = Shared<[TestError]>([])
        let holder = Shared<CancellablePromise<Int>?>(nil)
        let result = withPromiseClock(clock) {
            retry(
                3,
                delay: 1,
                on: nil,
                when: { _ in
                    holder.current?.cancel()
                    return true
                },
                Self.flaky(failures: 10, errors: errors)
            )
        }
        holder.withLock { $0 = result }
        // The first attempt failed before `holder` was set; make the second one fail with the cancel inside.
        clock.advance(by: .seconds(1))
        #expect(result.isCancelled)
        #expect(clock.pendingTimers == 0)
        clock.advance(by: .seconds(100))
        #expect(errors.current.count == 2)
    }

    @Test func cancellationsAreNotRetried() {
        let clock = TestClock()
        let attempts = Shared(0)
        let result = withPromiseClock(clock) {
            retry(3, on: nil) { () -> Promise<Int> in
                attempts.increment()
                return Promise(error: CancellablePromiseError.cancelled)
            }
        }
        #expect(attempts.current == 1)
        #expect(result.error?.isCancelled == true)
        #expect(clock.pendingTimers == 0)
    }

    @Test(arguments: [(0, 0.0, 1.0), (-1, 0, 1), (2, -1, 1), (2, .nan, 1), (2, .infinity, 1), (2, 1, -2), (2, 1, .nan)])
    func badInputRejectsAtOnceWithoutAnAttempt(attempts: Int, delay: Double, backoff: Double) {
        let made = Shared(0)
        let result = retry(attempts, delay: delay, backoff: backoff) { () -> Promise<Int> in
            made.increment()
            return .value(1)
        }
        #expect(result.error as? PMKError == .badInput)
        #expect(made.current == 0)
    }

    @Test func laterAttemptsStartOnTheGivenQueue() async throws {
        let onMain = Shared<[Bool]>([])
        let result = retry(2, delay: 0, on: .main) { () -> Promise<Int> in
            onMain.append(isOnMainQueue)
            return onMain.current.count == 1 ? Promise(error: TestError()) : .value(1)
        }
        #expect(try await result.async() == 1)
        #expect(onMain.current.last == true)
    }

    /// cancel() races the failure that would schedule the next attempt: whichever wins, the retry ends
    /// cancelled, no timer is left behind, and no attempt starts afterwards.
    @Test func cancelRacingAFailureLeavesNoTimerAndNoNewAttempt() {
        for _ in 0..<300 {
            let clock = TestClock()
            let attempts = Shared(0)
            let resolvers = Shared<[Resolver<Int>]>([])
            let result = withPromiseClock(clock) {
                retry(2, on: nil) { () -> Promise<Int> in
                    attempts.increment()
                    let (promise, resolver) = Promise<Int>.pending()
                    resolvers.append(resolver)
                    return promise
                }
            }
            let first = resolvers.current[0]
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    first.reject(TestError())
                } else {
                    result.cancel()
                }
            }
            clock.advance(by: .seconds(1))
            #expect(result.isCancelled)
            #expect(clock.pendingTimers == 0)
            #expect(attempts.current == 1)
        }
    }
}
