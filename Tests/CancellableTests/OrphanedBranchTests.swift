import Cancellable
import Dispatch
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

/// Issue 14, item 8: a branch that nobody can cancel any more — its promise object and every link built on it
/// released — withdraws its vote on shared work; if every remaining consumer has cancelled, the work is cancelled
/// then. A branch that someone still holds (an object, a scope, a finalizer, a timer) keeps protecting it.
@Suite struct OrphanedBranchTests {
    typealias Branch = @Sendable (CancellablePromise<Int>) -> Void

    /// Branches written as CancellablePromiseKit code writes side effects: the result is not kept, so the branch is
    /// orphaned at once.
    static let orphanedBranches: [(String, Branch)] = [
        ("ensure", { _ = $0.ensure(on: nil) {} }),
        ("map", { _ = $0.map(on: nil) { $0 + 1 } }),
        ("done", { _ = $0.done(on: nil) { _ in } }),
        ("tap", { _ = $0.tap(on: nil) { _ in } }),
        ("get", { _ = $0.get(on: nil) { _ in } }),
        ("then", { _ = $0.then(on: nil) { CancellablePromise.value($0) } }),
        ("compactMap", { _ = $0.compactMap(on: nil) { $0 } }),
        ("recover", { _ = $0.recover(on: nil) { _ in Promise.value(0) } }),
        ("asVoid", { _ = $0.asVoid() }),
        ("map, then done", { _ = $0.map(on: nil) { $0 }.done(on: nil) { _ in } }),
        ("done, then catch", { $0.done(on: nil) { _ in }.catch(on: nil) { _ in } }),
        ("race", { _ = race([$0, CancellablePromise<Int>.pending().promise]) }),
    ]

    @Test(arguments: orphanedBranches.map(\.0))
    func anOrphanedBranchDoesNotKeepSharedWorkAlive(branch name: String) {
        let branch = Self.orphanedBranches.first { $0.0 == name }!.1
        let (work, _, reasons) = pendingWorkRecordingReasons()
        branch(work)
        let ui = work.map(on: nil) { $0 }
        ui.cancel(reason: .superseded)
        #expect(reasons.current == [.superseded], "the orphaned \(name) branch withdrew its vote")
        #expect(work.isCancelled)
    }

    @Test(arguments: orphanedBranches.map(\.0))
    func anOrphanedBranchCancelsTheWorkWhenTheOthersHaveAlreadyCancelled(branch name: String) {
        let branch = Self.orphanedBranches.first { $0.0 == name }!.1
        let (work, _, reasons) = pendingWorkRecordingReasons()
        do {
            let ui = work.map(on: nil) { $0 }
            let held = work.map(on: nil) { $0 }
            ui.cancel(reason: .ownerReleased)
            #expect(reasons.current == [], "the held branch still wants the result")
            withExtendedLifetime(held) {}
        }
        // Releasing the held branch left only cancelled consumers: the work is cancelled for the last reason.
        #expect(reasons.current == [.ownerReleased])
        branch(work)  // a branch added now finds the work cancelled
        #expect(work.cancellationReason == .ownerReleased)
    }

    @Test func aHeldBranchStillProtectsTheWork() {
        let (work, resolver, cancels) = pendingWork()
        let kept = work.ensure(on: nil) {}
        let ui = work.map(on: nil) { $0 }
        ui.cancel()
        #expect(cancels.current == 0)
        resolver.fulfill(1)
        #expect(kept.value == 1)
    }

    @Test func aBranchHeldOnlyThroughItsLastLinkStillProtectsTheWork() {
        let (work, resolver, cancels) = pendingWork()
        let shown = work.map(on: nil) { $0 * 2 }.done(on: nil) { _ in }  // the map link itself is not held
        let ui = work.map(on: nil) { $0 }
        ui.cancel()
        #expect(cancels.current == 0, "the map link can still be cancelled through `shown`")
        resolver.fulfill(1)
        #expect(shown.isFulfilled)
    }

    @Test func aBranchInAScopeStillProtectsTheWork() {
        let (work, _, reasons) = pendingWorkRecordingReasons()
        let scope = CancelScope()
        scope.add(work.map(on: nil) { $0 }).done(on: nil) { _ in }.cauterize()
        let ui = work.map(on: nil) { $0 }
        ui.cancel()
        #expect(reasons.current == [], "the scope can still cancel its branch")
        scope.cancelAll(reason: .superseded)
        #expect(reasons.current == [.superseded])
    }

    @Test func aHeldFinalizerStillProtectsTheWorkAndReleasingItWithdraws() {
        let (work, _, reasons) = pendingWorkRecordingReasons()
        var finalizer: CancellableFinalizer? = work.done(on: nil) { _ in }.catch(on: nil) { _ in }
        let ui = work.map(on: nil) { $0 }
        ui.cancel(reason: .superseded)
        #expect(reasons.current == [])
        #expect(finalizer != nil)
        finalizer = nil
        #expect(reasons.current == [.superseded])
    }

    @Test func anOrphanedTimeoutBranchKeepsItsVoteUntilItsDeadline() {
        let scheduler = TestClock()
        let (work, _, reasons) = pendingWorkRecordingReasons()
        withPromiseClock(scheduler) {
            _ = work.timeout(seconds: 5).done(on: nil) { _ in }
        }
        let ui = work.map(on: nil) { $0 }
        ui.cancel()
        #expect(reasons.current == [], "the timer can still cancel the work at its deadline")
        scheduler.advance(by: .seconds(5))
        #expect(reasons.current == [.timeout])
    }

    /// An `autoCancel` combinator decides for its inputs: orphaned, it still cancels the losers once decided (as in
    /// CancellablePromiseKit), so its vote on a shared input stands until then.
    @Test func anOrphanedAutoCancelRaceKeepsItsVoteAndCancelsTheLoserWhenDecided() {
        let (work, _, reasons) = pendingWorkRecordingReasons()
        let (mirror, mirrorResolver) = CancellablePromise<Int>.pending()
        _ = race([work, mirror], autoCancel: true)
        let ui = work.map(on: nil) { $0 }
        ui.cancel()
        #expect(reasons.current == [], "the race has not decided yet")
        mirrorResolver.fulfill(1)
        #expect(reasons.current == [.lostRace])
    }

    @Test func fireAndForgetWorkStillDeliversItsResult() {
        let (got, cancels) = (Shared<[Int]>([]), Shared(0))
        var resolver: Resolver<Int>!
        do {
            CancellablePromise<Int> { seal in
                resolver = seal
                return { cancels.increment() }
            }.map(on: nil) { $0 * 2 }.done(on: nil) { got.append($0) }.cauterize()
        }
        resolver.fulfill(21)
        #expect(got.current == [42])
        #expect(cancels.current == 0)
    }

    /// A cancel handler often owns the work (a timer, a task): a promise nobody can cancel any more keeps it
    /// until the promise resolves, as before.
    @Test func anOrphanedPromiseKeepsItsCancelHandlerUntilItResolves() {
        final class Token: Sendable {}
        weak var weakToken: Token?
        var resolver: Resolver<Int>?
        let got = Shared<[Int]>([])
        do {
            let token = Token()
            weakToken = token
            CancellablePromise<Int> { seal in
                resolver = seal
                return { withExtendedLifetime(token) {} }
            }.done(on: nil) { got.append($0) }.cauterize()
        }
        #expect(weakToken != nil)
        resolver?.fulfill(7)
        #expect(got.current == [7])
        #expect(weakToken == nil, "released once the promise resolved")
    }

    @Test func aThenBodyThatRunsAfterItsLinkWasOrphanedDoesNotProtectTheInnerPromise() {
        let (inner, _, reasons) = pendingWorkRecordingReasons()
        let (gate, open) = CancellablePromise<Void>.pending()
        _ = gate.then(on: nil) { inner }  // orphaned before the body runs
        let ui = inner.map(on: nil) { $0 }
        open.fulfill(())  // the body returns `inner`: the orphaned link's vote on it is withdrawn at once
        ui.cancel(reason: .superseded)
        #expect(reasons.current == [.superseded])
    }

    /// One branch is released on one thread while the other cancels on another: the work is cancelled exactly
    /// once, whichever comes first.
    @Test func withdrawalRacingACancel() {
        for _ in 0..<2_000 {
            let (work, _, cancels) = pendingWork()
            let orphaned = Shared<CancellablePromise<Int>?>(work.map(on: nil) { $0 })
            let ui = work.map(on: nil) { $0 }
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    _ = orphaned.take()  // released here, outside the lock
                } else {
                    ui.cancel()
                }
            }
            #expect(cancels.current == 1)
            #expect(work.isCancelled)
        }
    }

    /// A branch is released while the shared work resolves and another branch cancels, on three threads: one
    /// outcome, and the cancel handler runs iff the work was cancelled.
    @Test func withdrawalRacingACancelAndAResult() {
        for _ in 0..<2_000 {
            let (work, resolver, cancels) = pendingWork()
            let orphaned = Shared<CancellablePromise<Int>?>(work.map(on: nil) { $0 })
            let ui = work.map(on: nil) { $0 }
            runConcurrently(threads: 3) { thread in
                switch thread {
                case 0:
                    _ = orphaned.take()
                case 1: ui.cancel()
                default: resolver.fulfill(1)
                }
            }
            #expect(cancels.current <= 1)
            #expect(work.isCancelled == (cancels.current == 1))
            #expect(work.isFulfilled == (cancels.current == 0))
        }
    }
}
