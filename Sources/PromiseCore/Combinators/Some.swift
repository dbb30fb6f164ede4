/// What ``some(_:_:)-(_,[U])`` rejects with once too many inputs rejected for `count` of them to fulfill.
///
/// ```swift
/// some(2, mirrors).catch { error in
///     if let error = error as? AggregateError { print(error.errors) }
/// }
/// ```
public struct AggregateError: Error {
    /// How many fulfillments were required.
    public let required: Int
    /// The rejections, in the order they happened.
    public let errors: [Error]

    @usableFromInline
    init(required: Int, errors: [Error]) {
        self.required = required
        self.errors = errors
    }
}

/// Fulfills with the first `count` values, in the order they fulfilled, as soon as there are that many
/// (Bluebird's `Promise.some`).
///
/// ```swift
/// some(2, mirrors.map { ping($0) }).done { fastestTwo in … }
/// ```
///
/// Rejects with ``AggregateError`` as soon as so many inputs rejected that fewer than `count` can still
/// fulfill. A `count` below 1 or above the number of inputs rejects at once with ``PMKError/badInput``.
@inlinable
public func some<U: Thenable>(_ count: Int, _ thenables: [U]) -> Promise<[U.T]> {
    guard count >= 1, count <= thenables.count else {
        return Promise(error: PMKError.badInput)
    }
    let promise = Promise<[U.T]>(state: nil)
    let state = Locked(SomeState<U.T>(required: count, total: thenables.count))
    for thenable in thenables {
        thenable.pipe { result in
            if let outcome = state.withLock({ $0.record(result) }) {
                promise.resolveInHandler(outcome)
            }
        }
    }
    return promise
}

/// Fulfills with the first `count` values, in the order they fulfilled, as soon as there are that many.
@inlinable
public func some<U: Thenable>(_ count: Int, _ thenables: U...) -> Promise<[U.T]> {
    some(count, thenables)
}

@usableFromInline
struct SomeState<T> {
    @usableFromInline
    let required: Int
    @usableFromInline
    let total: Int
    @usableFromInline
    var values: [T] = []
    @usableFromInline
    var errors: [Error] = []
    @usableFromInline
    var isDecided = false

    @inlinable
    init(required: Int, total: Int) {
        self.required = required
        self.total = total
    }

    /// Decides the outcome, if nothing has yet: `true` if this call did. (What a first value does when only one is
    /// required, without keeping it.)
    @inlinable
    mutating func decide() -> Bool {
        guard !isDecided else { return false }
        isDecided = true
        return true
    }

    @inlinable
    mutating func record(_ result: Result<T>) -> Result<[T]>? {
        guard !isDecided else { return nil }
        switch result {
        case .fulfilled(let value):
            values.append(value)
            guard values.count == required else { return nil }
            isDecided = true
            return .fulfilled(values)
        case .rejected(let error):
            errors.append(error)
            guard total - errors.count < required else { return nil }
            isDecided = true
            return .rejected(AggregateError(required: required, errors: errors))
        }
    }
}
