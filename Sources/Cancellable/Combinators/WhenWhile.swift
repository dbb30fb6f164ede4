public import PromiseCore

/// Resolves like `promise`, unless `conditionPromise` rejects first: then it rejects with that error.
///
/// The condition holds while `conditionPromise` is pending or fulfilled: a fulfilled condition never ends the
/// wait. With `isEnsured`, the condition is checked again when `promise`'s result is delivered (on
/// `conf.Q.map`, as in CancellablePromiseKit): if `conditionPromise` has rejected by then — even in the same
/// turn, just after `promise` fulfilled — the result rejects with ``CancellablePromiseError/cancelled``.
///
/// ```swift
/// let (screenVisible, screenClosed) = Promise<Void>.pending()
/// when(loadThumbnails(), while: screenVisible).done { show($0) }
/// // later: screenClosed.reject(CancellablePromiseError.cancelled)
/// ```
public func when<T>(
    _ promise: Promise<T>,
    while conditionPromise: Promise<Void>,
    isEnsured: Bool = false
) -> Promise<T> {
    follow(promise, while: conditionPromise, isEnsured: isEnsured) { _ in }
}

/// Resolves like `cancellablePromise`, unless `conditionPromise` rejects first (with `isEnsured`, or before the
/// result is delivered); with `autoCancel`, the condition ending the wait also cancels `cancellablePromise` —
/// with the condition's reason if it rejected with a cancellation, with ``CancellationReason/lostRace``
/// otherwise. A fulfilled condition never ends the wait.
///
/// ```swift
/// when(download(url), while: viewIsVisible, autoCancel: true)   // leaving the view stops the download
/// ```
public func when<T>(
    _ cancellablePromise: CancellablePromise<T>,
    while conditionPromise: Promise<Void>,
    isEnsured: Bool = false,
    autoCancel: Bool = false
) -> Promise<T> {
    let cancelWork = autoCancel ? cancellablePromise.addVote() : nil
    return follow(cancellablePromise.promise, while: conditionPromise, isEnsured: isEnsured) { error in
        cancelWork?.cast(error.cancellationReason ?? .lostRace)
    }
}

/// The one implementation of `when(_:while:)`: `conditionEnded` runs if the condition decided the outcome — before
/// the result is resolved, so that with `autoCancel` the work's cancel handlers have run by the time any handler of
/// the result runs (Guarantees, rule 10).
private func follow<T>(
    _ promise: Promise<T>,
    while conditionPromise: Promise<Void>,
    isEnsured: Bool,
    conditionEnded: @escaping (_ error: Error) -> Void
) -> Promise<T> {
    let result = Promise<T>(state: nil)
    // Who decides the result: the work's outcome or the condition. Claimed once, under a lock, before anything is
    // carried out: the condition's side cancels the work first, and the work's own (cancelled) outcome that this
    // provokes must not take the result.
    let decided = Locked(false)
    let claim = {
        decided.withLock { isDecided in
            defer { isDecided = true }
            return !isDecided
        }
    }
    if isEnsured {
        // CancellablePromiseKit checks the condition where the result is delivered, on `conf.Q.map`.
        let queue = conf.Q.map
        promise.pipe { outcome in
            dispatch(on: queue, flags: nil) {
                guard case .rejected? = conditionPromise.result else {
                    if claim() { result.resolveInHandler(outcome) }
                    return
                }
                guard claim() else { return }
                conditionEnded(CancellablePromiseError.cancelled)
                result.resolveInHandler(.rejected(CancellablePromiseError.cancelled))
            }
        }
    } else {
        promise.pipe { outcome in
            if claim() { result.resolveInHandler(outcome) }
        }
    }
    conditionPromise.pipe { condition in
        // A fulfilled condition never ends the wait; a rejected one ends it only while the work is pending (once
        // the work has resolved, an ensured result's delivery checks the condition itself).
        guard case .rejected(let error) = condition, promise.isPending, claim() else { return }
        conditionEnded(error)
        result.resolveInHandler(.rejected(error))
    }
    return result
}
