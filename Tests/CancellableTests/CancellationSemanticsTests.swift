import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// The Guarantees rules, one test (or a few) per rule. These are the promises users cannot see and must trust.
@Suite("Cancellation semantics (the Guarantees rules)") struct CancellationSemanticsTests {
    @Test("Rule 1: cancel() is idempotent and isCancelled is true after the first call")
    func cancelIsIdempotent() {
        let (promise, _, cancels) = pendingWork()
        #expect(!promise.isCancelled)
        #expect(promise.cancel())
        #expect(promise.isCancelled)
        #expect(!promise.cancel())
        #expect(!promise.cancel())
        #expect(promise.isCancelled)
        #expect(cancels.current == 1)
    }

    @Test("Rule 1: cancel() is thread-safe: many threads, one cancellation")
    func cancelIsThreadSafe() {
        for _ in 0..<200 {
            let (promise, _, cancels) = pendingWork()
            let winners = Shared(0)
            let sawRejected = Shared(true)
            runConcurrently(threads: 4) { _ in
                if promise.cancel() { winners.increment() }
                // Whichever call returns, the outcome is already decided.
                if !promise.isRejected || !promise.isCancelled { sawRejected.withLock { $0 = false } }
            }
            #expect(winners.current == 1)
            #expect(cancels.current == 1)
            #expect(sawRejected.current)
        }
    }

    @Test("Rule 2: cancelling a pending promise runs the handler once and rejects before cancel() returns")
    func cancelRejectsBeforeReturning() {
        let (promise, resolver, cancels) = pendingWork()
        promise.cancel()
        #expect(promise.isRejected)
        #expect(promise.error as? CancellablePromiseError == .cancelled)
        #expect(cancels.current == 1)
        resolver.fulfill(1)
        #expect(promise.error as? CancellablePromiseError == .cancelled, "a late result must not change it")
        #expect(cancels.current == 1)
    }

    @Test("Rule 3: cancel() after resolution neither runs the handler nor changes the result")
    func cancelAfterResolutionIsANoOp() {
        let (fulfilled, resolver, cancels) = pendingWork()
        resolver.fulfill(7)
        #expect(!fulfilled.cancel())
        #expect(fulfilled.value == 7)
        #expect(!fulfilled.isCancelled)
        #expect(cancels.current == 0)

        let (rejected, rejecter, rejectedCancels) = pendingWork()
        let error = TestError()
        rejecter.reject(error)
        #expect(!rejected.cancel())
        #expect(rejected.error as? TestError == error)
        #expect(rejectedCancels.current == 0)
    }

    @Test("Rule 3: cancel racing fulfill: one winner, handler runs iff cancel won")
    func cancelRacingFulfilHasOneWinner() {
        for _ in 0..<2_000 {
            let (promise, resolver, cancels) = pendingWork()
            let cancelResult = Shared(false)
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    cancelResult.withLock { $0 = promise.cancel() }
                } else {
                    resolver.fulfill(1)
                }
            }
            if cancelResult.current {
                #expect(cancels.current == 1)
                #expect(promise.error as? CancellablePromiseError == .cancelled)
            } else {
                #expect(cancels.current == 0)
                #expect(promise.value == 1)
            }
        }
    }

    @Test("Rule 4: default catch skips cancellation, .allErrors sees it, ensure always runs")
    func catchPoliciesAndEnsure() {
        let (promise, _, _) = pendingWork()
        nonisolated(unsafe) var defaultCaught = false
        nonisolated(unsafe) var allErrorsCaught: Error?
        nonisolated(unsafe) var ensured = false
        nonisolated(unsafe) var finallyRan = false
        promise.ensure(on: nil) { ensured = true }.catch(on: nil) { _ in defaultCaught = true }
            .finally(on: nil) { finallyRan = true }
        promise.catch(on: nil, policy: .allErrors) { allErrorsCaught = $0 }
        promise.cancel()
        #expect(!defaultCaught)
        #expect(allErrorsCaught?.isCancelled == true)
        #expect(ensured)
        #expect(finallyRan)
    }

    @Test("Rule 5: cancelling a link cancels every pending link upstream")
    func cancellingDownstreamCancelsUpstream() {
        let (root, _, rootCancels) = pendingWork()
        let last = root.map(on: nil) { $0 + 1 }.then(on: nil) { Promise.value($0) }.done(on: nil) { _ in }
        #expect(last.cancel())
        #expect(rootCancels.current == 1)
        #expect(root.isCancelled)
        #expect(last.isCancelled)
    }

    @Test("Rule 5: cancelling a chain cancels the promise the running then body returned")
    func cancellingReachesTheReturnedPromise() {
        let (first, firstResolver, _) = pendingWork()
        let (second, _, secondCancels) = pendingWork()
        let chain = first.then(on: nil) { _ in second }
        firstResolver.fulfill(1)
        #expect(chain.isPending)
        chain.cancel()
        #expect(secondCancels.current == 1)
        #expect(second.isCancelled)
    }

    @Test(
        "Rule 5: a body that returns after the chain was cancelled has its promise cancelled at once",
        timeLimit(minutes: 1)
    )
    func promiseReturnedAfterCancelIsCancelled() async throws {
        let (first, firstResolver, _) = pendingWork()
        // The promise is rejected before its cancel handler runs (on the body's thread), so the test waits for
        // the handler itself rather than for the rejection.
        let secondCancels = Shared(0)
        let (secondHandlerRan, handlerRan) = Guarantee<Void>.pending()
        let second = CancellablePromise<Int> { _ in
            {
                secondCancels.increment()
                handlerRan(())
            }
        }
        let (bodyStarted, startBody) = Guarantee<Void>.pending()
        let chainCancelled = DispatchSemaphore(value: 0)
        let chain = first.then(on: .global()) { _ -> CancellablePromise<Int> in
            startBody(())
            chainCancelled.wait()
            return second
        }
        firstResolver.fulfill(1)
        await bodyStarted.async()
        chain.cancel()
        chainCancelled.signal()
        _ = await chain.asPromise().asResult().async()
        await secondHandlerRan.async()
        #expect(secondCancels.current == 1)
        #expect(second.isCancelled)
    }

    @Test("Rule 5: cancelling upstream rejects every link downstream with the cancellation")
    func upstreamCancellationFlowsDown() {
        let (root, _, _) = pendingWork()
        let last = root.map(on: nil) { $0 }.done(on: nil) { _ in }
        root.cancel()
        #expect(last.isRejected)
        #expect(last.isCancelled)
    }

    @Test("Rule 6: autoCancel: once decided, inputs still pending are cancelled")
    func autoCancelCancelsLosers() {
        let inputs = (0..<3).map { _ in pendingWork() }
        let winner = race(inputs.map(\.promise), autoCancel: true)
        inputs[1].resolver.fulfill(1)
        #expect(winner.value == 1)
        #expect(inputs.map { $0.cancels.current } == [1, 0, 1])
    }

    @Test("Rule 6: autoCancel: cancelling the combinator cancels all inputs")
    func cancellingTheCombinatorCancelsInputs() {
        let inputs = (0..<3).map { _ in pendingWork() }
        let all = when(fulfilled: inputs.map(\.promise), autoCancel: true)
        all.cancel()
        #expect(inputs.allSatisfy { $0.promise.isCancelled && $0.cancels.current == 1 })
    }

    @Test("Rule 6: without autoCancel the combinator never cancels its inputs")
    func withoutAutoCancelInputsSurvive() {
        let inputs = (0..<3).map { _ in pendingWork() }
        let winner = race(inputs.map(\.promise))
        inputs[0].resolver.fulfill(0)
        winner.cancel()
        let all = when(fulfilled: inputs.map(\.promise), autoCancel: false)
        all.cancel()
        #expect(inputs.allSatisfy { $0.cancels.current == 0 })
        #expect(inputs[1].promise.isPending && inputs[2].promise.isPending)
    }

    @Test("Rule 7: after cancel the cancel handler and captured values are released")
    func cancelReleasesCaptures() {
        weak var weakCapture: Tracked?
        weak var weakPromise: CancellablePromise<Int>?
        do {
            let capture = Tracked()
            weakCapture = capture
            let promise = CancellablePromise<Int> { _ in { _ = capture } }
            weakPromise = promise
            let chain = promise.map(on: nil) { _ in capture }.done(on: nil) { _ in _ = capture }
            chain.cancel()
            #expect(weakCapture != nil, "still referenced by the local")
        }
        #expect(weakCapture == nil)
        #expect(weakPromise == nil)
    }

    @Test("Rule 7: after fulfillment the cancel handler is released")
    func fulfilmentReleasesTheCancelHandler() {
        weak var weakCapture: Tracked?
        let (promise, resolver): (CancellablePromise<Int>, Resolver<Int>) = {
            let capture = Tracked()
            weakCapture = capture
            var captured: Resolver<Int>!
            let promise = CancellablePromise<Int> { resolver in
                captured = resolver
                return { _ = capture }
            }
            return (promise, captured)
        }()
        #expect(weakCapture != nil)
        resolver.fulfill(1)
        #expect(weakCapture == nil, "the promise is alive but its cancel handler must be gone")
        #expect(promise.value == 1)
    }

    @Test("Rule 7: an orphaned pending chain is released and logs nothing")
    func orphanedChainIsReleasedSilently() {
        weak var weakRoot: CancellablePromise<Int>?
        weak var weakLast: CancellablePromise<Void>?
        weak var weakCapture: Tracked?
        let events = LogCapture.events {
            let capture = Tracked()
            weakCapture = capture
            let root = CancellablePromise<Int> { _ in { _ = capture } }
            let last = root.map(on: nil) { $0 }.then(on: nil) { Promise.value($0) }.done(on: nil) { _ in }
            weakRoot = root
            weakLast = last
            _ = CancellablePromise<Int>.pending()
        }
        #expect(weakRoot == nil)
        #expect(weakLast == nil)
        #expect(weakCapture == nil)
        #expect(events.isEmpty)
    }

    @Test("Rule 8: wrapping a resolved promise or guarantee is resolved when the call returns")
    func wrappingIsTransparent() {
        #expect(Promise.value(1).asCancellable().value == 1)
        let error = TestError()
        #expect(Promise<Int>(error: error).asCancellable().error as? TestError == error)
        #expect(Guarantee.value("g").asCancellable().value == "g")
        #expect(CancellablePromise(using: Promise.value(2), cancel: {}).value == 2)
    }
}
