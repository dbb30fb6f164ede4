import PromiseCore

/// What one link of a cancellable chain does with its upstream's result: the body of `then`, `map`, `done`,
/// `recover`, `ensure`, … .
///
/// A value, not a closure: the handler a link stores upstream captures the step and the link's sink, in one
/// allocation, and calls code known statically (a closure would be a second allocation, captured by the first).
@usableFromInline
protocol LinkStep {
    associatedtype Input
    associatedtype Output

    /// Which results run the step, on its queue; the others pass straight through, without a hop.
    static var handling: LinkHandling { get }
    /// Whether the step runs even when its link was cancelled while the result travelled (`ensure`'s bodies).
    static var runsAfterCancel: Bool { get }

    /// Resolves `sink` from `result`, or throws to reject it. Consuming: the step releases its body — and what
    /// the body captured — before it resolves `sink` (PromiseCore's `callOnce(_:with:)`), so that whoever sees the
    /// link resolved sees the body's captures gone, as with PromiseCore's steps.
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Output>) throws
}

extension LinkStep {
    @inlinable
    static var runsAfterCancel: Bool { false }

    /// Runs the step unless its link was resolved first (cancelled while the result travelled); a throw rejects
    /// the link.
    @inlinable
    consuming func runUnlessResolved(_ result: Result<Input>, into sink: LinkSink<Output>) {
        guard Self.runsAfterCancel || !sink.isResolved else { return }
        do {
            try (consume self).run(result, into: sink)
        } catch {
            sink.resolve(.rejected(error))
        }
    }
}

/// Which results a link's step runs for; the others pass straight through, as in PromiseKit.
@usableFromInline
enum LinkHandling {
    case value, error, both

    /// Whether a step handling these results runs for `result`.
    @inlinable
    func runs<T>(for result: Result<T>) -> Bool {
        switch (self, result) {
        case (.both, _), (.value, .fulfilled), (.error, .rejected): true
        case (.value, .rejected), (.error, .fulfilled): false
        }
    }
}

/// `map`: the transformed value.
@usableFromInline
struct MapStep<Input, Output>: LinkStep {
    @usableFromInline
    let transform: (Input) throws -> Output

    @inlinable
    init(transform: @escaping (Input) throws -> Output) {
        self.transform = transform
    }

    @inlinable
    static var handling: LinkHandling { .value }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Output>) throws {
        let transform = (consume self).transform
        guard let value = sink.value(of: result) else { return }
        sink.resolve(.fulfilled(try callOnce(consume transform, with: value)))
    }
}

/// `then`: follows the promise (or guarantee) the body returns; cancelling the link cancels it.
@usableFromInline
struct FollowStep<Input, Next: Thenable>: LinkStep {
    @usableFromInline
    let body: (Input) throws -> Next

    @inlinable
    init(body: @escaping (Input) throws -> Next) {
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .value }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Next.T>) throws {
        let body = (consume self).body
        guard let value = sink.value(of: result) else { return }
        let next = try callOnce(consume body, with: value)
        guard !sink.isOwnPromise(next) else { throw PMKError.returnedSelf }
        sink.follow(next)
    }
}

/// `compactMap`: the transformed value, or `PMKError.compactMap` for `nil`.
@usableFromInline
struct CompactMapStep<Input, Output>: LinkStep {
    @usableFromInline
    let transform: (Input) throws -> Output?

    @inlinable
    init(transform: @escaping (Input) throws -> Output?) {
        self.transform = transform
    }

    @inlinable
    static var handling: LinkHandling { .value }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Output>) throws {
        let transform = (consume self).transform
        guard let value = sink.value(of: result) else { return }
        guard let transformed = try callOnce(consume transform, with: value) else {
            throw PMKError.compactMap(value, Output.self)
        }
        sink.resolve(.fulfilled(transformed))
    }
}

/// `done`: the body consumes the value; the link fulfills with `()`.
@usableFromInline
struct DoneStep<Input>: LinkStep {
    @usableFromInline
    let body: (Input) throws -> Void

    @inlinable
    init(body: @escaping (Input) throws -> Void) {
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .value }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Void>) throws {
        let body = (consume self).body
        guard let value = sink.value(of: result) else { return }
        try callOnce(consume body, with: value)
        sink.resolve(.fulfilled(()))
    }
}

/// `get`: the body sees the value, which passes on.
@usableFromInline
struct GetStep<Input>: LinkStep {
    @usableFromInline
    let body: (Input) throws -> Void

    @inlinable
    init(body: @escaping (Input) throws -> Void) {
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .value }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Input>) throws {
        let body = (consume self).body
        guard let value = sink.value(of: result) else { return }
        try callOnce(consume body, with: value)
        sink.resolve(result)
    }
}

/// `tap`: the body sees the result, which passes on.
@usableFromInline
struct TapStep<Input>: LinkStep {
    @usableFromInline
    let body: (Result<Input>) -> Void

    @inlinable
    init(body: @escaping (Result<Input>) -> Void) {
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .both }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Input>) {
        let body = (consume self).body
        body(result)
        _ = consume body
        sink.resolve(result)
    }
}

/// `ensure`: the body runs whatever happened, even after a cancel; the result passes on.
@usableFromInline
struct EnsureStep<Input>: LinkStep {
    @usableFromInline
    let body: () -> Void

    @inlinable
    init(body: @escaping () -> Void) {
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .both }

    @inlinable
    static var runsAfterCancel: Bool { true }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Input>) {
        let body = (consume self).body
        body()
        _ = consume body
        sink.resolve(result)
    }
}

/// `ensureThen`: runs the body's clean-up, even after a cancel, then passes the result (or the clean-up's
/// error) on.
@usableFromInline
struct EnsureThenStep<Input>: LinkStep {
    @usableFromInline
    let body: () -> Promise<Void>

    @inlinable
    init(body: @escaping () -> Promise<Void>) {
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .both }

    @inlinable
    static var runsAfterCancel: Bool { true }

    @inlinable
    consuming func run(_ result: Result<Input>, into sink: LinkSink<Input>) {
        let body = (consume self).body
        let cleanup = body()
        _ = consume body
        cleanup.pipe { cleanup in
            switch cleanup {
            case .fulfilled: sink.resolve(result)
            case .rejected(let error): sink.resolve(.rejected(error))
            }
        }
    }
}

/// `recover` with a body that returns a promise or a guarantee to follow: errors the policy handles are
/// replaced; the rest pass on.
@usableFromInline
struct RecoverStep<Next: Thenable>: LinkStep {
    @usableFromInline
    let policy: CatchPolicy
    @usableFromInline
    let body: (Error) throws -> Next

    @inlinable
    init(policy: CatchPolicy, body: @escaping (Error) throws -> Next) {
        self.policy = policy
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .error }

    @inlinable
    consuming func run(_ result: Result<Next.T>, into sink: LinkSink<Next.T>) throws {
        let policy = self.policy
        let body = (consume self).body
        guard case .rejected(let error) = result, policy.handles(error) else {
            _ = consume body
            sink.resolve(result)
            return
        }
        let next = try callOnce(consume body, with: error)
        guard !sink.isOwnPromise(next) else { throw PMKError.returnedSelf }
        sink.follow(next)
    }
}

/// `recover` on a `Void` chain with a body that handles the error (or rethrows it): errors the policy handles
/// become `()`; the rest pass on.
@usableFromInline
struct RecoverVoidStep: LinkStep {
    @usableFromInline
    let policy: CatchPolicy
    @usableFromInline
    let body: (Error) throws -> Void

    @inlinable
    init(policy: CatchPolicy, body: @escaping (Error) throws -> Void) {
        self.policy = policy
        self.body = body
    }

    @inlinable
    static var handling: LinkHandling { .error }

    @inlinable
    consuming func run(_ result: Result<Void>, into sink: LinkSink<Void>) throws {
        let policy = self.policy
        let body = (consume self).body
        guard case .rejected(let error) = result, policy.handles(error) else {
            _ = consume body
            sink.resolve(result)
            return
        }
        try callOnce(consume body, with: error)
        sink.resolve(.fulfilled(()))
    }
}
