import Cancellable
import PromiseCore
import TestSupport
import Testing

@Suite struct CancellablePromiseCatchTests {
    @Test func catchReturnsAFinalizerThatCanCancelTheChain() {
        let (root, _) = CancellablePromise<Int>.pending()
        nonisolated(unsafe) var trace: [String] = []
        let finalizer = root.done(on: nil) { _ in trace.append("done") }
            .catch(on: nil, policy: .allErrors) { trace.append("catch \($0.isCancelled)") }
        finalizer.finally(on: nil) { trace.append("finally") }
        #expect(finalizer.cancel())
        #expect(root.isCancelled)
        #expect(trace == ["catch true", "finally"])
        #expect(!finalizer.cancel())
    }

    @Test func recoverReplacesErrorsButNotCancellationByDefault() {
        let recovered = CancellablePromise<Int>(error: TestError()).recover(on: nil) { _ in Promise.value(5) }
        #expect(recovered.value == 5)

        let (root, _) = CancellablePromise<Int>.pending()
        nonisolated(unsafe) var called = false
        let passed = root.recover(on: nil) { _ -> Promise<Int> in
            called = true
            return .value(0)
        }
        root.cancel()
        #expect(!called)
        #expect(passed.isCancelled)

        let (other, _) = CancellablePromise<Int>.pending()
        let seen = other.recover(on: nil, policy: .allErrors) { _ in Promise.value(9) }
        other.cancel()
        #expect(seen.value == 9)
    }

    @Test func recoverWithACancellablePromiseKeepsItCancellable() {
        let (fallback, _) = CancellablePromise<Int>.pending()
        let chain = CancellablePromise<Int>(error: TestError()).recover(on: nil) { _ in fallback }
        #expect(chain.isPending)
        chain.cancel()
        #expect(fallback.isCancelled)
    }

    @Test func recoverWithAGuaranteeStillCompiles() {
        let guarantee: Guarantee<Int> = CancellablePromise<Int>(error: TestError()).recover(on: nil) { _ in
            Guarantee.value(1)
        }
        #expect(guarantee.value == 1)
    }

    /// Issue 14, item 1: PromiseKit's two Void forms, on a cancellable chain.
    @Test func voidRecoverHandlesEveryErrorAndStaysCancellable() {
        nonisolated(unsafe) var seen: [String] = []
        let recovered = CancellablePromise<Void>(error: TestError()).recover(on: nil) { seen.append("\(type(of: $0))") }
        #expect(recovered.isFulfilled)
        #expect(seen == ["TestError"])

        // Its upstream cancelled by someone else: the guarantee form handles that too, as PromiseKit's does.
        let (upstream, _) = CancellablePromise<Void>.pending()
        let handled = upstream.recover(on: nil) { _ in seen.append("cancellation") }
        upstream.cancel()
        #expect(handled.isFulfilled)
        #expect(seen.last == "cancellation")

        // Cancelling the recovered promise itself cancels the work and skips the body.
        nonisolated(unsafe) var cancelHandlerRuns = 0
        let work = CancellablePromise<Void> { _ in { cancelHandlerRuns += 1 } }
        let chain = work.done(on: nil) {}.recover(on: nil) { _ in seen.append("not expected") }
        #expect(chain.cancel())
        #expect(cancelHandlerRuns == 1)
        #expect(chain.isCancelled)
        #expect(seen.last == "cancellation")
    }

    @Test func throwingVoidRecoverRethrowsAndLetsCancellationThroughByDefault() {
        let swallowed = CancellablePromise<Void>(error: TestError()).recover(on: nil) { error in
            guard error is TestError else { throw error }
        }
        #expect(swallowed.isFulfilled)
        let rethrown = CancellablePromise<Void>(error: TestCancellation()).recover(on: nil, policy: .allErrors) {
            error in
            guard error is TestError else { throw error }
        }
        #expect(rethrown.error is TestCancellation)

        nonisolated(unsafe) var called = false
        let (upstream, _) = CancellablePromise<Void>.pending()
        let passed = upstream.recover(on: nil) { (_: Error) throws in called = true }
        upstream.cancel()
        #expect(!called)
        #expect(passed.isCancelled)

        nonisolated(unsafe) var cancelHandlerRuns = 0
        let work = CancellablePromise<Void> { _ in { cancelHandlerRuns += 1 } }
        let chain = work.recover(on: nil) { (_: Error) throws in called = true }
        chain.cancel()
        #expect(cancelHandlerRuns == 1)
        #expect(!called)
    }

    @Test func guaranteeRecoverAndCauterizeKeepTheChainCancellable() {
        var cancelHandlerRuns = 0
        let work = CancellablePromise<Int> { _ in { cancelHandlerRuns += 1 } }
        let recovered = work.recover(on: nil) { _ in Guarantee.value(0) }
        #expect(recovered.cancel())
        #expect(cancelHandlerRuns == 1)
        #expect(recovered.isCancelled)
        #expect(CancellablePromise<Int>(error: TestError()).recover(on: nil) { _ in .value(7) }.value == 7)

        let other = CancellablePromise<Int> { _ in { cancelHandlerRuns += 1 } }
        let finalizer = other.done(on: nil) { _ in }.cauterize()
        #expect(finalizer.cancel())
        #expect(cancelHandlerRuns == 2)
    }

    @Test func sequenceHelpersTransformAndStayCancellable() {
        let numbers = CancellablePromise.value([3, 1, 2])
        #expect(numbers.mapValues(on: nil) { $0 * 2 }.value == [6, 2, 4])
        #expect(numbers.flatMapValues(on: nil) { [$0, $0] }.value == [3, 3, 1, 1, 2, 2])
        #expect(numbers.compactMapValues(on: nil) { $0 > 1 ? $0 : nil }.value == [3, 2])
        #expect(numbers.filterValues(on: nil) { $0 > 1 }.value == [3, 2])
        #expect(numbers.sortedValues(on: nil).value == [1, 2, 3])
        #expect(numbers.firstValue.value == 3)
        #expect(numbers.lastValue.value == 2)
        #expect(numbers.firstValue(on: nil, where: { $0 < 3 }).value == 1)
        #expect(CancellablePromise.value([Int]()).firstValue.error as? PMKError == .emptySequence)
        #expect(numbers.thenMap(on: nil) { Promise.value($0 + 1) }.value == [4, 2, 3])
        #expect(numbers.thenFlatMap(on: nil) { Promise.value([$0]) }.value == [3, 1, 2])

        var cancelHandlerRuns = 0
        let work = CancellablePromise<[Int]> { _ in { cancelHandlerRuns += 1 } }
        let mapped = work.mapValues(on: nil) { $0 }
        mapped.cancel()
        #expect(cancelHandlerRuns == 1)

        // The promises thenMap's transform starts belong to the chain: cancelling it cancels them.
        nonisolated(unsafe) var started: [CancellablePromise<Int>] = []
        let ids = CancellablePromise.value([1, 2])
        let all = ids.thenMap(on: nil) { id -> CancellablePromise<Int> in
            let (promise, _) = CancellablePromise<Int>.pending()
            started.append(promise)
            return promise
        }
        #expect(started.count == 2)
        all.cancel()
        #expect(started.allSatisfy { $0.isCancelled })
    }

    @Test func ensureRunsForEveryOutcomeIncludingCancellation() {
        nonisolated(unsafe) var runs = 0
        let (root, _) = CancellablePromise<Int>.pending()
        let ensured = root.ensure(on: nil) { runs += 1 }
        ensured.cancel()
        #expect(runs == 1)
        #expect(ensured.isCancelled)
        _ = CancellablePromise.value(1).ensure(on: nil) { runs += 1 }
        _ = CancellablePromise<Int>(error: TestError()).ensure(on: nil) { runs += 1 }
        #expect(runs == 3)
    }

    @Test func ensureThenWaitsAndAFailingCleanupFailsTheChain() {
        let (cleanup, finish) = Guarantee<Void>.pending()
        let waited = CancellablePromise.value(1).ensureThen(on: nil) { cleanup }
        #expect(waited.isPending)
        finish(())
        #expect(waited.value == 1)

        let error = TestError()
        nonisolated(unsafe) var runs = 0
        let failed = CancellablePromise.value(1).ensureThen(on: nil) { () -> Promise<Void> in
            runs += 1
            return Promise(error: error)
        }
        #expect(failed.error as? TestError == error)
        #expect(runs == 1)
    }

    @Test func ensureThenRunsWhenTheChainIsCancelled() {
        nonisolated(unsafe) var runs = 0
        let (root, _) = CancellablePromise<Int>.pending()
        let chain = root.ensureThen(on: nil) { () -> Promise<Void> in
            runs += 1
            return .value
        }
        chain.cancel()
        #expect(runs == 1)
        #expect(chain.isCancelled)
    }
}
