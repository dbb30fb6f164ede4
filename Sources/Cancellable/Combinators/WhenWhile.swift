public import PromiseCore

/// Resolves like `promise`, unless `conditionPromise` rejects first: then it rejects with that error.
///
/// The condition holds while `conditionPromise` is pending. With `isEnsured`, the condition must hold until
/// `promise` resolves: if `conditionPromise` fulfills first, the result rejects with
/// ``CancellablePromiseError/cancelled``.
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

/// Resolves like `cancellablePromise`, unless `conditionPromise` rejects first (or, with `isEnsured`, fulfills
/// first); with `autoCancel`, the condition ending first also cancels `cancellablePromise` — with the
/// condition's reason if it rejected with a cancellation, with ``CancellationReason/lostRace`` otherwise.
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
        cancelWork?(error.cancellationReason ?? .lostRace)
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
    promise.pipe(to: result.resolveInHandler)
    conditionPromise.pipe { condition in
        let outcome: Result<T>
        switch condition {
        case .rejected(let error):
            outcome = .rejected(error)
        case .fulfilled:
            guard isEnsured else { return }
            outcome = .rejected(CancellablePromiseError.cancelled)
        }
        if result.resolve(outcome, inHandler: true), case .rejected(let error) = outcome {
            conditionEnded(error)
        }
    }
    return result
}
