#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The calling thread's cancellation loop: how one `cancel()` reaches every promise it cancels — up a chain,
/// into the promise a `then` body returned, through round after round of a polling loop, into a combinator's
/// inputs — in constant stack.
///
/// Cancelling a promise rejects it at once, then hands its `OnCancel` callbacks here instead of calling them.
/// A callback that cancels another promise (a link's "cancel my upstream") rejects that one and hands *its*
/// callbacks here too; the outermost ``run(_:reason:)`` on the thread calls them, one at a time, until none is
/// left. The order is the one recursion would give: each promise's callbacks in the order they were added, and
/// everything a callback cancels before that promise's next callback (a stack, pushed in reverse, as the
/// resolve loop in PromiseCore's `Trampoline` does).
///
/// So every clause of SPEC §5 still holds: a promise is rejected before its `cancel()` returns; its callbacks
/// run once, outside any lock, on the cancelling thread; everything upstream has been cancelled before the
/// outermost `cancel()` returns. (A `cancel()` made *inside* a cancel handler rejects its promise before it
/// returns, and what that cancels upstream follows right after the handler returns.)
///
/// There is one per thread; it is only ever touched by its own thread.
@usableFromInline
final class CancelPropagation {
    private struct Item {
        let callback: CancellationState.OnCancel
        let reason: CancellationReason
    }

    private struct State {
        var stack: [Item] = []
        var isRunning = false
    }

    // Behind a pointer rather than in stored properties: a class's stored properties are checked for
    // exclusive access at run time on every access. Only the owning thread ever touches it.
    private let state: UnsafeMutablePointer<State>

    private init() {
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The calling thread's loop.
    @usableFromInline
    static var current: CancelPropagation {
        if let pointer = pthread_getspecific(propagationKey) {
            return Unmanaged<CancelPropagation>.fromOpaque(pointer).takeUnretainedValue()
        }
        let propagation = CancelPropagation()
        pthread_setspecific(propagationKey, Unmanaged.passRetained(propagation).toOpaque())
        return propagation
    }

    /// Calls `callbacks` with `reason`, and whatever they hand over in turn, before returning — unless the
    /// thread is already in this loop, in which case they are queued and called after the current callback.
    @usableFromInline
    func run(_ callbacks: OnCancelList, reason: CancellationReason) {
        guard let first = callbacks.first else { return }
        for callback in callbacks.rest.reversed() {
            state.pointee.stack.append(Item(callback: callback, reason: reason))
        }
        state.pointee.stack.append(Item(callback: first, reason: reason))
        guard !state.pointee.isRunning else { return }
        state.pointee.isRunning = true
        while let item = state.pointee.stack.popLast() {
            item.callback(item.reason)
        }
        state.pointee.isRunning = false
    }
}

private let propagationKey: pthread_key_t = {
    var key = pthread_key_t()
    #if canImport(Darwin)
    let status = pthread_key_create(&key) { pointer in
        Unmanaged<CancelPropagation>.fromOpaque(pointer).release()
    }
    #else
    let status = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<CancelPropagation>.fromOpaque(pointer).release()
    }
    #endif
    precondition(status == 0, "Internal inconsistency: pthread_key_create failed (\(status))")
    return key
}()
