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
    let cancelWork = autoCancel ? cancellablePromise.handle.addConsumer() : nil
    return follow(cancellablePromise.promise, while: conditionPromise, isEnsured: isEnsured) { error in
        cancelWork?.cast(error.cancellationReason ?? .lostRace)
    }
}

/// The one implementation of `when(_:while:)`: `conditionEnded` runs if the condition decided the outcome.
private func follow<T>(
    _ promise: Promise<T>,
    while conditionPromise: Promise<Void>,
    isEnsured: Bool,
    conditionEnded: @escaping (_ error: Error) -> Void
) -> Promise<T> {
    let result = Promise<T>(state: nil)
    if isEnsured {
        // CancellablePromiseKit checks the condition where the result is delivered, on `conf.Q.map`.
        let queue = conf.Q.map
        promise.pipe { outcome in
            dispatch(on: queue, flags: nil) {
                guard case .rejected? = conditionPromise.result else {
                    result.resolveInHandler(outcome)
                    return
                }
                if result.resolve(.rejected(CancellablePromiseError.cancelled), inHandler: true) {
                    conditionEnded(CancellablePromiseError.cancelled)
                }
            }
        }
    } else {
        promise.pipe(to: result.resolveInHandler)
    }
    conditionPromise.pipe { condition in
        // A fulfilled condition never ends the wait; a rejected one ends it only while the work is pending (once
        // the work has resolved, an ensured result's delivery checks the condition itself).
        guard case .rejected(let error) = condition, promise.isPending else { return }
        if result.resolve(.rejected(error), inHandler: true) {
            conditionEnded(error)
        }
    }
    return result
}
