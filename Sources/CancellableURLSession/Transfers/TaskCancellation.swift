import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cancels one URLSession task at most once, and never once the task has reported its completion.
///
/// swift-corelibs-foundation ends the process ("Trying to access a behaviour for a task that in not in the
/// registry") when it carries out a task's cancellation after the session has forgotten the task, which it does just
/// after the task's completion handler or `didCompleteWithError` returns. Its `cancel()` checks the task's state at
/// once but fails the task later, in a block on the task's own queue; and where the session has a URL cache, a data
/// task's cancellation waits for the cache's answer, long enough for the task to complete first (the library uses no
/// such task there: see `URLSession.withProgressReporting` and `taskIntoMemory`).
///
/// So the completion marks itself here first, and a cancellation that comes after it leaves the task alone; and a
/// cancellation is carried out whole under this object's lock — `task.cancel()`, then, on swift-corelibs-foundation,
/// two reads of `task.priority`, each a `sync` on the task's queue, which return once the blocks `cancel()` queued
/// there have run (one read where `cancel()` queues one block, as in Swift 6.3.1; two where it queues both) — so
/// that a completion meeting it waits until it has been carried out, and the session forgets the task only then.
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
