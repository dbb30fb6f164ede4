import Cancellable
import PromiseCore
import TestSupport
import Testing

@Suite struct CancellablePromiseCatchTests {
    @Test func catchReturnsAFinalizerThatCanCancelTheChain() {
        let (root, _) = CancellablePromise<Int>.pending()
        var trace: [String] = []
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
        var called = false
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

    @Test func ensureRunsForEveryOutcomeIncludingCancellation() {
        var runs = 0
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
        var runs = 0
        let failed = CancellablePromise.value(1).ensureThen(on: nil) { () -> Promise<Void> in
            runs += 1
            return Promise(error: error)
        }
        #expect(failed.error as? TestError == error)
        #expect(runs == 1)
    }

    @Test func ensureThenRunsWhenTheChainIsCancelled() {
        var runs = 0
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
