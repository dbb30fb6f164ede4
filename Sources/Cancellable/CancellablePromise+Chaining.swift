public import Dispatch
public import PromiseCore

extension CancellablePromise {
    /// Runs `body` with the value and follows the promise it returns; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
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
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> CancellablePromise<V>
    ) -> CancellablePromise<V> {
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
    public func then<V>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) throws -> CancellablePromise<V>
    ) -> CancellablePromise<V> {
        thenFollowing(on: on, flags: flags, body)
    }

    /// Runs `body` with the value and follows the promise (or guarantee) it returns; the chain stays
    /// cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// download(url).then { data in parse(data) }   // parse returns Promise<Model>
    /// ```
    @inlinable
    public func then<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> U
    ) -> CancellablePromise<U.T> {
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
    ) -> CancellablePromise<U.T> {
        thenFollowing(on: on, flags: flags, body)
    }

    @inlinable
    func thenFollowing<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ body: @escaping (T) throws -> U
    ) -> CancellablePromise<U.T> {
        chain(on: on, flags: flags, FollowStep(body: body))
    }

    /// Transforms the value; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// download(url).map { String(decoding: $0, as: UTF8.self) }
    /// ```
    @inlinable
    public func map<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T) throws -> U
    ) -> CancellablePromise<U> {
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
    ) -> CancellablePromise<U> {
        mapUnchecked(on: on, flags: flags, transform)
    }

    /// `map(on:flags:_:)` for a transform that is not `sending` (the library's own steps, which capture generic
    /// metatypes).
    @inlinable
    func mapUnchecked<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ transform: @escaping (T) throws -> U
    ) -> CancellablePromise<U> {
        chain(on: on, flags: flags, MapStep(transform: transform))
    }

    /// Transforms the value, rejecting with `PMKError.compactMap` when the transform returns `nil`.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// download(url).compactMap { UIImage(data: $0) }
    /// ```
    @inlinable
    public func compactMap<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T) throws -> U?
    ) -> CancellablePromise<U> {
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
    ) -> CancellablePromise<U> {
        chain(on: on, flags: flags, CompactMapStep(transform: transform))
    }

    /// Consumes the value; the returned promise can still cancel the chain.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let shown = download(url).done { show($0) }
    /// stopButton.onTap { shown.cancel() }
    /// ```
    ///
    /// If the chain is cancelled before `body` gets to run, `body` is skipped.
    @inlinable
    public func done(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> Void
    ) -> CancellablePromise<Void> {
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
    ) -> CancellablePromise<Void> {
        chain(on: on, flags: flags, DoneStep(body: body))
    }

    /// Looks at the value and passes it on; throwing rejects the chain.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    @inlinable
    public func get(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) throws -> Void
    ) -> CancellablePromise<T> {
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
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, GetStep(body: body))
    }

    /// Looks at the result, value or error, and passes it on.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    @inlinable
    public func tap(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Result<T>) -> Void
    ) -> CancellablePromise<T> {
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
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, TapStep(body: body))
    }

    /// Discards the value; the result can still cancel the chain.
    @inlinable
    public func asVoid() -> CancellablePromise<Void> {
        map(on: nil) { _ in }
    }
}

extension CancellablePromise {
    /// Makes the next link of the chain: a cancellable promise whose cancel reaches `self`, resolved by
    /// `step` on `on`.
    ///
    /// The link's promise holds the step, its queue and the link's cancellation state, and the handler stored on
    /// `self` captures only that promise: one allocation for both (a closure context holding the step and the
    /// link's sink would be another), and the step's code is known statically. The step is taken out of the link
    /// when the handler runs, so what it captured is released when the step is over.
    @inlinable
    func chain<Step: LinkStep>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ step: Step
    ) -> CancellablePromise<Step.Output> where Step.Input == T {
        let state = LockedCancellationState(
            callbacks: OnCancelList(addVoteEntry()),
            cancelsInputsOnResolution: false,
            rejectBox: CancellablePromise<Step.Output>.rejectBox
        )
        let cargo = LinkCargo(step: step, queue: on, flags: flags)
        let box = LinkPromise<Step.Output, LinkCargo<Step>?>(arbiter: state, cargo: cargo)
        let link = CancellablePromise<Step.Output>(box: box, state: state)
        promise.pipe { [box] result in box.receive(result) }
        return link
    }
}

/// What a cancellable link's promise holds until its input delivers: the step and where it runs.
@usableFromInline
struct LinkCargo<Step: LinkStep> {
    @usableFromInline
    let step: Step
    @usableFromInline
    let queue: DispatchQueue?
    @usableFromInline
    let flags: DispatchWorkItemFlags?

    @inlinable
    init(step: Step, queue: DispatchQueue?, flags: DispatchWorkItemFlags?) {
        self.step = step
        self.queue = queue
        self.flags = flags
    }
}

extension LinkPromise {
    /// The input's result, delivered once: the step runs on its queue (or inline), unless the result is one it
    /// passes straight through, without a hop. Either way the step — and what its body captured — is released
    /// before the link resolves, as PromiseCore's steps release their bodies.
    @inlinable
    func receive<Step: LinkStep>(_ result: Result<Step.Input>) where Cargo == LinkCargo<Step>?, Step.Output == T {
        let sink = LinkSink(box: self, state: unsafeDowncast(arbiter, to: LockedCancellationState.self))
        guard Step.handling.runs(for: result) else {
            _ = takeCargo()
            sink.resolve(result.castError())
            return
        }
        guard let queue = readCargo({ $0.queue }) else {
            // Inline: no `dispatch` closure per resolution.
            runStep(result, into: sink)
            return
        }
        // The hop captures this promise, not the step: the step stays in the cargo until the hop takes it out.
        dispatch(on: queue, flags: readCargo { $0.flags }) { self.runStep(result, into: sink) }
    }

    /// Takes the step out of the cargo and runs it, handing it over whole: the step releases its body before it
    /// resolves the link (``LinkStep/run(_:into:)`` is `consuming`).
    @inlinable
    func runStep<Step: LinkStep>(
        _ result: Result<Step.Input>,
        into sink: LinkSink<T>
    ) where Cargo == LinkCargo<Step>?, Step.Output == T {
        let step = takeCargo().unsafelyUnwrapped.step
        (consume step).runUnlessResolved(result, into: sink)
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
            // Only reached where `U == T` (a fulfillment passing through `recover`): a metatype comparison and a
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
