import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// `DecidingResolver` (package API, used by downloads and `timeout`): the work's ending and a cancellation are
/// decided once, under the cancellation lock, before the ending has any effect.
@Suite struct DecidingResolverTests {
    /// A cancellable promise whose work ends through a `DecidingResolver`, and a count of its cancel handler's runs.
    static func work() -> (CancellablePromise<Int>, DecidingResolver<Int>, Shared<[CancellationReason]>) {
        let cancels = Shared<[CancellationReason]>([])
        var decider: DecidingResolver<Int>?
        let promise = CancellablePromise<Int>(deciding: { resolver in
            decider = resolver
            return { reason in cancels.append(reason) }
        })
        return (promise, decider!, cancels)
    }

    @Test func anEndingThatWinsRunsItsBodyAndResolvesWithItsResult() {
        let (promise, resolver, cancels) = Self.work()
        let ran = Shared(0)
        #expect(
            resolver.decide {
                ran.increment(); return .fulfilled(7)
            } == .resolved
        )
        #expect(ran.current == 1)
        #expect(promise.value == 7)
        #expect(!promise.cancel(), "a cancel after the decision loses")
        #expect(cancels.current.isEmpty)
        #expect(promise.value == 7)
    }

    @Test func aCancellationThatWonFirstKeepsTheBodyFromRunning() {
        let (promise, resolver, cancels) = Self.work()
        #expect(promise.cancel(reason: .paused))
        let ran = Shared(0)
        #expect(
            resolver.decide {
                ran.increment(); return .fulfilled(7)
            } == .cancelled(.paused)
        )
        #expect(ran.current == 0, "the ending's effects never happen")
        #expect(promise.cancellationReason == .paused)
        #expect(cancels.current == [.paused])
    }

    /// A download removes what it does not keep in its cancel handler: whoever sees the rejection — a handler run
    /// inline, on the cancelling thread — sees what the handler did.
    @Test func aCancellationRunsTheCancelHandlerBeforeThePromiseRejects() {
        let (promise, _, cancels) = Self.work()
        let seenByTheRejection = Shared<[CancellationReason]?>(nil)
        promise.catch(on: nil, policy: .allErrors) { _ in seenByTheRejection.withLock { $0 = cancels.current } }
        #expect(promise.cancel(reason: .timeout))
        #expect(seenByTheRejection.current == [.timeout], "the handler had run when the promise rejected")
        #expect(promise.cancellationReason == .timeout)
        #expect(!promise.cancel(), "and ran once")
        #expect(cancels.current == [.timeout])
    }

    /// The handler runs before the rejection, so a second cancel made meanwhile on another thread finds the promise
    /// cancelled but not yet rejected: it returns `false` at once, and the promise rejects once the handler has
    /// returned — before the first `cancel()` returns (Guarantees, rule 2).
    @Test func aSecondCancelWhileTheHandlerRunsReturnsAtOnceAndThePromiseRejectsWhenTheHandlerReturns() {
        let inHandler = Latch()
        let release = Latch()
        let promise = CancellablePromise<Int>(deciding: { _ in
            { _ in
                inHandler.open()
                _ = release.wait(timeout: .seconds(30))
            }
        })
        let firstReturned = Latch()
        let firstWon = Shared<Bool?>(nil)
        let rejectedWhenFirstReturned = Shared<Bool?>(nil)
        DispatchQueue.global().async {
            let won = promise.cancel()
            rejectedWhenFirstReturned.withLock { $0 = promise.isRejected }
            firstWon.withLock { $0 = won }
            firstReturned.open()
        }
        #expect(inHandler.wait(timeout: .seconds(30)))
        #expect(!promise.cancel(), "the second cancel returns at once")
        #expect(promise.isCancelled, "the promise is cancelled")
        #expect(promise.isPending, "and rejects once the handler has returned")
        release.open()
        #expect(firstReturned.wait(timeout: .seconds(30)))
        #expect(firstWon.current == true)
        #expect(rejectedWhenFirstReturned.current == true, "rejected before the first cancel() returned")
    }

    /// The window the download's file move sits in: decided, not yet resolved. A cancel there finds the promise
    /// decided (it returns `false`, its handler never runs), and the promise then resolves with the body's result.
    @Test func aCancelWhileTheBodyRunsLosesAndTheBodysResultStands() {
        let (promise, resolver, cancels) = Self.work()
        let cancelledInside = Shared<Bool?>(nil)
        let decision = resolver.decide {
            cancelledInside.withLock { $0 = promise.cancel() }
            return .rejected(TestError())
        }
        #expect(decision == .resolved)
        #expect(cancelledInside.current == false)
        #expect(cancels.current.isEmpty)
        #expect(promise.isRejected && !promise.isCancelled)
    }

    @Test func aPromiseResolvedAnotherWayIsReportedAsSuch() {
        let cancels = Shared<[CancellationReason]>([])
        var decider: DecidingResolver<Int>?
        let promise = CancellablePromise<Int>(deciding: { resolver in
            decider = resolver
            return { reason in cancels.append(reason) }
        })
        #expect(decider!.decide { .fulfilled(1) } == .resolved)
        let ran = Shared(0)
        #expect(
            decider!.decide {
                ran.increment(); return .fulfilled(2)
            } == .resolvedAlready
        )
        #expect(ran.current == 0)
        #expect(promise.value == 1)
    }

    /// One winner, across threads released together: the ending's body runs if and only if no cancel won, and the
    /// cancel handler runs if and only if the body did not.
    @Test func anEndingRacingCancelsFromOtherThreadsHasExactlyOneWinner() {
        for _ in 0..<1_000 {
            let (promise, resolver, cancels) = Self.work()
            let bodyRuns = Shared(0)
            let cancelWins = Shared(0)
            let decision = Shared<DecidingResolver<Int>.Decision?>(nil)
            runConcurrently(threads: 3) { thread in
                if thread == 0 {
                    let outcome = resolver.decide {
                        bodyRuns.increment()
                        return .fulfilled(1)
                    }
                    decision.withLock { $0 = outcome }
                } else if promise.cancel(reason: .paused) {
                    cancelWins.increment()
                }
            }
            switch decision.current {
            case .resolved:
                #expect(bodyRuns.current == 1 && cancelWins.current == 0 && cancels.current.isEmpty)
                #expect(promise.value == 1)
            case .cancelled(let reason):
                #expect(reason == .paused)
                #expect(bodyRuns.current == 0 && cancelWins.current == 1 && cancels.current == [.paused])
                #expect(promise.cancellationReason == .paused)
            case .resolvedAlready, nil:
                Issue.record("the only resolver reported \(String(describing: decision.current))")
            }
        }
    }
}
