import PromiseCore

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
/// So every cancellation rule (the Guarantees article) still holds: a promise is rejected before its `cancel()`
/// returns; its callbacks
/// run once, outside any lock, on the cancelling thread; everything upstream has been cancelled before the
/// outermost `cancel()` returns. (A `cancel()` made *inside* a cancel handler rejects its promise before it
/// returns, and what that cancels upstream follows right after the handler returns.)
///
/// Its state is per thread (``PerThread``); it is only ever touched by its own thread.
@usableFromInline
struct CancelPropagation {
    fileprivate struct Item {
        let callback: OnCancelEntry
        let reason: CancellationReason
    }

    fileprivate struct State {
        var stack: [Item] = []
        var isRunning = false
    }

    private let state: UnsafeMutablePointer<State>

    /// The calling thread's loop.
    @usableFromInline
    static var current: CancelPropagation {
        CancelPropagation(state: propagations.current)
    }

    /// Calls `callbacks` with `reason`, and whatever they hand over in turn, before returning — unless the
    /// thread is already in this loop, in which case they are queued and called after the current callback.
    @usableFromInline
    func run(_ callbacks: OnCancelList, reason: CancellationReason) {
        guard callbacks.first != nil else { return }
        push(callbacks, reason: reason)
        drain()
    }

    /// Calls `callbacks` with `reason`, and everything they hand over in turn, and only then `last` — how an
    /// `autoCancel` combinator cancels its inputs (their cancel handlers run) before it resolves itself.
    ///
    /// `last` comes after everything `callbacks` cancel also when the thread is already in this loop: it waits
    /// below them on the same stack.
    @usableFromInline
    func run(_ callbacks: OnCancelList, reason: CancellationReason, then last: @escaping CancellationState.OnCancel) {
        state.pointee.stack.append(Item(callback: .action(last), reason: reason))
        push(callbacks, reason: reason)
        drain()
    }

    private func push(_ callbacks: OnCancelList, reason: CancellationReason) {
        guard let first = callbacks.first else { return }
        for callback in callbacks.rest.reversed() {
            state.pointee.stack.append(Item(callback: callback, reason: reason))
        }
        state.pointee.stack.append(Item(callback: first, reason: reason))
    }

    /// Pops and calls callbacks until none is left, unless this thread is already doing so further down.
    private func drain() {
        guard !state.pointee.isRunning else { return }
        state.pointee.isRunning = true
        while let item = state.pointee.stack.popLast() {
            item.callback.run(item.reason)
        }
        state.pointee.isRunning = false
    }
}

/// Each thread's cancellation loop state.
private let propagations = PerThread { CancelPropagation.State() }
