public import Dispatch
public import PromiseCore

extension CancellablePromise {
    /// Runs `body` with the value and follows the promise it returns; the chain stays cancellable.
    ///
    /// ```swift
    /// let chain = login().then { token in download(token) }   // both CancellablePromises
    /// chain.cancel()   // cancels whichever is still running
    /// ```
    ///
    /// Cancelling the returned promise cancels this one if it is still pending, and the promise `body`
    /// returned if it is cancellable (even if `body` returns after the cancel). A body whose link was
    /// cancelled before it got to run is skipped.
    @inlinable
    public func then<V>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ body: @escaping (T) throws -> CancellablePromise<V>
    ) -> CancellablePromise<V> {
        thenFollowing(on: on, flags: flags, body)
    }

    /// Runs `body` with the value and follows the promise (or guarantee) it returns; the chain stays
    /// cancellable.
    ///
    /// ```swift
    /// download(url).then { data in parse(data) }   // parse returns Promise<Model>
    /// ```
    @inlinable
    public func then<U: Thenable>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ body: @escaping (T) throws -> U
    ) -> CancellablePromise<U.T> {
        thenFollowing(on: on, flags: flags, body)
    }

    @inlinable
    func thenFollowing<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ body: @escaping (T) throws -> U
    ) -> CancellablePromise<U.T> {
        chain(on: on, flags: flags, handling: .value) { result, sink in
            guard case .fulfilled(let value) = result else {
                sink.resolve(result.castError())
                return
            }
            let next = try body(value)
            guard !sink.isOwnPromise(next) else { throw PMKError.returnedSelf }
            sink.follow(next)
        }
    }

    /// Transforms the value; the chain stays cancellable.
    ///
    /// ```swift
    /// download(url).map { String(decoding: $0, as: UTF8.self) }
    /// ```
    @inlinable
    public func map<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T) throws -> U
    ) -> CancellablePromise<U> {
        chain(on: on, flags: flags, handling: .value) { result, sink in
            guard case .fulfilled(let value) = result else {
                sink.resolve(result.castError())
                return
            }
            sink.resolve(.fulfilled(try transform(value)))
        }
    }

    /// Transforms the value, rejecting with `PMKError.compactMap` when the transform returns `nil`.
    ///
    /// ```swift
    /// download(url).compactMap { UIImage(data: $0) }
    /// ```
    @inlinable
    public func compactMap<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T) throws -> U?
    ) -> CancellablePromise<U> {
        chain(on: on, flags: flags, handling: .value) { result, sink in
            guard case .fulfilled(let value) = result else {
                sink.resolve(result.castError())
                return
            }
            guard let transformed = try transform(value) else { throw PMKError.compactMap(value, U.self) }
            sink.resolve(.fulfilled(transformed))
        }
    }

    /// Consumes the value; the returned promise can still cancel the chain.
    ///
    /// ```swift
    /// let shown = download(url).done { show($0) }
    /// stopButton.onTap { shown.cancel() }
    /// ```
    ///
    /// If the chain is cancelled before `body` gets to run, `body` is skipped.
    @inlinable
    public func done(
        on: DispatchQueue? = conf.Q.return,
        flags: DispatchWorkItemFlags? = nil,
        _ body: @escaping (T) throws -> Void
    ) -> CancellablePromise<Void> {
        chain(on: on, flags: flags, handling: .value) { result, sink in
            guard case .fulfilled(let value) = result else {
                sink.resolve(result.castError())
                return
            }
            try body(value)
            sink.resolve(.fulfilled(()))
        }
    }

    /// Looks at the value and passes it on; throwing rejects the chain.
    @inlinable
    public func get(
        on: DispatchQueue? = conf.Q.return,
        flags: DispatchWorkItemFlags? = nil,
        _ body: @escaping (T) throws -> Void
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, handling: .value) { result, sink in
            guard case .fulfilled(let value) = result else {
                sink.resolve(result)
                return
            }
            try body(value)
            sink.resolve(result)
        }
    }

    /// Looks at the result, value or error, and passes it on.
    @inlinable
    public func tap(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ body: @escaping (Result<T>) -> Void
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, handling: .both) { result, sink in
            body(result)
            sink.resolve(result)
        }
    }

    /// Discards the value; the result can still cancel the chain.
    @inlinable
    public func asVoid() -> CancellablePromise<Void> {
        map(on: nil) { _ in }
    }
}

extension CancellablePromise {
    /// Which results a link's handler hops to its queue for; the others pass straight through, without a
    /// hop, as in PromiseKit.
    @usableFromInline
    enum Handling {
        case value, error, both
    }

    /// Makes the next link of the chain: a cancellable promise whose cancel reaches `self`, resolved by
    /// `handle` on `on`.
    ///
    /// - Parameter runsAfterCancel: `ensure`'s bodies must run even when their link was cancelled; every
    ///   other body is skipped once its link is settled.
    @inlinable
    func chain<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        handling: Handling,
        runsAfterCancel: Bool = false,
        _ handle: @escaping (Result<T>, LinkSink<U>) throws -> Void
    ) -> CancellablePromise<U> {
        let link = CancellablePromise<U>(callbacks: OnCancelList(.vote(self.handle.addConsumer())))
        let sink = link.sink
        promise.pipe { result in
            let hops: Bool
            switch (handling, result) {
            case (.both, _), (.value, .fulfilled), (.error, .rejected): hops = true
            case (.value, .rejected), (.error, .fulfilled): hops = false
            }
            guard hops else {
                sink.resolve(result.castError())
                return
            }
            dispatch(on: on, flags: flags) {
                guard runsAfterCancel || !sink.isResolved else { return }
                do {
                    try handle(result, sink)
                } catch {
                    sink.resolve(.rejected(error))
                }
            }
        }
        return link
    }
}

extension Result {
    /// A rejection passed through unchanged to a link of another value type. Only ever called on
    /// rejections, or where `U == T`.
    @inlinable
    func castError<U>() -> Result<U> {
        switch self {
        case .rejected(let error):
            return .rejected(error)
        case .fulfilled:
            // Only reached where `U == T` (a fulfilment passing through `recover`): a metatype comparison and a
            // reinterpretation, not a dynamic cast per value.
            precondition(
                U.self == T.self,
                "Internal inconsistency: a fulfilled result passed through a link of another type"
            )
            return unsafeBitCast(self, to: Result<U>.self)
        }
    }
}

/// Starts a cancellable chain with a body that may throw.
///
/// ```swift
/// let chain = firstly { try download(validated(url)) }.done { show($0) }
/// chain.cancel()
/// ```
public func firstly<T>(execute body: () throws -> CancellablePromise<T>) -> CancellablePromise<T> {
    do {
        return try body()
    } catch {
        return CancellablePromise(error: error)
    }
}
