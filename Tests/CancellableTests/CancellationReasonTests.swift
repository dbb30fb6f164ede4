import Cancellable
import Foundation
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

/// Issue 8, item 1: every cancellation says why, and the reason reaches handlers, errors and the chain.
@Suite struct CancellationReasonTests {
    @Test func cancelWithoutAReasonIsAUserCancellation() {
        let (promise, _, reasons) = pendingWorkRecordingReasons()
        #expect(promise.cancel())
        #expect(reasons.current == [.user])
        #expect(promise.cancellationReason == .user)
        #expect(promise.error?.cancellationReason == .user)
        #expect(promise.error?.localizedDescription == "The promise was cancelled")
    }

    @Test(arguments: [
        CancellationReason.user, .timeout, .lostRace, .superseded, .ownerReleased, .custom("screen closed"),
    ])
    func theReasonReachesTheHandlerTheErrorAndThePromise(reason: CancellationReason) {
        let (promise, _, reasons) = pendingWorkRecordingReasons()
        #expect(promise.cancel(reason: reason))
        #expect(!promise.cancel(reason: .superseded), "a second cancel changes nothing")
        #expect(reasons.current == [reason])
        #expect(promise.cancellationReason == reason)
        let error = promise.error
        #expect(error?.cancellationReason == reason)
        #expect(error?.isCancelled == true)
        #expect((error as? CancellablePromiseError)?.reason == reason)
    }

    @Test func theCancelledConstantMatchesEveryReason() throws {
        let error: Error = CancellablePromiseError(reason: .timeout)
        var matchedIfCase = false
        if case CancellablePromiseError.cancelled = error { matchedIfCase = true }
        #expect(matchedIfCase)
        var matchedCatch = false
        do { throw error } catch CancellablePromiseError.cancelled { matchedCatch = true } catch {}
        #expect(matchedCatch)
        let typed = try #require(error as? CancellablePromiseError)
        switch typed {
        case .cancelled: break
        default: Issue.record("`case .cancelled` must match every reason")
        }
        #expect(typed == .cancelled, "equal whatever the reason, as CancellablePromiseKit's enum case")
        #expect(Set([typed, .cancelled]).count == 1)
        #expect(typed.localizedDescription == "The promise was cancelled (timeout)")
        var matchedOther = false
        if case CancellablePromiseError.cancelled = TestError() as Error { matchedOther = true }
        #expect(!matchedOther, "other errors never match")
        #expect((TestError() as Error).cancellationReason == nil)
    }

    @Test func aPlainHandlerStillRunsForEveryReason() {
        let (promise, _, cancels) = pendingWork()
        promise.cancel(reason: .custom("x"))
        #expect(cancels.current == 1)
        #expect(promise.cancellationReason == .custom("x"))
    }

    @Test func theReasonTravelsUpTheChainAndIntoTheReturnedPromise() {
        let (root, resolver, rootReasons) = pendingWorkRecordingReasons()
        let (inner, _, innerReasons) = pendingWorkRecordingReasons()
        let chain = root.map(on: nil) { $0 + 1 }.then(on: nil) { _ in inner }.done(on: nil) { _ in }
        resolver.fulfill(1)  // the then body runs and returns `inner`
        chain.cancel(reason: .superseded)
        #expect(rootReasons.current == [], "the root had resolved")
        #expect(innerReasons.current == [.superseded])
        #expect(chain.cancellationReason == .superseded)

        let (root2, _, root2Reasons) = pendingWorkRecordingReasons()
        let link = root2.map(on: nil) { $0 }
        link.cancel(reason: .custom("closed"))
        #expect(root2Reasons.current == [.custom("closed")])
        #expect(root2.cancellationReason == .custom("closed"))
    }

    @Test func linksDownstreamSeeTheReasonOfAnUpstreamCancellation() {
        let (root, _, _) = pendingWorkRecordingReasons()
        let link = root.map(on: nil) { $0 * 2 }
        root.cancel(reason: .ownerReleased)
        #expect(link.isCancelled)
        #expect(link.cancellationReason == .ownerReleased)
    }

    @Test func aTimeoutCancelsTheWorkWithTheTimeoutReason() {
        let scheduler = TestClock()
        let (work, _, reasons) = pendingWorkRecordingReasons()
        let limited = withPromiseClock(scheduler) { work.timeout(seconds: 1) }
        scheduler.advance(by: .seconds(1))
        #expect(reasons.current == [.timeout])
        #expect(work.cancellationReason == .timeout)
        #expect(limited.error is TimeoutError, "the limited promise rejects with the timeout, not a cancellation")
        #expect(limited.cancellationReason == nil)
    }

    @Test func cancellingTheLimitedPromiseCancelsTheWorkWithItsReason() {
        let scheduler = TestClock()
        let (work, _, reasons) = pendingWorkRecordingReasons()
        let limited = withPromiseClock(scheduler) { work.timeout(seconds: 1) }
        limited.cancel(reason: .superseded)
        #expect(reasons.current == [.superseded])
    }

    @Test func autoCancelledLosersLoseTheRace() {
        let inputs = (0..<3).map { _ in pendingWorkRecordingReasons() }
        let winner = race(inputs.map(\.promise), autoCancel: true)
        inputs[1].resolver.fulfill(7)
        #expect(winner.value == 7)
        #expect(inputs[0].reasons.current == [.lostRace])
        #expect(inputs[1].reasons.current == [])
        #expect(inputs[2].reasons.current == [.lostRace])

        let failing = (0..<2).map { _ in pendingWorkRecordingReasons() }
        let all = when(fulfilled: failing.map(\.promise), autoCancel: true)
        failing[0].resolver.reject(TestError())
        #expect(all.error is TestError)
        #expect(failing[1].reasons.current == [.anotherInputFailed], "not a lost race: nothing won")
    }

    @Test func aCombinatorDecidedByAFailureCancelsTheRestBecauseAnotherInputFailed() {
        let raced = (0..<2).map { _ in pendingWorkRecordingReasons() }
        let first = race(raced.map(\.promise), autoCancel: true)
        raced[0].resolver.reject(TestError())
        #expect(first.error is TestError)
        #expect(raced[1].reasons.current == [.anotherInputFailed])
        #expect(raced[1].promise.error?.cancellationReason == .anotherInputFailed)

        let some = (0..<3).map { _ in pendingWorkRecordingReasons() }
        let two = Cancellable.some(2, some.map(\.promise), autoCancel: true)
        some[0].resolver.reject(TestError())
        some[1].resolver.reject(TestError())
        #expect(two.error is AggregateError)
        #expect(some[2].reasons.current == [.anotherInputFailed])
        #expect("\(CancellationReason.anotherInputFailed)" == "another input failed")
    }

    @Test func cancellingAnAutoCancelCombinatorPassesItsReasonToTheInputs() {
        let inputs = (0..<2).map { _ in pendingWorkRecordingReasons() }
        let winner = race(inputs.map(\.promise), autoCancel: true)
        winner.cancel(reason: .superseded)
        #expect(inputs.map(\.reasons.current) == [[.superseded], [.superseded]])
    }

    @Test func whenWhileCancelsWithTheConditionsReason() {
        let (work, _, reasons) = pendingWorkRecordingReasons()
        let (condition, ended) = Promise<Void>.pending()
        let result = when(work, while: condition, autoCancel: true)
        ended.reject(CancellablePromiseError(reason: .ownerReleased))
        #expect(reasons.current == [.ownerReleased])
        #expect(result.error?.cancellationReason == .ownerReleased)

        let (work2, _, reasons2) = pendingWorkRecordingReasons()
        let (condition2, ended2) = Promise<Void>.pending()
        _ = when(work2, while: condition2, autoCancel: true)
        ended2.reject(TestError())
        #expect(reasons2.current == [.lostRace])
    }

    @Test func theCancelPromiseOfAWrapperCarriesTheReason() {
        var cancelPromise: Promise<Void>?
        let promise = CancellablePromise<Int>(wrapper: { cancel in
            cancelPromise = cancel
            return Promise<Int>.pending().promise
        })
        promise.cancel(reason: .custom("left the screen"))
        #expect(cancelPromise?.error?.cancellationReason == .custom("left the screen"))
    }

    @Test func usingAPromiseWithAReasonHandler() {
        let (plain, _) = Promise<Int>.pending()
        let received = Shared<CancellationReason?>(nil)
        let promise = CancellablePromise(using: plain, cancel: { reason in received.withLock { $0 = reason } })
        promise.cancel(reason: .timeout)
        #expect(received.current == .timeout)
    }

    @Test func aFinalizerCancelsWithAReason() {
        let (root, _, reasons) = pendingWorkRecordingReasons()
        let finalizer = root.done(on: nil) { _ in }.catch(on: nil) { _ in }
        #expect(finalizer.cancel(reason: .superseded))
        #expect(reasons.current == [.superseded])
    }

    @Test func retryPassesTheReasonToTheAttemptInFlight() {
        let (attempt, _, reasons) = pendingWorkRecordingReasons()
        let retrying = retry(3, on: nil) { attempt }
        retrying.cancel(reason: .custom("stop"))
        #expect(reasons.current == [.custom("stop")])
        #expect(retrying.cancellationReason == .custom("stop"))
    }

    @Test func cancellationReasonIsNilUntilCancelledAndForOtherOutcomes() {
        let (promise, resolver, _) = pendingWorkRecordingReasons()
        #expect(promise.cancellationReason == nil)
        resolver.reject(TestError())
        #expect(promise.cancellationReason == nil)
        promise.cancel(reason: .timeout)
        #expect(promise.cancellationReason == nil, "a rejected promise was not cancelled")
    }

    @Test func descriptions() {
        #expect(
            [CancellationReason.user, .timeout, .lostRace, .superseded, .ownerReleased, .paused, .custom("mine")]
                .map(\.description) == [
                    "user", "timeout", "lost race", "superseded", "owner released", "paused", "mine",
                ]
        )
    }

    /// Two threads cancel with different reasons, a third resolves: one outcome, and everyone who can see the
    /// reason sees the same one.
    @Test func racingCancellationsAgreeOnOneReason() {
        for _ in 0..<1_000 {
            let (promise, resolver, reasons) = pendingWorkRecordingReasons()
            let link = promise.map(on: nil) { $0 }
            runConcurrently(threads: 3) { thread in
                switch thread {
                case 0: promise.cancel(reason: .superseded)
                case 1: promise.cancel(reason: .timeout)
                default: resolver.fulfill(1)
                }
            }
            if promise.isFulfilled {
                #expect(reasons.current.isEmpty)
                #expect(promise.cancellationReason == nil)
                #expect(link.value == 1)
            } else {
                #expect(reasons.current.count == 1)
                let winner = reasons.current.first
                #expect(winner == .superseded || winner == .timeout)
                #expect(promise.cancellationReason == winner)
                #expect(promise.error?.cancellationReason == winner)
                #expect(link.error?.cancellationReason == winner)
            }
        }
    }
}
