import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Cancels racing everything else, across threads released together. CI runs these under
/// `--sanitize=thread`.
@Suite struct CancellableStressTests {
    @Test func cancelRacingRejectAndAnotherCancel() {
        for _ in 0..<1_000 {
            let (promise, resolver, cancels) = pendingWork()
            let wins = Shared(0)
            runConcurrently(threads: 3) { thread in
                switch thread {
                case 0: resolver.reject(TestError())
                default: if promise.cancel() { wins.increment() }
                }
            }
            #expect(wins.current == cancels.current)
            #expect(wins.current <= 1)
            #expect(promise.isCancelled == (wins.current == 1))
            #expect(promise.isRejected)
        }
    }

    @Test func cancellingAChainFromManyThreadsWhileItResolves() {
        for _ in 0..<1_000 {
            let (root, resolver, rootCancels) = pendingWork()
            let (inner, _, innerCancels) = pendingWork()
            let bodyRan = Shared(false)
            let chain = root.map(on: nil) { $0 + 1 }.then(on: nil) { _ -> CancellablePromise<Int> in
                bodyRan.withLock { $0 = true }
                return inner
            }.done(on: nil) { _ in }
            let handlerRuns = Shared(0)
            runConcurrently(threads: 4) { thread in
                switch thread {
                case 0: resolver.fulfill(1)
                case 1: _ = chain.tap(on: nil) { _ in handlerRuns.increment() }
                default: chain.cancel()
                }
            }
            #expect(chain.isCancelled)
            #expect(root.isFulfilled != (rootCancels.current == 1), "root fulfilled xor its cancel handler ran")
            // If the body ran, it returned `inner` to a chain that was (or became) cancelled: `inner` is
            // cancelled exactly once. If it did not run, `inner` is never touched.
            #expect(innerCancels.current == (bodyRan.current ? 1 : 0))
            #expect(handlerRuns.current == 1)
        }
    }

    @Test func autoCancelFanOutWhileInputsResolveConcurrently() {
        for _ in 0..<200 {
            let inputs = (0..<8).map { _ in pendingWork() }
            let winner = race(inputs.map(\.promise), autoCancel: true)
            runConcurrently(threads: 8) { index in inputs[index].resolver.fulfill(index) }
            guard let value = winner.value else {
                Issue.record("the race must have a winner")
                continue
            }
            #expect(inputs[value].cancels.current == 0)
            for input in inputs {
                // Every input either fulfilled (its resolve won) or was cancelled (cancel won), never both.
                #expect(input.promise.isFulfilled != (input.cancels.current == 1))
            }
        }
    }

    @Test func handlersAttachedWhileCancellingRunExactlyOnce() {
        for _ in 0..<200 {
            let (promise, _, cancels) = pendingWork()
            let runs = Shared([Int](repeating: 0, count: 3 * 20))
            runConcurrently(threads: 4) { thread in
                if thread == 3 {
                    promise.cancel()
                    return
                }
                for index in 0..<20 {
                    let slot = thread * 20 + index
                    promise.catch(on: nil, policy: .allErrors) { _ in runs.withLock { $0[slot] += 1 } }
                }
            }
            #expect(cancels.current == 1)
            #expect(runs.current.allSatisfy { $0 == 1 })
        }
    }
}
