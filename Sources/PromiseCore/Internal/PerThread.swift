#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// One value of `State` per thread, made on the thread's first use and destroyed when the thread exits: the
/// storage of the per-thread loops that replace recursion (PromiseCore's `Trampoline`, Cancellable's
/// `CancelPropagation`).
///
/// The value is reached through a pointer: a class's stored properties are checked for exclusive access at
/// run time on every access, and these loops touch their state on every resolution or cancellation. Only the
/// owning thread ever touches its value.
package struct PerThread<State>: Sendable {
    @usableFromInline
    let key: ThreadKey
    @usableFromInline
    let make: @Sendable () -> State

    /// Keep the result in a global `let`: it creates a `pthread` key, which lives as long as the process.
    package init(_ make: @escaping @Sendable () -> State) {
        key = ThreadKey()
        self.make = make
    }

    /// The calling thread's value.
    @inlinable
    package var current: UnsafeMutablePointer<State> {
        if let slot = key.value {
            return Unmanaged<PerThreadSlot<State>>.fromOpaque(slot).takeUnretainedValue().value
        }
        let slot = PerThreadSlot(make())
        key.value = Unmanaged.passRetained(slot).toOpaque()
        return slot.value
    }
}

/// A `pthread` key whose value, an object retained for the thread, is released when the thread exits. The
/// platform calls stay out of line, so that no platform type appears in inlinable code.
@usableFromInline
struct ThreadKey: Sendable {
    /// `pthread_key_t`, widened (it is `UInt32` on Linux and `UInt` on Darwin).
    private let rawKey: UInt

    init() {
        var key = pthread_key_t()
        #if canImport(Darwin)
        let status = pthread_key_create(&key) { slot in
            Unmanaged<AnyObject>.fromOpaque(slot).release()
        }
        #else
        let status = pthread_key_create(&key) { slot in
            guard let slot else { return }
            Unmanaged<AnyObject>.fromOpaque(slot).release()
        }
        #endif
        precondition(status == 0, "Internal inconsistency: pthread_key_create failed (\(status))")
        rawKey = UInt(key)
    }

    /// The calling thread's value: a retained object, or nil before the first `set`.
    @usableFromInline
    var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(pthread_key_t(rawKey)) }
        nonmutating set { pthread_setspecific(pthread_key_t(rawKey), newValue) }
    }
}

/// What a thread's `pthread` key points to: owns the value, and destroys it when the thread exits.
@usableFromInline
final class PerThreadSlot<State> {
    @usableFromInline
    let value: UnsafeMutablePointer<State>

    @usableFromInline
    init(_ initial: State) {
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }
}
