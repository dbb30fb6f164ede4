public import Dispatch
import Foundation

/// Something that eventually produces a value or an error, and can be chained.
///
/// `Promise`, `Guarantee` and Cancellable's `CancellablePromise` conform. Conforming types provide two
/// things — ``pipe(to:)`` and ``result`` — and get every chain method from this protocol's extension.
///
/// ```swift
/// fetchUser()
///     .map { $0.name }
///     .done { name in label.text = name }
///     .catch { error in show(error) }
/// ```
///
/// > Note: handlers run on the queue given by `on:` — by default ``conf``'s `Q.map` for transforming steps
/// > and `Q.return` for terminal ones, both the main queue — and `on: nil` runs them inline, on the thread
/// > that resolved the promise. A handler is a plain closure: written on the main actor, it may use the
/// > main actor's state when it runs on the main queue.
public protocol Thenable: AnyObject {
    /// The type of the value this thenable produces.
    associatedtype T

    /// Calls `to` with the result once it is known — at once if it is known already.
    func pipe(to: @escaping (Result<T>) -> Void)

    /// The result, or `nil` while pending.
    var result: Result<T>? { get }
}

// MARK: - Chaining

extension Thenable {
    /// Runs `body` with the value and follows the promise it returns.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// login().then { credentials in fetchAvatar(credentials) }
    /// ```
    ///
    /// - Parameters:
    ///   - flags: work-item flags for the dispatch to the default queue.
    ///   - body: returns the next step. Throwing rejects the chain; returning the promise `then` itself
    ///     returned rejects it with ``PMKError/returnedSelf``.
    ///   - isolation: the caller's actor, which decides the default queue; leave the default.
    /// - Returns: a promise that resolves like the one `body` returns.
    @inlinable
    public func then<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> U
    ) -> Promise<U.T> {
        nonisolated(unsafe) let body = body
        return self.then(on: defaultQueue(conf.Q.map, for: isolation, calling: "then"), flags: flags, body)
    }

    /// `then` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUser().then(on: .global()) { user in fetchAvatar(user) }
    /// ```
    @inlinable
    public func then<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) throws -> U
    ) -> Promise<U.T> {
        thenUnchecked(on: on, flags: flags, body)
    }

    /// Transforms the value.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().map { try JSONDecoder().decode(User.self, from: $0) }
    /// ```
    ///
    /// - Returns: a promise for the transformed value, rejected if `transform` throws.
    @inlinable
    public func map<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T) throws -> U
    ) -> Promise<U> {
        nonisolated(unsafe) let transform = transform
        return self.map(on: defaultQueue(conf.Q.map, for: isolation, calling: "map"), flags: flags, transform)
    }

    /// `map` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().map(on: .global()) { try JSONDecoder().decode(User.self, from: $0) }
    /// ```
    @inlinable
    public func map<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T) throws -> U
    ) -> Promise<U> {
        mapUnchecked(on: on, flags: flags, transform)
    }

    /// Transforms the value, rejecting with ``PMKError/compactMap(_:_:)`` when the transform returns `nil`.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().compactMap { String(data: $0, encoding: .utf8) }
    /// ```
    @inlinable
    public func compactMap<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T) throws -> U?
    ) -> Promise<U> {
        nonisolated(unsafe) let transform = transform
        return self.compactMap(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "compactMap"),
            flags: flags,
            transform
        )
    }

    /// `compactMap` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().compactMap(on: .global()) { String(data: $0, encoding: .utf8) }
    /// ```
    @inlinable
    public func compactMap<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T) throws -> U?
    ) -> Promise<U> {
        link(CompactMapLink(on: on, flags: flags, transform))
    }

    /// Consumes the value at the end of a chain; follow it with `catch`.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUser().done { user in show(user) }.catch { show($0) }
    /// ```
    @inlinable
    public func done(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> Void
    ) -> Promise<Void> {
        nonisolated(unsafe) let body = body
        return self.done(on: defaultQueue(conf.Q.return, for: isolation, calling: "done"), flags: flags, body)
    }

    /// `done` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().done(on: .global()) { try $0.write(to: cacheURL) }
    /// ```
    @inlinable
    public func done(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) throws -> Void
    ) -> Promise<Void> {
        link(MapLink(on: on, flags: flags, body))
    }

    /// Looks at the value and passes it on unchanged; throwing rejects the chain.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUser().get { cache.store($0) }.done { show($0) }
    /// ```
    @inlinable
    public func get(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> Void
    ) -> Promise<T> {
        nonisolated(unsafe) let body = body
        return self.get(on: defaultQueue(conf.Q.return, for: isolation, calling: "get"), flags: flags, body)
    }

    /// `get` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().get(on: .global()) { try $0.write(to: cacheURL) }
    /// ```
    @inlinable
    public func get(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) throws -> Void
    ) -> Promise<T> {
        link(GetLink(on: on, flags: flags, body))
    }

    /// Looks at the result, value or error, and passes it on unchanged.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUser().tap { print("fetch finished: \($0)") }.done { show($0) }
    /// ```
    @inlinable
    public func tap(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Result<T>) -> Void
    ) -> Promise<T> {
        nonisolated(unsafe) let body = body
        return self.tap(on: defaultQueue(conf.Q.map, for: isolation, calling: "tap"), flags: flags, body)
    }

    /// `tap` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().tap(on: nil) { logger.log("fetched: \($0)") }
    /// ```
    @inlinable
    public func tap(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (Result<T>) -> Void
    ) -> Promise<T> {
        let box = Promise<T>(state: nil)
        pipe { result in
            dispatch(on: on, flags: flags) {
                body(result)
                box.resolveInHandler(result)
            }
        }
        return box
    }

    /// Discards the value.
    ///
    /// ```swift
    /// let saved: Promise<Void> = save(document).asVoid()
    /// ```
    @inlinable
    public func asVoid() -> Promise<Void> {
        map(on: nil) { _ in }
    }

    // The library's own steps (the sequence helpers) go through these rather than the public `sending` forms: their
    // closures capture generic metatypes, which a `sending` closure may not.

    /// `then(on:flags:_:)` for a body that is not `sending`.
    @inlinable
    func thenUnchecked<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ body: @escaping (T) throws -> U
    ) -> Promise<U.T> {
        link(ThenLink(on: on, flags: flags, body))
    }

    /// `map(on:flags:_:)` for a transform that is not `sending`.
    @inlinable
    func mapUnchecked<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ transform: @escaping (T) throws -> U
    ) -> Promise<U> {
        link(MapLink(on: on, flags: flags, transform))
    }
}

// MARK: - Inspecting

extension Thenable {
    /// The error, if rejected.
    @inlinable
    public var error: Error? {
        if case .rejected(let error) = result { return error }
        return nil
    }

    /// The value, if fulfilled.
    @inlinable
    public var value: T? {
        if case .fulfilled(let value) = result { return value }
        return nil
    }

    /// Whether the result is not yet known.
    @inlinable
    public var isPending: Bool { result == nil }

    /// Whether the result is known.
    @inlinable
    public var isResolved: Bool { !isPending }

    /// Whether it fulfilled.
    @inlinable
    public var isFulfilled: Bool { value != nil }

    /// Whether it rejected.
    @inlinable
    public var isRejected: Bool { error != nil }
}

// MARK: - Swift.Result

extension Thenable {
    /// Settles into a guarantee of a standard-library `Result`, so that failure becomes a value.
    ///
    /// ```swift
    /// let outcome: Swift.Result<User, Error> = await fetchUser().asResult().async()
    /// ```
    @inlinable
    public func asResult() -> Guarantee<Swift.Result<T, Error>> {
        let box = Guarantee<Swift.Result<T, Error>>(state: nil)
        pipe { result in
            box.resolveInHandler(.fulfilled(Swift.Result(result)))
        }
        return box
    }
}

// MARK: - Waiting

extension Thenable {
    /// Blocks the calling thread until the result is known.
    @usableFromInline
    func waitForResult() -> Result<T> {
        if isOnMainThreadOrQueue {
            conf.logHandler(.waitOnMainThread)
        }
        if let result {
            return result
        }
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = Locked<UncheckedSendable<Result<T>>?>(nil)
        pipe { result in
            outcome.withLock { $0 = UncheckedSendable(result) }
            semaphore.signal()
        }
        semaphore.wait()
        return outcome.withLock { $0.unsafelyUnwrapped.value }
    }
}

/// Whether the caller runs on the main thread or on the main queue. On Linux, once `dispatch_main()` has
/// parked the main thread, the main queue is served by a worker thread, and blocking it deadlocks just the
/// same.
var isOnMainThreadOrQueue: Bool {
    _ = markMainQueue
    return Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey = DispatchSpecificKey<Bool>()
private let markMainQueue: Void = DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
