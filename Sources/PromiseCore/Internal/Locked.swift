/// A value protected by a lock, for state that is not a promise's own (combinators, configuration,
/// cancellation state).
@usableFromInline
package final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched through `withLock`.
    /// The first stored property: on Darwin, ``PromiseLock`` finds its lock word there.
    @usableFromInline
    let lock: PromiseLock
    /// Only touched under `lock`, which already makes every access exclusive: the run-time exclusivity check
    /// a class property gets on every access is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    var state: State

    @inlinable
    package init(_ initialState: State) {
        lock = PromiseLock()
        state = initialState
    }

    /// Runs `body` with the state, under the lock. `body` must not run user code.
    @inlinable
    package func withLock<Value>(_ body: (inout State) -> Value) -> Value {
        lock.withLock(in: self) { body(&state) }
    }
}
