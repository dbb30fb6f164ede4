import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct CatchMixinTests {
    @Test func catchSeesRejections() {
        let error = TestError()
        nonisolated(unsafe) var caught: Error?
        Promise<Int>(error: error).catch(on: nil) { caught = $0 }
        #expect(caught as? TestError == error)
    }

    @Test func catchDoesNotRunForFulfillment() {
        nonisolated(unsafe) var caught = false
        Promise.value(1).catch(on: nil) { _ in caught = true }
        #expect(!caught)
    }

    @Test func defaultPolicySkipsCancellation() {
        nonisolated(unsafe) var caught: [Error] = []
        Promise<Int>(error: PMKError.cancelled).catch(on: nil, policy: .allErrorsExceptCancellation) {
            caught.append($0)
        }
        Promise<Int>(error: TestCancellation()).catch(on: nil, policy: .allErrorsExceptCancellation) {
            caught.append($0)
        }
        #expect(caught.isEmpty)
    }

    @Test func defaultCatchPolicyIsAllErrorsExceptCancellation() {
        #expect(conf.catchPolicy == .allErrorsExceptCancellation)
        nonisolated(unsafe) var caught = false
        Promise<Int>(error: PMKError.cancelled).catch(on: nil) { _ in caught = true }
        #expect(!caught)
    }

    @Test func allErrorsPolicySeesCancellation() {
        nonisolated(unsafe) var caught: Error?
        Promise<Int>(error: PMKError.cancelled).catch(on: nil, policy: .allErrors) { caught = $0 }
        #expect(caught?.isCancelled == true)
    }

    @Test func finallyRunsAfterCatchWhetherOrNotItFailed() {
        nonisolated(unsafe) var trace: [String] = []
        Promise<Int>(error: TestError())
            .catch(on: nil) { _ in trace.append("catch") }
            .finally(on: nil) { trace.append("finally") }
        Promise.value(1)
            .catch(on: nil) { _ in trace.append("never") }
            .finally(on: nil) { trace.append("finally 2") }
        Promise<Int>(error: PMKError.cancelled)
            .catch(on: nil) { _ in trace.append("never") }
            .finally(on: nil) { trace.append("finally 3") }
        #expect(trace == ["catch", "finally", "finally 2", "finally 3"])
    }

    @Test func recoverReplacesAnErrorWithAnotherPromise() {
        let recovered = Promise<Int>(error: TestError()).recover(on: nil) { _ in Promise.value(5) }
        #expect(recovered.value == 5)
        let untouched = Promise.value(1).recover(on: nil) { _ in Promise.value(5) }
        #expect(untouched.value == 1)
        let error = TestError()
        let rethrown = Promise<Int>(error: TestError()).recover(on: nil) { _ -> Promise<Int> in throw error }
        #expect(rethrown.error as? TestError == error)
    }

    @Test func recoverWithDefaultPolicyLetsCancellationThrough() {
        nonisolated(unsafe) var called = false
        let passed = Promise<Int>(error: PMKError.cancelled)
            .recover(on: nil, policy: .allErrorsExceptCancellation) { _ -> Promise<Int> in
                called = true
                return .value(1)
            }
        #expect(!called)
        #expect(passed.error?.isCancelled == true)
        let seen = Promise<Int>(error: PMKError.cancelled).recover(on: nil, policy: .allErrors) { _ in Promise.value(2)
        }
        #expect(seen.value == 2)
    }

    @Test func recoverReturningItselfRejectsWithReturnedSelf() {
        let (source, resolver) = Promise<Int>.pending()
        let holder = Shared<Promise<Int>?>(nil)
        let recovered = source.recover(on: nil) { _ in holder.current! }
        holder.withLock { $0 = recovered }
        resolver.reject(TestError())
        #expect(recovered.error as? PMKError == .returnedSelf)
        holder.withLock { $0 = nil }
    }

    @Test func recoverWithAGuaranteeSeesEveryErrorAndCannotFail() {
        let guarantee: Guarantee<Int> = Promise<Int>(error: PMKError.cancelled).recover(on: nil) { _ in .value(3) }
        #expect(guarantee.value == 3)
        #expect(Promise.value(1).recover(on: nil) { _ in Guarantee.value(3) }.value == 1)
    }

    @Test func voidRecoverForms() {
        nonisolated(unsafe) var seen: [String] = []
        let guarantee: Guarantee<Void> = Promise<Void>(error: TestError()).recover(on: nil) { _ in seen.append("g") }
        #expect(guarantee.isFulfilled)
        let handled = Promise<Void>(error: TestError()).recover(on: nil, policy: .allErrors) { (_: Error) throws in
            seen.append("p")
        }
        #expect(handled.isFulfilled)
        let error = TestError()
        let rethrown = Promise<Void>(error: TestError()).recover(on: nil, policy: .allErrors) { (_: Error) throws in
            throw error
        }
        #expect(rethrown.error as? TestError == error)
        #expect(seen == ["g", "p"])
    }

    @Test func ensureRunsEitherWayInChainOrder() {
        nonisolated(unsafe) var trace: [String] = []
        let (promise, resolver) = Promise<Int>.pending()
        let ensured =
            promise
            .get(on: nil) { _ in trace.append("get") }
            .ensure(on: nil) { trace.append("ensure") }
            .done(on: nil) { _ in trace.append("done") }
        #expect(trace.isEmpty)
        resolver.fulfill(1)
        #expect(trace == ["get", "ensure", "done"])
        #expect(ensured.isFulfilled)

        nonisolated(unsafe) var ran = false
        let error = TestError()
        let rejected = Promise<Int>(error: error).ensure(on: nil) { ran = true }
        #expect(ran)
        #expect(rejected.error as? TestError == error)
    }

    @Test func ensureThenWithAGuaranteeWaitsForIt() {
        let (cleanup, finishCleanup) = Guarantee<Void>.pending()
        let chained = Promise.value(1).ensureThen(on: nil) { cleanup }
        #expect(chained.isPending)
        finishCleanup(())
        #expect(chained.value == 1)
    }

    @Test func ensureThenWithAPromiseWaitsAndItsFailureFailsTheChain() {
        let (cleanup, cleanupResolver) = Promise<Void>.pending()
        nonisolated(unsafe) var runs = 0
        let chained = Promise.value(1).ensureThen(on: nil) { () -> Promise<Void> in
            runs += 1
            return cleanup
        }
        #expect(chained.isPending)
        let error = TestError()
        cleanupResolver.reject(error)
        #expect(chained.error as? TestError == error)
        #expect(runs == 1)
    }

    @Test func ensureThenWithAPromiseRunsOnceOnRejectionAndKeepsTheOriginalError() {
        nonisolated(unsafe) var runs = 0
        let error = TestError()
        let chained = Promise<Int>(error: error).ensureThen(on: nil) { () -> Promise<Void> in
            runs += 1
            return .value
        }
        #expect(chained.error as? TestError == error)
        #expect(runs == 1)
    }

    @Test func cauterizeLogsTheError() async {
        let error = TestError()
        LogCapture.install()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Promise<Int>(error: error).cauterize().finally(on: nil) { continuation.resume() }
        }
        #expect(LogCapture.allEvents.contains { $0.cauterizedError as? TestError == error })
    }
}
