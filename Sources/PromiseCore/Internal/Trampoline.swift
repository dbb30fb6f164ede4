#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Something whose handlers are ready to run: a promise box that has just been resolved.
/// A resolved box whose handlers are ready to run, and the function that runs them.
///
/// The function is formed where the box was sealed — in code specialised for the box's value type — and
/// takes the box as an argument, so it captures nothing (no allocation) and runs specialised. Calling a
/// protocol requirement on the box instead would reach the unspecialised generic implementation, which pays
/// generic-metadata lookups on every link of a chain.
@usableFromInline
struct ReadyBox {
    @usableFromInline
    let box: AnyObject
    @usableFromInline
    let drain: (AnyObject) -> Void

    @inlinable
    init(_ box: AnyObject, drain: @escaping (AnyObject) -> Void) {
        self.box = box
        self.drain = drain
    }
}

/// Runs promise handlers in a loop instead of by recursion.
///
/// When a handler resolves the next promise of a chain, that promise is pushed here and drained after
/// the current handler returns, so a chain of a million `on: nil` links uses constant stack depth (SwiftNIO
/// does the same with `CallbackList._run()`). A promise resolved by user code (a `Resolver`, a
/// `Guarantee`'s resolve closure) drains at once, so `on: nil` handlers still run synchronously — just
/// not recursively.
///
/// There is one trampoline per thread; it is only ever touched by its own thread.
@usableFromInline
final class Trampoline {
    private struct State {
        var stack: [ReadyBox] = []
        var isDraining = false
    }

    // Behind a pointer rather than in stored properties: a class's stored properties are checked for
    // exclusive access at run time, on every access, and this state is touched on every resolution. Only the
    // owning thread ever touches it.
    private let state: UnsafeMutablePointer<State>

    private init() {
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The calling thread's trampoline.
    @usableFromInline
    static var current: Trampoline {
        if let pointer = pthread_getspecific(trampolineKey) {
            return Unmanaged<Trampoline>.fromOpaque(pointer).takeUnretainedValue()
        }
        let trampoline = Trampoline()
        pthread_setspecific(trampolineKey, Unmanaged.passRetained(trampoline).toOpaque())
        return trampoline
    }

    /// Drains `box` and everything it resolves.
    ///
    /// - Parameter isChained: `true` when `box` was resolved by a library handler; if the thread is
    ///   already draining, the box is queued and this call returns at once.
    @usableFromInline
    func run(_ box: ReadyBox, isChained: Bool) {
        if isChained && state.pointee.isDraining {
            state.pointee.stack.append(box)
            return
        }
        let base = state.pointee.stack.count
        let wasDraining = state.pointee.isDraining
        state.pointee.isDraining = true
        var next: ReadyBox? = box
        while let item = next {
            let mark = state.pointee.stack.count
            item.drain(item.box)
            // Boxes resolved by one drain were pushed in handler order; reverse them so that popping
            // visits them in that order (depth first, like PromiseKit's recursion, without the stack).
            let count = state.pointee.stack.count
            if count - mark > 1 {
                state.pointee.stack[mark...].reverse()
            }
            next = count > base ? state.pointee.stack.removeLast() : nil
        }
        state.pointee.isDraining = wasDraining
    }
}

private let trampolineKey: pthread_key_t = {
    var key = pthread_key_t()
    #if canImport(Darwin)
    let status = pthread_key_create(&key) { pointer in
        Unmanaged<Trampoline>.fromOpaque(pointer).release()
    }
    #else
    let status = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<Trampoline>.fromOpaque(pointer).release()
    }
    #endif
    precondition(status == 0, "Internal inconsistency: pthread_key_create failed (\(status))")
    return key
}()
