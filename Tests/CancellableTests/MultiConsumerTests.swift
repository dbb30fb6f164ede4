import Cancellable
import Dispatch
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

/// Issue 8, item 2: a promise consumed by several branches is cancelled only when every branch that can cancel
/// it has cancelled (reference counting, as Bluebird does). A single chain behaves as before.
@Suite struct MultiConsumerTests {
    @Test func cancellingOneBranchLeavesTheOtherRunning() {
        let (shared, resolver, cancels) = pendingWork()
        let shown = shared.map(on: nil) { "shown \($0)" }
        let cached = shared.map(on: nil) { "cached \($0)" }
        #expect(shown.cancel())
        #expect(shown.isCancelled)
        #expect(!shared.isCancelled, "the other branch still wants the result")
        #expect(cancels.current == 0)
        resolver.fulfill(1)
        #expect(cached.value == "cached 1")
        #expect(shared.value == 1)
    }

    @Test func cancellingEveryBranchCancelsTheSharedWorkOnceWithTheLastReason() {
        let (shared, _, reasons) = pendingWorkRecordingReasons()
        let first = shared.map(on: nil) { $0 }
        let second = shared.done(on: nil) { _ in }
        let third = shared.timeout(seconds: .infinity)
        first.cancel(reason: .superseded)
        second.cancel()
        #expect(reasons.current == [])
        third.cancel(reason: .ownerReleased)
        #expect(reasons.current == [.ownerReleased])
        #expect(shared.cancellationReason == .ownerReleased)
    }

    @Test func cancellingTheSharedPromiseItselfCancelsEveryBranch() {
        let (shared, _, cancels) = pendingWork()
        let branches = (0..<3).map { k in shared.map(on: nil) { $0 + k } }
        shared.cancel()
        #expect(cancels.current == 1)
        #expect(branches.allSatisfy { $0.isCancelled })
    }

    @Test func aSingleChainIsCancelledByItsOnlyConsumerAsBefore() {
        let (root, _, cancels) = pendingWork()
        let chain = root.map(on: nil) { $0 }.then(on: nil) { CancellablePromise.value($0) }.done(on: nil) { _ in }
        chain.cancel()
        #expect(cancels.current == 1)
        #expect(root.isCancelled)
    }

    @Test func aBranchAddedAfterTheOthersCancelledTheWorkIsCancelledAtOnce() {
        let (shared, _, cancels) = pendingWork()
        shared.map(on: nil) { $0 }.cancel()
        #expect(cancels.current == 1)
        let late = shared.map(on: nil) { $0 }
        #expect(late.isCancelled)
    }

    @Test func aHeldBranchThatIsNeverCancelledKeepsTheWorkAlive() {
        let (shared, resolver, cancels) = pendingWork()
        let shown = shared.done(on: nil) { _ in }  // held: it can still cancel, so it still wants the result
        let other = shared.map(on: nil) { $0 }
        other.cancel()
        #expect(cancels.current == 0)
        resolver.fulfill(2)
        #expect(shared.value == 2)
        #expect(shown.isFulfilled)
    }

    @Test func nestedBranchesCountPerLevel() {
        // shared ─┬─ a ─┬─ a1
        //         │     └─ a2
        //         └─ b
        let (shared, _, cancels) = pendingWork()
        let a = shared.map(on: nil) { $0 }
        let a1 = a.map(on: nil) { $0 }
        let a2 = a.map(on: nil) { $0 }
        let b = shared.map(on: nil) { $0 }
        a1.cancel()
        #expect(!a.isCancelled)
        a2.cancel()
        #expect(a.isCancelled, "both of a's consumers cancelled")
        #expect(!shared.isCancelled, "b still wants it")
        b.cancel()
        #expect(shared.isCancelled)
        #expect(cancels.current == 1)
    }

    @Test func anAutoCancelRaceIsOneConsumerOfEachInput() {
        let (shared, resolver, cancels) = pendingWork()
        let (other, otherResolver, otherCancels) = pendingWork()
        let display = shared.map(on: nil) { $0 }
        let winner = race([shared, other], autoCancel: true)
        otherResolver.fulfill(5)
        #expect(winner.value == 5)
        #expect(cancels.current == 0, "the display branch still wants the shared input")
        #expect(otherCancels.current == 0)
        resolver.fulfill(6)
        #expect(display.value == 6)
    }

    @Test func aThenBodyReturningSharedWorkDoesNotCancelItForTheOtherChain() {
        let (shared, resolver, cancels) = pendingWork()
        let first = CancellablePromise.value(()).then(on: nil) { shared }
        let second = CancellablePromise.value(()).then(on: nil) { shared }
        first.cancel()
        #expect(cancels.current == 0)
        resolver.fulfill(3)
        #expect(second.value == 3)
    }

    @Test func aTimeoutOnOneBranchDoesNotCancelWorkAnotherBranchNeeds() {
        let scheduler = TestClock()
        let (shared, resolver, cancels) = pendingWork()
        let impatient = withPromiseClock(scheduler) { shared.timeout(seconds: 1) }
        let patient = shared.map(on: nil) { $0 }
        scheduler.advance(by: .seconds(1))
        #expect(impatient.error is TimeoutError)
        #expect(cancels.current == 0)
        resolver.fulfill(4)
        #expect(patient.value == 4)
    }

    /// Two branches cancel on two threads while a third resolves: the shared work is cancelled only if both
    /// cancels came before the result, and then exactly once.
    @Test func branchesCancellingConcurrently() {
        for _ in 0..<1_000 {
            let (shared, resolver, cancels) = pendingWork()
            let a = shared.map(on: nil) { $0 }
            let b = shared.map(on: nil) { $0 }
            runConcurrently(threads: 3) { thread in
                switch thread {
                case 0: a.cancel()
                case 1: b.cancel()
                default: resolver.fulfill(1)
                }
            }
            #expect(cancels.current <= 1)
            #expect(shared.isFulfilled != (cancels.current == 1))
            #expect(shared.isCancelled == (cancels.current == 1))
            if shared.isCancelled {
                #expect(a.isCancelled && b.isCancelled, "cancelled only once both branches had")
            }
        }
    }

    /// A branch is added while the only other branch cancels: either the new branch came first (the work keeps
    /// running for it) or the cancel did (the work is cancelled and the new branch with it). Never a cancelled
    /// work with a live branch, nor a branch with no work behind it.
    @Test func aBranchAddedWhileTheLastOtherCancels() {
        for _ in 0..<1_000 {
            let (shared, _, cancels) = pendingWork()
            let first = shared.map(on: nil) { $0 }
            let late = Shared<CancellablePromise<Int>?>(nil)
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    first.cancel()
                } else {
                    let branch = shared.map(on: nil) { $0 }
                    late.withLock { $0 = branch }
                }
            }
            let branch = late.current!
            #expect(first.isCancelled)
            #expect(shared.isCancelled == branch.isCancelled)
            #expect(cancels.current == (shared.isCancelled ? 1 : 0))
            if !shared.isCancelled {
                branch.cancel()
                #expect(cancels.current == 1, "the late branch was the last consumer")
            }
        }
    }
}
