import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cancels one URLSession task at most once, and never once the task has reported its completion.
///
/// swift-corelibs-foundation ends the process ("Trying to access a behaviour for a task that in not in the
/// registry") when a task's cancellation is carried out after the session has forgotten the task, which it does just
/// after the task's completion handler or `didCompleteWithError` returns. Its `cancel()` checks the task's state, then
/// fails the task in a second block on the task's own queue; the completion runs on the delegate queue, and the
/// session forgets the task in a block on the session's queue, which that second block does not come before. A
/// cancellation that meets the completion can therefore be carried out after the task is forgotten.
///
/// So a cancellation is carried out whole under this object's lock: `task.cancel()`, then, on
/// swift-corelibs-foundation, two reads of `task.priority`, each a `sync` on the task's queue, which return once
/// both of `cancel()`'s blocks have run (one read is enough where `cancel()` runs its first block at once; the second
/// covers versions that enqueue it). The completion marks itself here first, under the same lock: it waits for a
/// cancellation in progress, and a cancellation that comes after it leaves the task alone.
///
/// The same lock serialises the answers to URLSession's questions with the cancellation (see ``TransferDelegate``).
final class TaskCancellation: Sendable {
    private enum State {
        case running
        case cancelled
        case completed
    }

    private let state = Locked(State.running)

    /// Cancels `task`, unless it was cancelled already or has completed.
    func cancel(_ task: URLSessionTask) {
        state.withLock { state in
            guard case .running = state else { return }
            state = .cancelled
            task.cancel()
            #if canImport(FoundationNetworking)
            _ = task.priority
            _ = task.priority
            #endif
        }
    }

    /// Marks the task completed: from now on ``cancel(_:)`` does nothing. Called first thing in the completion.
    func complete() {
        state.withLock { state in
            if case .running = state { state = .completed }
        }
    }

    /// Runs `answer` — the completion handler of one of URLSession's questions — unless the task was cancelled.
    func ifNotCancelled(_ answer: () -> Void) {
        state.withLock { state in
            if case .running = state { answer() }
        }
    }
}
