public import Dispatch

/// A promise made by a chain step (`map`, `done`, `get`, `compactMap`, `then`), which holds the step's body until it
/// runs: a step is one object.
///
/// The handler a step adds to its input captures only the link, and a closure whose context is one object uses that
/// object as its context: no allocation. The body — the caller's closure, as it was passed — is stored in the link
/// rather than in a closure context of its own. (Before, each step was its promise plus a closure context holding
/// the promise and the body: two allocations.)
///
/// Rules:
/// - The body runs at most once: ``receive(_:)`` is called once, by the input's handler; the body is taken out of
///   the link before it runs, and dropped unrun if the input rejects, so that what it captured is released as
///   soon as the step is over (as the closure context was), not when the promise goes.
/// - Only the thread that runs the handler (or the queue it hops to) touches the body after the link is made; the
///   input's lock orders that after the link's initialisation.
@usableFromInline
package protocol ChainLink: Box {
    /// The type of the input's value.
    associatedtype Input

    /// Where the body runs: a queue, or `nil` for inline on the resolving thread.
    var queue: DispatchQueue? { get }
    /// The work-item flags of the hop to `queue`.
    var flags: DispatchWorkItemFlags? { get }
    /// Takes the body out of the link, runs it with `value` and resolves the link with what it returns — or,
    /// for `then`, follows what it returns.
    func run(_ value: Input)
    /// Drops the body unrun: the input rejected.
    func discardBody()
}

extension ChainLink {
    /// The input's result: a value runs the body (on ``queue`` if there is one); an error rejects the link at
    /// once, without a queue hop (as in PromiseKit).
    @inlinable
    package func receive(_ result: Result<Input>) {
        switch result {
        case .fulfilled(let value):
            guard let queue else { return run(value) }
            dispatch(on: queue, flags: flags) { self.run(value) }
        case .rejected(let error):
            discardBody()
            resolveInHandler(.rejected(error))
        }
    }
}

extension Thenable {
    /// Adds `link`'s handler to this thenable and returns the link.
    @inlinable
    func link<Link: ChainLink>(_ link: Link) -> Link where Link.Input == T {
        pipe { [link] in link.receive($0) }
        return link
    }
}

/// A promise made by `recover` or `catch`, which holds the step's body until it runs, as a ``ChainLink`` does; its
/// body runs for a rejection its policy handles — on ``queue``, if there is one — and for nothing else: a value, or
/// an error the policy skips, passes on at once (``passOn(_:)``), without a queue hop, and the body is dropped unrun.
@usableFromInline
package protocol RejectionLink: Box {
    /// The type of the input's value.
    associatedtype Input

    /// Where the body runs: a queue, or `nil` for inline on the resolving thread.
    var queue: DispatchQueue? { get }
    /// The work-item flags of the hop to `queue`.
    var flags: DispatchWorkItemFlags? { get }
    /// Which errors run the body.
    var policy: CatchPolicy { get }
    /// Takes the body out of the link, runs it with `error` and resolves the link with what comes of it.
    func run(_ error: Error)
    /// Drops the body unrun and resolves the link for `result`, which the body does not handle.
    func passOn(_ result: Result<Input>)
}

extension RejectionLink {
    /// The input's result, from the handler on the input (which captures only this link).
    @inlinable
    package func receive(_ result: Result<Input>) {
        guard case .rejected(let error) = result, policy.handles(error) else { return passOn(result) }
        guard let queue else { return run(error) }
        dispatch(on: queue, flags: flags) { self.run(error) }
    }
}

/// Calls a link's body, taken out of the link, with `value`: the body — and what it captured — is released before
/// this returns, so before the link resolves. Cancellable's chain steps call it too.
@inlinable
package func callOnce<Input, Output>(
    _ body: consuming ((Input) throws -> Output)?,
    with value: Input
) throws -> Output {
    try body.unsafelyUnwrapped(value)
}

/// ``callOnce(_:with:)``, its error as a rejection.
@inlinable
func call<Input, Output>(_ body: consuming ((Input) throws -> Output)?, with value: Input) -> Result<Output> {
    do {
        return .fulfilled(try callOnce(consume body, with: value))
    } catch {
        return .rejected(error)
    }
}

/// ``call(_:with:)`` for a guarantee's body, which cannot throw.
@inlinable
func call<Input, Output>(_ body: consuming ((Input) -> Output)?, with value: Input) -> Output {
    body.unsafelyUnwrapped(value)
}

/// `map` and `done` (a map to `Void`).
@usableFromInline
package final class MapLink<Input, Output>: Promise<Output>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Input) throws -> Output)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Input) throws -> Output) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Input) {
        resolveInHandler(call(body.take(), with: value))
    }

    @inlinable
    package func discardBody() { body = nil }
}

/// `ensure`: runs the body whichever way the input resolves — on the queue, if there is one, for a rejection too —
/// then passes the input's result on. Not a ``ChainLink``: those run their body for a value only. The same rules
/// hold: the body runs once, and is released before the link resolves.
@usableFromInline
package final class EnsureLink<Value>: Promise<Value> {
    @usableFromInline
    @exclusivity(unchecked)
    var body: (() -> Void)?
    @usableFromInline
    let queue: DispatchQueue?
    @usableFromInline
    let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping () -> Void) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    /// The input's result, from the handler on the input (which captures only this link).
    @inlinable
    func receive(_ result: Result<Value>) {
        guard let queue else { return finish(result) }
        dispatch(on: queue, flags: flags) { self.finish(result) }
    }

    @inlinable
    func finish(_ result: Result<Value>) {
        // Taken out of the link: what it captured is released when this scope ends, before the link resolves. (Not
        // `unsafelyUnwrapped` on the optional: for this function type it made an allocation per call.)
        if let body = body.take() {
            body()
        }
        resolveInHandler(result)
    }
}

/// `recover`: follows the thenable the body returns for a rejection its policy handles; the link itself rejects with
/// ``PMKError/returnedSelf``. The body is released before the link resolves.
@usableFromInline
package final class RecoverLink<Next: Thenable>: Promise<Next.T>, RejectionLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Error) throws -> Next)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?
    @usableFromInline
    package let policy: CatchPolicy

    @inlinable
    init(
        on queue: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        policy: CatchPolicy,
        _ body: @escaping (Error) throws -> Next
    ) {
        self.body = body
        self.queue = queue
        self.flags = flags
        self.policy = policy
        super.init(state: nil)
    }

    @inlinable
    package func run(_ error: Error) {
        let next: Next
        do {
            // Called here, not through `call(_:with:)`: passing a body that takes `Error` to a generic parameter
            // wraps it in a reabstraction thunk, an allocation per call. Taken out of the link, it is released at
            // the end of this scope, before the link resolves.
            guard let body = body.take() else { return }
            next = try body(error)
        } catch {
            return resolveInHandler(.rejected(error))
        }
        guard next !== self else { return resolveInHandler(.rejected(PMKError.returnedSelf)) }
        next.pipe { [self] in resolveInHandler($0) }
    }

    @inlinable
    package func passOn(_ result: Result<Next.T>) {
        body = nil
        resolveInHandler(result)
    }
}

/// `catch`: the guarantee a ``PMKFinalizer`` holds, which resolves once the body has run for a rejection its policy
/// handles, or at once for a value or a skipped error. The body is released before it resolves.
@usableFromInline
package final class CatchLink<Input>: Guarantee<Void>, RejectionLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Error) -> Void)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?
    @usableFromInline
    package let policy: CatchPolicy

    @inlinable
    init(
        on queue: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        policy: CatchPolicy,
        _ body: @escaping (Error) -> Void
    ) {
        self.body = body
        self.queue = queue
        self.flags = flags
        self.policy = policy
        super.init(state: nil)
    }

    @inlinable
    package func run(_ error: Error) {
        // Taken out of the link: released at the end of this scope, before the guarantee resolves.
        if let body = body.take() {
            body(error)
        }
        resolveInHandler(.fulfilled(()))
    }

    @inlinable
    package func passOn(_ result: Result<Input>) {
        body = nil
        resolveInHandler(.fulfilled(()))
    }
}

/// `get`: runs the body, then passes the value on.
@usableFromInline
package final class GetLink<Value>: Promise<Value>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Value) throws -> Void)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Value) throws -> Void) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Value) {
        switch call(body.take(), with: value) {
        case .fulfilled: resolveInHandler(.fulfilled(value))
        case .rejected(let error): resolveInHandler(.rejected(error))
        }
    }

    @inlinable
    package func discardBody() { body = nil }
}

/// `compactMap`: a `nil` from the body rejects with ``PMKError/compactMap(_:_:)``.
@usableFromInline
package final class CompactMapLink<Input, Output>: Promise<Output>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Input) throws -> Output?)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Input) throws -> Output?) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Input) {
        switch call(body.take(), with: value) {
        case .fulfilled(let transformed?): resolveInHandler(.fulfilled(transformed))
        case .fulfilled(nil): resolveInHandler(.rejected(PMKError.compactMap(value, Output.self)))
        case .rejected(let error): resolveInHandler(.rejected(error))
        }
    }

    @inlinable
    package func discardBody() { body = nil }
}

/// `then`: follows the thenable the body returns; the link itself rejects with ``PMKError/returnedSelf``.
@usableFromInline
package final class ThenLink<Input, Next: Thenable>: Promise<Next.T>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Input) throws -> Next)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Input) throws -> Next) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Input) {
        switch call(body.take(), with: value) {
        case .fulfilled(let next) where next === self: resolveInHandler(.rejected(PMKError.returnedSelf))
        case .fulfilled(let next): next.pipe { [self] in resolveInHandler($0) }
        case .rejected(let error): resolveInHandler(.rejected(error))
        }
    }

    @inlinable
    package func discardBody() { body = nil }
}

/// A guarantee's `map` and `done` (a map to `Void`).
@usableFromInline
package final class GuaranteeMapLink<Input, Output>: Guarantee<Output>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Input) -> Output)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Input) -> Output) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Input) {
        resolveInHandler(.fulfilled(call(body.take(), with: value)))
    }

    @inlinable
    package func discardBody() { body = nil }
}

/// A guarantee's `get`: runs the body, then passes the value on.
@usableFromInline
package final class GuaranteeGetLink<Value>: Guarantee<Value>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Value) -> Void)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Value) -> Void) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Value) {
        call(body.take(), with: value)
        resolveInHandler(.fulfilled(value))
    }

    @inlinable
    package func discardBody() { body = nil }
}

/// A guarantee's `then`: follows the guarantee the body returns.
@usableFromInline
package final class GuaranteeThenLink<Input, Output>: Guarantee<Output>, ChainLink {
    @usableFromInline
    @exclusivity(unchecked)
    var body: ((Input) -> Guarantee<Output>)?
    @usableFromInline
    package let queue: DispatchQueue?
    @usableFromInline
    package let flags: DispatchWorkItemFlags?

    @inlinable
    init(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (Input) -> Guarantee<Output>) {
        self.body = body
        self.queue = queue
        self.flags = flags
        super.init(state: nil)
    }

    @inlinable
    package func run(_ value: Input) {
        call(body.take(), with: value).pipe { [self] in resolveInHandler($0) }
    }

    @inlinable
    package func discardBody() { body = nil }
}

// As safe to share as the promise or guarantee each link is (its state is behind the lock); the body is touched
// only by the one thread that runs it (see `ChainLink`).
extension MapLink: @unchecked Sendable where Output: Sendable {}
extension GetLink: @unchecked Sendable where Value: Sendable {}
extension EnsureLink: @unchecked Sendable where Value: Sendable {}
extension RecoverLink: @unchecked Sendable where Next.T: Sendable {}
extension CatchLink: @unchecked Sendable {}
extension CompactMapLink: @unchecked Sendable where Output: Sendable {}
extension ThenLink: @unchecked Sendable where Next.T: Sendable {}
extension GuaranteeMapLink: @unchecked Sendable where Output: Sendable {}
extension GuaranteeGetLink: @unchecked Sendable where Value: Sendable {}
extension GuaranteeThenLink: @unchecked Sendable where Output: Sendable {}
