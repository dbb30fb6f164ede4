/// A promise that has just been resolved, whose handlers are ready to run, and the function that runs them.
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

/// The calling thread's two loops that replace recursion along a chain: resolving and releasing.
///
/// - **Resolve.** When a handler resolves the next promise of a chain, that promise is pushed here and
///   drained after the current handler returns, so a chain of a million `on: nil` links uses constant stack
///   depth (SwiftNIO does the same with `CallbackList._run()`). A promise resolved by user code (a `Resolver`,
///   a `Guarantee`'s resolve closure) drains at once, so `on: nil` handlers still run synchronously — just not
///   recursively.
/// - **Release.** A promise dropped while pending hands its handlers to ``release(_:)``; releasing them may
///   drop the next promise of the chain, whose handlers are queued in turn and released by the outermost
///   call, one after another.
///
/// (The third direction, cancellation, has its own loop in Cancellable: `CancelPropagation`.)
///
/// Its state is per thread (``PerThread``); it is only ever touched by its own thread.
@usableFromInline
struct Trampoline {
    fileprivate struct State {
        var stack: [ReadyBox] = []
        var isDraining = false
        /// What nested releases handed over, released by the outermost ``release(_:)`` call.
        var releases: [Any] = []
        /// An empty list with capacity, kept between batches (see ``release(_:)``).
        var spareReleases: [Any] = []
        var isReleasing = false
    }

    private let state: UnsafeMutablePointer<State>

    /// The calling thread's trampoline.
    @usableFromInline
    static var current: Trampoline {
        Trampoline(state: trampolines.current)
    }

    /// Drains `box` and everything it resolves.
    ///
    /// - Parameter inHandler: `true` when `box` was resolved inside a library handler; if the thread is
    ///   already draining, the box is queued and this call returns at once.
    @usableFromInline
    func run(_ box: consuming ReadyBox, inHandler: Bool) {
        if inHandler && state.pointee.isDraining {
            state.pointee.stack.append(box)
            return
        }
        let base = state.pointee.stack.count
        let wasDraining = state.pointee.isDraining
        state.pointee.isDraining = true
        var next: ReadyBox? = consume box
        while let item = next.take() {
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

    /// Releases `payload` (what a dropped pending promise held: its handlers, or its cancel actions) without
    /// nesting: if the thread is already releasing, the payload is queued for the outermost call, which
    /// releases queued payloads one at a time until none is left.
    ///
    /// The caller must hand over its only reference (`consume`): a copy it kept would be released after this
    /// returns, outside the loop.
    package func release(_ payload: consuming Any) {
        state.pointee.releases.append(consume payload)
        guard !state.pointee.isReleasing else { return }
        state.pointee.isReleasing = true
        while !state.pointee.releases.isEmpty {
            // Take the whole list, then destroy it outside any mutation of the shared one: what the destruction
            // drops is appended to the (now empty) shared list, a different buffer. Popping one element at a
            // time is not safe here: the optimiser may destroy the popped element inside the inlined
            // `removeLast()`, before the array's count is written back, and a nested `release` would then
            // append to an array in the middle of being mutated.
            // The spare buffer is taken, not copied: a copy would leave it shared with `spareReleases`, and the
            // first nested release appended to it would then copy it (one allocation per batch).
            var batch: [Any] = []
            swap(&batch, &state.pointee.spareReleases)
            swap(&batch, &state.pointee.releases)
            Self.destroyElements(of: &batch)
            // Keep the emptied buffer for the next batch: a thread that releases one dropped promise after
            // another then allocates no list at all.
            state.pointee.spareReleases = batch
        }
        state.pointee.isReleasing = false
    }

    /// Destroys the payloads of a batch and keeps its capacity; out of line, so that nothing of it moves into the
    /// caller's access to the shared list (what the destruction drops is appended to that list, not to `batch`).
    @inline(never)
    private static func destroyElements(of batch: inout [Any]) {
        batch.removeAll(keepingCapacity: true)
    }
}

/// Each thread's trampoline state.
private let trampolines = PerThread { Trampoline.State() }

/// Releases what a promise dropped while pending held — its handlers, or (in Cancellable) its cancel
/// actions — in the calling thread's release loop instead of by nested deinits. See ``Trampoline/release(_:)``;
/// the caller hands over its only reference.
package func releaseWithoutRecursion(_ payload: consuming Any) {
    Trampoline.current.release(payload)
}
