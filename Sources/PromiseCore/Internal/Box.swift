public import Dispatch

/// The state of one promise — its lock, its result once resolved, its handlers while pending — stored in the
/// promise object itself (`Promise` and `Guarantee` conform), so a promise is one allocation.
///
/// One verb for the event: a promise is *resolved* (fulfilled or rejected), once.
///
/// Rules (every method below follows them):
/// - The state changes from pending to resolved exactly once, under the lock; the first resolution wins.
/// - Handlers never run under the lock. Resolving takes the lock once; the resolving thread then owns the
///   handler list it closed and drains it without the lock (no other thread touches the handlers after
///   `state.result` is set: late handlers see the result and run at once).
/// - `state`, the handlers, `hasResult` and `hasHandlers` are touched only under the lock, except by `drain()`
///   (single owner, see above) and by `deinit` (nobody else holds the promise).
@usableFromInline
package protocol Box<T>: AnyObject {
    associatedtype T

    /// Runs `body` under the promise's lock.
    func withStateLock<Value>(_ body: () -> Value) -> Value

    /// The result.
    var state: _PromiseState<T> { get set }
    /// Whether `state.result` is set, readable without knowing `T` (where a generic deinit asks).
    var hasResult: Bool { get set }
    /// Whether a handler was ever stored in the handlers, readable without knowing `T`.
    var hasHandlers: Bool { get set }
    /// The handlers, stored with their type erased (see ``_PromiseStorage``); ``withHandlers(_:)`` gives them
    /// their type back.
    var erasedHandlers: ErasedHandlerList { get set }
}

/// The part of a promise's state that depends on `T`: its result.
///
/// Not API: public only because it appears in `Promise`'s and `Guarantee`'s superclass (see
/// ``_PromiseStorage``); its members are internal to the package.
@frozen
public struct _PromiseState<T> {
    @usableFromInline
    var result: Result<T>?

    @inlinable
    package init(result: Result<T>?) {
        self.result = result
    }
}

/// The stored properties of `Promise` and `Guarantee`: the lock, the resolved flag and the state.
///
/// Not API: public only because a public class's superclass must be. It has no public members and cannot be
/// subclassed outside PromiseCore.
///
/// Why a superclass: a generic class's deinit is not specialised. A stored property whose type depends on the
/// class's generic parameter (`Result<T>?`, `_PromiseState<T>`) is destroyed after a run-time metadata lookup
/// (a hash-table probe) on every deallocation; a stored property whose type *is* a generic
/// parameter of the class (`State` here) is destroyed with metadata the class's own metadata already holds.
/// `Promise<T>: _PromiseStorage<_PromiseState<T>>` makes the state such a property, for free (as
/// `ManagedBuffer` does for its header).
///
/// The handlers are kept here, out of `State`, with their type erased (`HandlerList<Never>`, which has the layout
/// of every `HandlerList<T>`): a promise dropped while pending hands them to the release loop from its deinit
/// without knowing `T`, so without a metadata lookup for `HandlerList<T>` and `_PromiseState<T>` (the benchmark
/// package's race-cancel measures what that saves). Only ``Box/withHandlers(_:)`` views them with their type.
public class _PromiseStorage<State> {
    // The lock, the flags and the handlers come first, so that their offsets do not depend on `State` (the flags
    // sit in what would otherwise be padding: no promise grows). Every stored property is `final`: `Promise` and
    // `Guarantee` have subclasses (the chain steps' links), and a client module cannot see that none overrides a
    // property — without `final` every access from specialised client code is a call to a generic accessor
    // (`race` over 10k inputs measured 30% slower, callgrind showed the `state` getter called per input).
    /// The first stored property: on Darwin, ``PromiseLock`` finds its lock word there.
    @usableFromInline
    let lock: PromiseLock
    /// Whether the result is set; under the lock, like `state`.
    @usableFromInline
    @exclusivity(unchecked)
    package final var hasResult: Bool
    /// Whether a handler was ever stored while pending; under the lock, like `state`. A deinit reads it to
    /// decide, without generic metadata, whether there are handlers to release iteratively.
    @usableFromInline
    @exclusivity(unchecked)
    package final var hasHandlers: Bool
    /// What to log if the promise is deallocated while pending: set once, before the promise is shared, when a
    /// resolver or a guarantee's resolve closure is made for it (nothing else can resolve such a promise, so a
    /// pending one that goes away can never resolve).
    @usableFromInline
    @exclusivity(unchecked)
    package final var logIfDeallocatedPending: PendingDeallocationLog
    /// The handlers while pending, type-erased; under the lock, like `state`.
    @usableFromInline
    @exclusivity(unchecked)
    package final var erasedHandlers: ErasedHandlerList
    /// Only touched under `lock` (or by its single owner, see `Box`), which already makes every access
    /// exclusive: the run-time exclusivity check a class property gets on every access is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    package final var state: State

    @inlinable
    package init(hasResult: Bool, state: State) {
        lock = PromiseLock()
        self.hasResult = hasResult
        hasHandlers = false
        logIfDeallocatedPending = .none
        erasedHandlers = ErasedHandlerList()
        self.state = state
    }

    // The deinit of every promise and guarantee. It reads two flags and, only for a promise dropped while pending
    // with handlers, the handlers: nothing whose type depends on `State`, so no generic metadata. Those handlers
    // are released in a loop rather than by nested deinits.
    deinit {
        guard !hasResult else { return }
        if logIfDeallocatedPending != .none {
            logDeallocatedPending()
        }
        if hasHandlers {
            releaseHandlersIteratively()
        }
    }

    /// Logs that this promise, which only its resolver could resolve, was deallocated pending.
    private func logDeallocatedPending() {
        let site = noteDeallocatedPending()
        switch logIfDeallocatedPending {
        case .promise: log(.pendingPromiseDeallocated, createdAt: site)
        case .guarantee: log(.pendingGuaranteeDeallocated, createdAt: site)
        case .none: break
        }
    }

    @inlinable
    @inline(__always)
    package final func withStateLock<Value>(_ body: () -> Value) -> Value {
        lock.withLock(in: self, body)
    }

    /// Whether the promise is resolved. Nothing here depends on `State`, so it needs no generic metadata: a
    /// generic deinit can ask too.
    @usableFromInline
    package final var isResolvedWithoutMetadata: Bool {
        lock.withLock(in: self) { hasResult }
    }

    /// Called by the deinit when the promise is dropped while pending with handlers: each handler may hold the next
    /// promise of a chain, whose deinit would release *its* handlers, and so on — one nested `deinit` per
    /// link. The handlers are handed to the thread's ``Trampoline`` instead, which releases nested ones in a
    /// loop (constant stack, whatever the chain's length). Nothing here depends on `State`: no metadata lookup.
    private func releaseHandlersIteratively() {
        var handlers = ErasedHandlerList()
        swap(&handlers, &erasedHandlers)
        Trampoline.current.release(consume handlers)
    }
}

/// What a promise logs if it is deallocated while pending (see ``_PromiseStorage/logIfDeallocatedPending``).
@usableFromInline
package enum PendingDeallocationLog: UInt8 {
    /// Nothing: the promise is resolved by the library (a chain step, a combinator, a cancellable promise).
    case none
    /// ``LogEvent/pendingPromiseDeallocated``: a promise made with a ``Resolver``.
    case promise
    /// ``LogEvent/pendingGuaranteeDeallocated``: a guarantee made with a resolve closure.
    case guarantee
}

extension Box {
    /// The result, or `nil` while pending.
    @inlinable
    package var lockedResult: Result<T>? {
        withStateLock { state.result }
    }

    /// Calls `handler` with the result: later if pending, now (on this thread) if already resolved.
    @inlinable
    package func append(_ handler: @escaping Handler<T>) {
        let result: Result<T>? = withStateLock {
            if let result = state.result {
                return result
            }
            withHandlers { $0.append(handler) }
            hasHandlers = true
            return nil
        }
        if let result {
            handler(result)
        }
    }

    /// Resolves the promise from user code (a resolver, a guarantee's resolve closure, a cancellation); its
    /// handlers run before this returns. Later calls are ignored.
    @inlinable
    package func resolve(_ result: Result<T>) {
        resolve(result, inHandler: false)
    }

    /// Resolves the promise from inside a library handler; its handlers run on the thread's trampoline, after
    /// the current handler returns.
    @inlinable
    package func resolveInHandler(_ result: Result<T>) {
        resolve(result, inHandler: true)
    }

    /// Resolves the promise unless it is resolved already: the one place where races to resolve a promise
    /// are decided (Cancellable's `cancel()` against a fulfillment included).
    ///
    /// - Parameter inHandler: `true` when called from inside a library handler (see ``Trampoline``).
    /// - Returns: whether this call resolved the promise.
    @inlinable
    @discardableResult
    package func resolve(_ result: Result<T>, inHandler: Bool) -> Bool {
        let (isFirst, hasHandlers): (Bool, Bool) = withStateLock {
            guard !hasResult else { return (false, false) }
            state.result = result
            hasResult = true
            return (true, self.hasHandlers)
        }
        if hasHandlers {
            Trampoline.current.run(ReadyBox(self) { unsafeDowncast($0, to: Self.self).drain() }, inHandler: inHandler)
        }
        return isFirst
    }

    @inlinable
    package func drain() {
        // Single owner: only the thread whose `resolve` set the result gets here, once (see the type's rules).
        var handlers = HandlerList<T>()
        withHandlers { swap(&handlers, &$0) }  // a move: no retain and release of every handler
        handlers.run(with: state.result.unsafelyUnwrapped)
    }

    /// Runs `body` on the handlers, with their type. The caller holds the lock, or is their single owner.
    ///
    /// `HandlerList<T>` and the stored `HandlerList<Never>` have one layout: an optional closure and an array of
    /// closures, whatever the closures' parameter type (a closure is a function pointer and a context; a generic
    /// struct stores it the same way for every `T`). The handlers are only ever called through this typed view.
    @inlinable
    @inline(__always)
    package func withHandlers<Value>(_ body: (inout HandlerList<T>) -> Value) -> Value {
        withUnsafeMutablePointer(to: &erasedHandlers) { erased in
            erased.withMemoryRebound(to: HandlerList<T>.self, capacity: 1) { body(&$0.pointee) }
        }
    }
}

/// Runs `body` on `queue`, or inline when `queue` is `nil` (PromiseKit's `on: nil`).
@inlinable
package func dispatch(on queue: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping () -> Void) {
    guard let queue else {
        body()
        return
    }
    let work = UncheckedSendable(body)
    if let flags {
        queue.async(flags: flags) { work.value() }
    } else {
        queue.async { work.value() }
    }
}

/// The queue a handler passed without `on:` runs on: `configured` (a queue of ``conf``) for a handler written
/// outside any actor, the main queue for one written on the main actor — which may use the main actor's state,
/// so it must run there whatever ``conf`` says. A handler written on another actor belongs to that actor and
/// cannot be run synchronously on it from a queue: that is a programming error, reported at the call.
///
/// - Parameters:
///   - configured: the queue of ``conf`` for this kind of handler.
///   - isolation: the actor the caller is isolated to (`#isolation`), or `nil`.
///   - method: the public method, for the error message.
@inlinable
package func defaultQueue(
    _ configured: DispatchQueue?,
    for isolation: (any Actor)?,
    calling method: StaticString
) -> DispatchQueue? {
    guard let isolation else { return configured }
    if isolation === MainActor.shared { return .main }
    wrongActor(isolation, calling: method)
}

@usableFromInline
func wrongActor(_ isolation: any Actor, calling method: StaticString) -> Never {
    preconditionFailure(
        "PromiseCore: `\(method)` was called without `on:` on actor \(type(of: isolation)). Its body belongs to that "
            + "actor, but the library runs handlers on dispatch queues, not on actors. Pass `on:` (the body then "
            + "runs off the actor and cannot use its state), or `await` the promise inside the actor."
    )
}
