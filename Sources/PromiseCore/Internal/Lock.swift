#if canImport(Darwin)
package import Darwin
#elseif canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
package import Musl
#elseif canImport(Android)
package import Android
#else
#error("PromiseCore needs a platform lock: Darwin, Glibc, Musl or Android.")
#endif

/// The platform's cheapest non-recursive mutex.
///
/// It is stored as the tail element of a `ManagedBuffer` (see ``LockedBuffer``), so that it has a stable
/// address and shares one allocation with the state it protects.
#if canImport(Darwin)
package typealias LockPrimitive = os_unfair_lock
#else
package typealias LockPrimitive = pthread_mutex_t
#endif

/// Operations on a ``LockPrimitive`` that lives at a stable address.
enum LockOperations {
    static func initialize(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #else
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let status = pthread_mutex_init(lock, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "Internal inconsistency: pthread_mutex_init failed (\(status))")
        #endif
    }

    static func destroy(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        lock.deinitialize(count: 1)
        #else
        pthread_mutex_destroy(lock)
        #endif
    }

    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        #else
        let status = pthread_mutex_lock(lock)
        assert(status == 0, "Internal inconsistency: pthread_mutex_lock failed (\(status))")
        #endif
    }

    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        os_unfair_lock_unlock(lock)
        #else
        let status = pthread_mutex_unlock(lock)
        assert(status == 0, "Internal inconsistency: pthread_mutex_unlock failed (\(status))")
        #endif
    }
}
