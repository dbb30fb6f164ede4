#if canImport(Darwin)
public import Darwin
#else
public import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif
#endif

/// The lock inside every promise and every ``Locked`` value: the platform's cheapest non-recursive mutex,
/// stored inline — no allocation, no destruction.
///
/// - On Linux (and every non-Darwin platform) it is one 4-byte atomic word in the owning object; a thread that
///   finds it taken spins briefly, then parks on ``ParkingLot``.
/// - On Darwin, `Mutex` and `Atomic` need macOS 15 / iOS 18, so the lock is an `os_unfair_lock` word. It must not
///   move while it is used, and Swift gives a stored property no address of its own (`&property` may be a
///   temporary), so it is reached the way `ManagedBuffer` and swift-atomics' `ManagedAtomic` reach their storage:
///   from the object's address, `_getUnsafePointerToStoredProperties(owner)`. That is where the first stored
///   property of the object's root class lives, so **the lock must be the first stored property of the root class
///   of every object that owns one** (``_PromiseStorage``, ``Locked``, and Cancellable's cancellation state, whose
///   root class `_ResolutionArbiter` has no stored property). `PromiseLockLayoutTests` checks each owner on every
///   platform it runs on.
///
/// The only way in is ``withLock(in:_:)``, which takes the owner (non-throwing: a typed-throws closure would cost
/// a reabstraction thunk on every call); its closure must not run user code (handlers, cancel handlers,
/// `conf.logHandler`): decide under the lock, act after it is released.
@usableFromInline
package struct PromiseLock: ~Copyable {
    /// Where the lock of `owner` lives: its first stored property (see above).
    @inlinable
    @inline(__always)
    package static func address(in owner: AnyObject) -> UnsafeMutableRawPointer {
        _getUnsafePointerToStoredProperties(owner)
    }

    #if canImport(Darwin)
    /// The lock word. Never read or written as a Swift property after `init`: only through ``address(in:)``.
    @usableFromInline
    let word: os_unfair_lock

    @inlinable
    package init() {
        word = os_unfair_lock()
    }

    /// Runs `body` holding the lock of `owner`, the object this lock is the first stored property of.
    @inlinable
    @inline(__always)
    package func withLock<Value>(in owner: AnyObject, _ body: () -> Value) -> Value {
        let lock = Self.address(in: owner).assumingMemoryBound(to: os_unfair_lock.self)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        return body()
    }
    #else
    /// 0: unlocked; 1: locked; 2: locked, and a thread may be parked waiting for it.
    @usableFromInline
    let word: Atomic<UInt32>

    @inlinable
    package init() {
        word = Atomic(0)
    }

    /// Runs `body` holding the lock (`owner`, the object this lock is the first stored property of, is where
    /// Darwin finds its lock word; this platform's word is an `Atomic`, which has a stable address of its own).
    @inlinable
    @inline(__always)
    package func withLock<Value>(in owner: AnyObject, _ body: () -> Value) -> Value {
        if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            lockContended()
        }
        defer {
            if word.exchange(0, ordering: .releasing) == 2 {
                ParkingLot.unparkAll()
            }
        }
        return body()
    }

    /// The slow path (Drepper's futex mutex, parking on ``ParkingLot`` instead of a futex): spin briefly,
    /// then mark the lock contended and park until it is released.
    @usableFromInline
    func lockContended() {
        for _ in 0..<64 {
            if word.load(ordering: .relaxed) == 0,
                word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
            {
                return
            }
        }
        while word.exchange(2, ordering: .acquiring) != 0 {
            ParkingLot.park { word.load(ordering: .relaxed) == 2 }
        }
    }
    #endif
}

#if !canImport(Darwin)
/// Where threads wait for a contended ``PromiseLock``: one mutex and condition variable for the process.
///
/// Contention on a promise's lock is rare and brief (no user code runs under it), so one parking place is
/// enough. It is built from `pthread` primitives, which every sanitizer understands: the standard library's
/// `Mutex` parks in the kernel through an uninstrumented path, and ThreadSanitizer then reports the accesses it
/// protects as races.
@usableFromInline
enum ParkingLot {
    // nonisolated(unsafe): initialised once (a lazy global), then only used through the pthread calls, which
    // synchronise.
    private nonisolated(unsafe) static let place: UnsafeMutablePointer<(pthread_mutex_t, pthread_cond_t)> = {
        let place = UnsafeMutablePointer<(pthread_mutex_t, pthread_cond_t)>.allocate(capacity: 1)
        place.initialize(to: (pthread_mutex_t(), pthread_cond_t()))
        pthread_mutex_init(&place.pointee.0, nil)
        pthread_cond_init(&place.pointee.1, nil)
        return place
    }()

    /// Waits while `shouldWait()` holds (checked under the parking lot's mutex, so no wake-up is missed).
    static func park(while shouldWait: () -> Bool) {
        pthread_mutex_lock(&place.pointee.0)
        if shouldWait() {
            pthread_cond_wait(&place.pointee.1, &place.pointee.0)
        }
        pthread_mutex_unlock(&place.pointee.0)
    }

    /// Wakes every parked thread; each checks its own lock again.
    @usableFromInline
    static func unparkAll() {
        pthread_mutex_lock(&place.pointee.0)
        pthread_cond_broadcast(&place.pointee.1)
        pthread_mutex_unlock(&place.pointee.0)
    }
}
#endif
