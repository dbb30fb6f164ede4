import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Issue 8, item 3: a scope cancels the work it owns when asked, or — opted in — when it is released.
@Suite struct CancelScopeTests {
    @Test func cancelAllCancelsThePendingMembersWithTheReason() {
        let scope = CancelScope()
        let (first, _, firstReasons) = pendingWorkRecordingReasons()
        let (second, _, secondReasons) = pendingWorkRecordingReasons()
        #expect(scope.add(first) === first)
        scope.add(second)
        #expect(scope.pendingCount == 2)
        scope.cancelAll(reason: .superseded)
        #expect(firstReasons.current == [.superseded])
        #expect(secondReasons.current == [.superseded])
        #expect(scope.pendingCount == 0)
    }

    @Test func cancelAllWithoutAReasonIsAUserCancellation() {
        let scope = CancelScope()
        let (promise, _, reasons) = pendingWorkRecordingReasons()
        scope.add(promise)
        scope.cancelAll()
        #expect(reasons.current == [.user])
    }

    @Test func resolvedMembersLeaveTheScopeAndAreNotCancelled() {
        let scope = CancelScope()
        let (promise, resolver, reasons) = pendingWorkRecordingReasons()
        scope.add(promise)
        scope.add(CancellablePromise.value(1))
        #expect(scope.pendingCount == 1, "an already-resolved promise leaves at once")
        resolver.fulfill(2)
        #expect(scope.pendingCount == 0)
        scope.cancelAll()
        #expect(reasons.current == [])
        #expect(promise.value == 2)
    }

    @Test func aScopeIsReusableAfterCancelAll() {
        let scope = CancelScope()
        scope.add(pendingWorkRecordingReasons().promise)
        scope.cancelAll()
        let (later, _, reasons) = pendingWorkRecordingReasons()
        scope.add(later)
        #expect(later.isPending)
        #expect(scope.pendingCount == 1)
        scope.cancelAll(reason: .custom("again"))
        #expect(reasons.current == [.custom("again")])
    }

    @Test func releasingAnOptedInScopeCancelsWithOwnerReleased() {
        let (promise, _, reasons) = pendingWorkRecordingReasons()
        var scope: CancelScope? = CancelScope(cancelsOnDeinit: true)
        scope?.add(promise)
        scope = nil
        #expect(reasons.current == [.ownerReleased])
        #expect(promise.cancellationReason == .ownerReleased)
    }

    @Test func releasingADefaultScopeCancelsNothing() {
        let (promise, resolver, reasons) = pendingWorkRecordingReasons()
        var scope: CancelScope? = CancelScope()
        scope?.add(promise)
        scope = nil
        #expect(reasons.current == [])
        resolver.fulfill(1)
        #expect(promise.value == 1)
    }

    @Test func aScopeDoesNotKeepItsMembersAlive() {
        let scope = CancelScope()
        weak var weakPromise: CancellablePromise<Int>?
        do {
            let promise = CancellablePromise<Int>.pending().promise.map(on: nil) { $0 }
            weakPromise = promise
            scope.add(promise)
        }
        #expect(weakPromise == nil)
        #expect(scope.pendingCount == 1, "the work behind it is still pending, and still cancellable")
        scope.cancelAll()
        #expect(scope.pendingCount == 0)
    }

    @Test func aPendingMemberDoesNotKeepTheScopeAlive() {
        let (promise, _, _) = pendingWorkRecordingReasons()
        weak var weakScope: CancelScope?
        do {
            let scope = CancelScope(cancelsOnDeinit: true)
            weakScope = scope
            scope.add(promise.map(on: nil) { $0 })
        }
        #expect(weakScope == nil)
        #expect(promise.cancellationReason == .ownerReleased)
    }

    @Test func finalizersCanBeMembers() {
        let scope = CancelScope()
        let (promise, resolver, reasons) = pendingWorkRecordingReasons()
        let finalizer = promise.done(on: nil) { _ in }.catch(on: nil) { _ in }
        #expect(scope.add(finalizer) === finalizer)
        #expect(scope.pendingCount == 1)
        scope.cancelAll(reason: .timeout)
        #expect(reasons.current == [.timeout])

        let (other, otherResolver, _) = pendingWorkRecordingReasons()
        scope.add(other.done(on: nil) { _ in }.catch(on: nil) { _ in })
        otherResolver.fulfill(1)
        #expect(scope.pendingCount == 0, "a finished chain leaves the scope")
        _ = resolver
    }

    /// A member is added, resolved and cancelled on three threads at once: it ends exactly one way and never
    /// stays in the scope.
    @Test func addResolveAndCancelAllRace() {
        for _ in 0..<1_000 {
            let scope = CancelScope()
            let (promise, resolver, reasons) = pendingWorkRecordingReasons()
            runConcurrently(threads: 3) { thread in
                switch thread {
                case 0: scope.add(promise)
                case 1: resolver.fulfill(1)
                default: scope.cancelAll(reason: .superseded)
                }
            }
            #expect(promise.isFulfilled != (reasons.current == [.superseded]))
            if promise.isFulfilled {
                #expect(scope.pendingCount == 0)
            }
            scope.cancelAll()
            #expect(scope.pendingCount == 0)
            #expect(reasons.current.count <= 1)
        }
    }

    /// The last reference to an opted-in scope goes on one thread while its members resolve or are added on
    /// others: every member still pending when it goes is cancelled once, with `.ownerReleased`.
    @Test func releaseRacingResolution() {
        for _ in 0..<500 {
            let inputs = (0..<3).map { _ in pendingWorkRecordingReasons() }
            let holder = Shared<CancelScope?>(CancelScope(cancelsOnDeinit: true))
            for input in inputs { holder.current?.add(input.promise) }
            runConcurrently(threads: 3) { thread in
                switch thread {
                case 0: holder.withLock { $0 = nil }
                default: inputs[thread].resolver.fulfill(thread)
                }
            }
            #expect(inputs[0].reasons.current == [.ownerReleased])
            for input in inputs.dropFirst() {
                #expect(input.promise.isFulfilled != (input.reasons.current == [.ownerReleased]))
            }
        }
    }
}
