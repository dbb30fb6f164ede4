#if canImport(Darwin)
public import Darwin
#elseif canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
public import Musl
#elseif canImport(Android)
public import Android
#else
#error("PromiseCore needs a platform lock: Darwin, Glibc, Musl or Android.")
#endif

/// The platform's cheapest non-recursive mutex.
///
/// It is stored as the tail element of a `ManagedBuffer` (see ``LockedBuffer``), so that it has a stable
/// address and shares one allocation with the state it protects.
#if canImport(Darwin)
@usableFromInline
package typealias LockPrimitive = os_unfair_lock
#else
@usableFromInline
package typealias LockPrimitive = pthread_mutex_t
#endif

/// Operations on a ``LockPrimitive`` that lives at a stable address.
@usableFromInline
enum LockOperations {
    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #else
        // The default mutex type, as PTHREAD_MUTEX_INITIALIZER makes: it owns no resources, so it needs no
        // pthread_mutex_destroy (see LockedBuffer). Debug builds check for misuse instead.
        #if DEBUG
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        let status = pthread_mutex_init(lock, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "Internal inconsistency: pthread_mutex_init failed (\(status))")
        #elseif canImport(Glibc)
        // glibc's PTHREAD_MUTEX_INITIALIZER is all zeros: a zeroed mutex is a default mutex, without the call.
        lock.initialize(to: pthread_mutex_t())
        #else
        let status = pthread_mutex_init(lock, nil)
        precondition(status == 0, "Internal inconsistency: pthread_mutex_init failed (\(status))")
        #endif
        #endif
    }

    @usableFromInline
    static func lock(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        #else
        let status = pthread_mutex_lock(lock)
        assert(status == 0, "Internal inconsistency: pthread_mutex_lock failed (\(status))")
        #endif
    }

    @usableFromInline
    static func unlock(_ lock: UnsafeMutablePointer<LockPrimitive>) {
        #if canImport(Darwin)
        os_unfair_lock_unlock(lock)
        #else
        let status = pthread_mutex_unlock(lock)
        assert(status == 0, "Internal inconsistency: pthread_mutex_unlock failed (\(status))")
        #endif
    }
}
