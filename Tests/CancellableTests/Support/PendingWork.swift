import Cancellable
import PromiseCore
import TestSupport

// Work a test controls — a pending cancellable promise and the resolver that settles it — with a record of its
// cancel handler: the one home of this fixture, for every suite that needs one.

/// Pending work whose cancel handler (one without a reason) counts its runs.
func pendingWork<T>(
    _ type: T.Type = Int.self
) -> (promise: CancellablePromise<T>, resolver: Resolver<T>, cancels: Shared<Int>) {
    let cancels = Shared(0)
    var captured: Resolver<T>!
    let promise = CancellablePromise<T> { resolver in
        captured = resolver
        return { cancels.increment() }
    }
    return (promise, captured, cancels)
}

/// Pending work whose cancel handler (one that takes the reason) records the reason of each run.
func pendingWorkRecordingReasons() -> (
    promise: CancellablePromise<Int>, resolver: Resolver<Int>, reasons: Shared<[CancellationReason]>
) {
    let reasons = Shared<[CancellationReason]>([])
    var captured: Resolver<Int>!
    let promise = CancellablePromise<Int> { resolver in
        captured = resolver
        return { reason in reasons.append(reason) }
    }
    return (promise, captured, reasons)
}
