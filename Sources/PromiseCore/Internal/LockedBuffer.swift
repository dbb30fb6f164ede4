/// State and the lock that protects it, in one allocation.
///
/// The only way in is ``withLock(_:)``; the closure must not run user code (handlers, cancel handlers,
/// `conf.logHandler`): decide under the lock, act after it is released.
///
/// `ManagedBuffer` is not `Sendable`, so neither is this; owners that share it between threads say why that
/// is safe (every access to `header` goes through the lock, except where `Box.drain()` documents a
/// single-owner rule) and carry it across `@Sendable` boundaries in an ``UncheckedSendable``.
@usableFromInline
package class LockedBuffer<State>: ManagedBuffer<State, LockPrimitive> {
    // No deinit destroys the lock: neither `os_unfair_lock` nor a default glibc/musl/bionic `pthread_mutex_t`
    // owns resources, and a generic class's deinit runs unspecialised, paying generic-metadata lookups on every
    // promise. `LockOperations.initialize` uses the default mutex type in release builds for this reason.

    @inlinable
    package final func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { state, lock in
            LockOperations.lock(lock)
            defer { LockOperations.unlock(lock) }
            return try body(&state.pointee)
        }
    }
}

/// A value protected by a lock, for state that is not a promise's own (combinators, configuration).
@usableFromInline
package final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `buffer` is only touched through `withLock`.
    @usableFromInline
    let buffer: LockedBuffer<State>

    @inlinable
    package init(_ initialState: State) {
        let buffer = LockedBuffer<State>.create(minimumCapacity: 1) { _ in initialState }
        buffer.withUnsafeMutablePointerToElements { LockOperations.initialize($0) }
        self.buffer = unsafeDowncast(buffer, to: LockedBuffer<State>.self)
    }

    @inlinable
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try buffer.withLock(body)
    }
}
