/// The one implementation behind every `when(fulfilled:)` and `when(guarantees:)` form.
///
/// Fulfills with every value, in input order, once all inputs fulfilled; rejects with the first error.
/// Cost is O(n) in the number of inputs: one handler each, one lock for the shared state.
@inlinable
func joinFulfilled<U: Thenable>(_ thenables: [U]) -> Promise<[U.T]> {
    guard !thenables.isEmpty else {
        return .value([])
    }
    let promise = Promise<[U.T]>(state: nil)
    let state = Locked(JoinState<U.T>(count: thenables.count))
    for (index, thenable) in thenables.enumerated() {
        thenable.pipe { result in
            if let outcome = state.withLock({ $0.record(result, at: index) }) {
                promise.resolveInHandler(outcome)
            }
        }
    }
    return promise
}

/// The one implementation behind `when(resolved:)`: waits for every input, fulfills with their results.
@inlinable
func joinResolved<U: Thenable>(_ thenables: [U]) -> Guarantee<[Result<U.T>]> {
    guard !thenables.isEmpty else {
        return .value([])
    }
    let guarantee = Guarantee<[Result<U.T>]>(state: nil)
    let state = Locked(ResolvedJoinState<U.T>(count: thenables.count))
    for (index, thenable) in thenables.enumerated() {
        thenable.pipe { result in
            if let results = state.withLock({ $0.record(result, at: index) }) {
                guarantee.resolveInHandler(.fulfilled(results))
            }
        }
    }
    return guarantee
}

@usableFromInline
struct JoinState<T> {
    @usableFromInline
    var values: [T?]
    @usableFromInline
    var remaining: Int
    @usableFromInline
    var isDecided = false

    @inlinable
    init(count: Int) {
        values = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Records one input's result; returns the outcome when this result decides it.
    @inlinable
    mutating func record(_ result: Result<T>, at index: Int) -> Result<[T]>? {
        guard !isDecided else { return nil }
        switch result {
        case .fulfilled(let value):
            values[index] = value
            remaining -= 1
            guard remaining == 0 else { return nil }
            isDecided = true
            let all = values.map { $0.unsafelyUnwrapped }
            values = []
            return .fulfilled(all)
        case .rejected(let error):
            isDecided = true
            values = []
            return .rejected(error)
        }
    }
}

@usableFromInline
struct ResolvedJoinState<T> {
    @usableFromInline
    var results: [Result<T>?]
    @usableFromInline
    var remaining: Int

    @inlinable
    init(count: Int) {
        results = Array(repeating: nil, count: count)
        remaining = count
    }

    @inlinable
    mutating func record(_ result: Result<T>, at index: Int) -> [Result<T>]? {
        guard results[index] == nil else { return nil }
        results[index] = result
        remaining -= 1
        guard remaining == 0 else { return nil }
        let all = results.map { $0.unsafelyUnwrapped }
        results = []
        return all
    }
}

extension Guarantee {
    /// Follows a thenable that cannot reject: a join of guarantees, or the thenables PromiseKit's
    /// `Guarantee.thenFlatMap` accepts. A rejection is a programming error in the caller.
    @inlinable
    convenience init<U: Thenable>(assumingSuccessOf thenable: U) where U.T == T {
        self.init(state: nil)
        thenable.pipe { [self] result in
            guard case .fulfilled = result else {
                preconditionFailure("A thenable that cannot reject rejected: \(result)")
            }
            resolveInHandler(result)
        }
    }
}
