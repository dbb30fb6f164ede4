/// Settles a pending ``Promise``: fulfills it with a value or rejects it with an error. The first call wins;
/// later calls are ignored.
///
/// ```swift
/// Promise<Data> { seal in
///     URLSession.shared.dataTask(with: url) { data, _, error in
///         seal.resolve(data, error)
///     }.resume()
/// }
/// ```
///
/// A resolver is a value over its promise, not an object of its own: making one allocates nothing, and copies
/// of it (stored, captured, sent to another thread) all settle the same promise.
///
/// > Note: if a promise made with a resolver is deallocated while pending, nothing can resolve it any more:
/// > ``LogEvent/pendingPromiseDeallocated`` is logged. (Since a resolver holds its promise, that is when the last
/// > copy of the resolver and every other reference to the promise are gone.)
public struct Resolver<T> {
    /// Two class references in one word: a resolver is as small as a reference.
    @usableFromInline
    enum Target {
        /// A plain promise: resolve it.
        case promise(Promise<T>)
        /// A promise whose resolution its arbiter decides (Cancellable's state machine): hand it the result.
        case arbitrated(ArbitratedPromise<T>)
    }

    @usableFromInline
    let target: Target

    /// A resolver of `promise`, which logs ``LogEvent/pendingPromiseDeallocated`` if it is deallocated pending.
    @inlinable
    init(_ promise: Promise<T>) {
        promise.logIfDeallocatedPending = .promise
        target = .promise(promise)
    }

    /// A resolver that hands every result to `promise`'s arbiter instead of resolving the promise itself; it never
    /// logs ``LogEvent/pendingPromiseDeallocated`` (a cancellable promise may be dropped while pending).
    @inlinable
    package init(arbitrated promise: ArbitratedPromise<T>) {
        target = .arbitrated(promise)
    }

    /// Fulfills the promise with `value`.
    @inlinable
    public func fulfill(_ value: T) {
        resolve(.fulfilled(value))
    }

    /// Rejects the promise with `error`.
    @inlinable
    public func reject(_ error: Error) {
        resolve(.rejected(error))
    }

    /// Resolves the promise with a PromiseKit result.
    @inlinable
    public func resolve(_ result: Result<T>) {
        switch target {
        case .promise(let promise):
            promise.resolve(result, inHandler: false)
        case .arbitrated(let promise):
            promise.arbiter._resolve(promise, with: result)
        }
    }

    /// Resolves the promise with a standard-library result.
    ///
    /// ```swift
    /// Promise<Int> { seal in seal.resolve(Swift.Result { try compute() }) }
    /// ```
    @inlinable
    public func resolve<E: Error>(_ result: Swift.Result<T, E>) {
        resolve(Result(result))
    }

    /// Resolves the promise from a Cocoa-style completion: the error if there is one, else the value;
    /// rejects with ``PMKError/invalidCallingConvention`` if both are `nil`.
    @inlinable
    public func resolve(_ obj: T?, _ error: Error?) {
        if let error {
            reject(error)
        } else if let obj {
            fulfill(obj)
        } else {
            reject(PMKError.invalidCallingConvention)
        }
    }

    /// Resolves the promise from a completion whose value is always present: the error wins if there is one.
    @inlinable
    public func resolve(_ obj: T, _ error: Error?) {
        if let error {
            reject(error)
        } else {
            fulfill(obj)
        }
    }

    /// Resolves the promise from a completion that passes the error first.
    @inlinable
    public func resolve(_ error: Error?, _ obj: T?) {
        resolve(obj, error)
    }
}

extension Resolver where T == Void {
    /// Fulfills a `Promise<Void>`.
    @inlinable
    public func fulfill_() {
        fulfill(())
    }

    /// Rejects with `error` if there is one, else fulfills.
    @inlinable
    public func resolve(_ error: Error?) {
        if let error {
            reject(error)
        } else {
            fulfill(())
        }
    }
}

// Safe to share between threads: resolving goes through the promise's lock; values cross threads only when `T`
// is `Sendable`.
extension Resolver: @unchecked Sendable where T: Sendable {}
