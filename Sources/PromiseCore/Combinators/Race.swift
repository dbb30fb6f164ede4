/// Resolves like the first input to resolve, either way.
///
/// ```swift
/// race(fetch(from: mirrorA), fetch(from: mirrorB)).done { show($0) }
/// ```
///
/// An empty array rejects with ``PMKError/badInput``. The losers are not cancelled (use Cancellable's
/// `race(_:autoCancel:)` to stop them).
@inlinable
public func race<U: Thenable>(_ thenables: [U]) -> Promise<U.T> {
    guard !thenables.isEmpty else {
        return Promise(error: PMKError.badInput)
    }
    let promise = Promise<U.T>(state: nil)
    for thenable in thenables {
        thenable.pipe(to: promise.resolveInHandler)
    }
    return promise
}

/// Resolves like the first input to resolve, either way.
@inlinable
public func race<U: Thenable>(_ thenables: U...) -> Promise<U.T> {
    race(thenables)
}

/// Resolves with the first guarantee to resolve.
///
/// ```swift
/// race(after(seconds: 1).map { "slow" }, after(seconds: 0.1).map { "fast" })   // "fast"
/// ```
@inlinable
public func race<T>(_ guarantees: Guarantee<T>...) -> Guarantee<T> {
    let guarantee = Guarantee<T>(state: nil)
    for input in guarantees {
        input.pipe(to: guarantee.resolveInHandler)
    }
    return guarantee
}

/// Fulfills with the first input to fulfill; rejects with ``PMKError/noWinner`` only when every input rejected.
///
/// ```swift
/// race(fulfilled: mirrors.map { fetch(from: $0) }).done { show($0) }
/// ```
///
/// An empty array rejects with ``PMKError/badInput``.
@inlinable
public func race<U: Thenable>(fulfilled thenables: [U]) -> Promise<U.T> {
    guard !thenables.isEmpty else {
        return Promise(error: PMKError.badInput)
    }
    let promise = Promise<U.T>(state: nil)
    let remaining = Locked(thenables.count)
    for thenable in thenables {
        thenable.pipe { result in
            switch result {
            case .fulfilled:
                promise.resolveInHandler(result)
            case .rejected:
                let isLast = remaining.withLock { count -> Bool in
                    count -= 1
                    return count == 0
                }
                if isLast {
                    promise.resolveInHandler(.rejected(PMKError.noWinner))
                }
            }
        }
    }
    return promise
}

/// Fulfills with the first input to fulfill; rejects only when every input rejected, with
/// ``AggregateError`` (`required` 1) carrying each input's error in the order they rejected. What the cancellable
/// `race(fulfilled:autoCancel:)` follows: unlike ``race(fulfilled:)`` (PromiseKit's, which rejects with
/// ``PMKError/noWinner``), it says why every input failed. An empty array rejects with ``PMKError/badInput``.
@inlinable
package func firstFulfilled<U: Thenable>(_ thenables: [U]) -> Promise<U.T> {
    guard !thenables.isEmpty else {
        return Promise(error: PMKError.badInput)
    }
    let promise = Promise<U.T>(state: nil)
    let state = Locked(SomeState<U.T>(required: 1, total: thenables.count))
    // Made once and shared by every input: one context for the race, not one per input.
    let handler: (Result<U.T>) -> Void = { result in
        switch result {
        case .fulfilled(let value):
            // Decided by the first value: later ones find it decided.
            if state.withLock({ $0.decide() }) { promise.resolveInHandler(.fulfilled(value)) }
        case .rejected:
            if case .rejected(let error)? = state.withLock({ $0.record(result) }) {
                promise.resolveInHandler(.rejected(error))
            }
        }
    }
    for thenable in thenables {
        thenable.pipe(to: handler)
    }
    return promise
}
