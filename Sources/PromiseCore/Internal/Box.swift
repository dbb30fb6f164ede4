public import Dispatch

/// The state of one promise: its result once resolved, its handlers while pending.
@usableFromInline
package struct BoxState<T> {
    @usableFromInline
    var result: Result<T>?
    @usableFromInline
    var handlers: HandlerList<T>
    @inlinable
    init(result: Result<T>?) {
        self.result = result
        // Set here, not as a default value: a default value's initializer is not inlinable, and unspecialised
        // code pays a metadata lookup per promise.
        self.handlers = HandlerList()
    }
}

/// The storage shared by `Promise`, `Guarantee` and their resolvers: one lock and one `BoxState`, in one
/// allocation.
///
/// Rules (every method below follows them):
/// - The state changes from pending to resolved exactly once, under the lock; the first resolution wins.
/// - Handlers never run under the lock. Resolving takes the lock once; the resolving thread then owns the
///   handler list it sealed and drains it without the lock (no other thread touches `handlers` after
///   `result` is set: late handlers see the result and run at once).
@usableFromInline
package final class Box<T>: LockedBuffer<BoxState<T>> {
    @inlinable
    static func make(_ state: BoxState<T>) -> Box<T> {
        let buffer = Box<T>.create(minimumCapacity: 1) { _ in state }
        buffer.withUnsafeMutablePointerToElements { LockOperations.initialize($0) }
        return unsafeDowncast(buffer, to: Box<T>.self)
    }

    @inlinable
    package static func pending() -> Box<T> {
        make(BoxState(result: nil))
    }

    @inlinable
    package static func resolved(_ result: Result<T>) -> Box<T> {
        make(BoxState(result: result))
    }

    /// The result, or `nil` while pending.
    @inlinable
    package var result: Result<T>? {
        withLock { $0.result }
    }

    /// Calls `handler` with the result: later if pending, now (on this thread) if already resolved.
    @inlinable
    package func append(_ handler: @escaping Handler<T>) {
        let result: Result<T>? = withLock { state in
            if let result = state.result {
                return result
            }
            state.handlers.append(handler)
            return nil
        }
        if let result {
            handler(result)
        }
    }

    /// Resolves the box from user code; handlers run before this returns. Later calls are ignored.
    @inlinable
    package func resolve(_ result: Result<T>) {
        seal(result, isChained: false)
    }

    /// Resolves the box from inside a library handler; the handlers run on the thread's trampoline.
    @inlinable
    package func resolveChained(_ result: Result<T>) {
        seal(result, isChained: true)
    }

    /// Resolves the box unless it is resolved already: the one place where races to resolve a promise are
    /// decided (Cancellable's `cancel()` against a fulfilment included).
    ///
    /// - Parameter isChained: `true` when called from inside a library handler (see ``Trampoline``).
    /// - Returns: whether this call resolved the box.
    @inlinable
    @discardableResult
    package func seal(_ result: Result<T>, isChained: Bool) -> Bool {
        let (isFirst, hasHandlers): (Bool, Bool) = withLock { state in
            guard state.result == nil else { return (false, false) }
            state.result = result
            return (true, !state.handlers.isEmpty)
        }
        if hasHandlers {
            Trampoline.current.run(ReadyBox(self) { unsafeDowncast($0, to: Box<T>.self).drain() }, isChained: isChained)
        }
        return isFirst
    }

    @inlinable
    package func drain() {
        // Single owner: only the thread whose `seal` set the result gets here, once (see the type's rules).
        let (handlers, result) = withUnsafeMutablePointerToHeader { state in
            let handlers = state.pointee.handlers
            state.pointee.handlers = HandlerList()
            return (handlers, state.pointee.result.unsafelyUnwrapped)
        }
        handlers.run(with: result)
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
