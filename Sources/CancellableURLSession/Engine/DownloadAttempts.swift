import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transfers of one single-URL download: the first, and each retry after a fault that may pass
/// (``DownloadRetryPolicy``), all ending one promise. It starts each transfer, counts the pauses between them on the
/// download's `PromiseClock`, and stops whichever is current when the download is cancelled; its ``FileDownload``
/// asks it, at each transfer's ending, whether to try again.
///
/// A cancellation while it waits between two transfers ends the download itself (``FileDownload/endWaiting(_:)``): no
/// transfer is left to end it.
final class DownloadAttempts: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is behind `phase`'s lock; the rest is immutable.
    private enum Phase {
        /// A transfer runs; this stops it.
        case running(@Sendable () -> Void)
        /// Between two transfers; this stops the timer that starts the next one, and lets go of what it holds (`nil`
        /// while it is being scheduled).
        case waiting((@Sendable () -> Void)?)
        /// The timer fired; the next transfer is being made.
        case launching
        /// Cancelled: no transfer is started any more.
        case stopped
    }

    private let request: URLRequest
    private let download: FileDownload
    private let transport: Transport
    private let policy: DownloadRetryPolicy
    private let resolver: DecidingResolver<FileDownload.Outcome>
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let clock = PromiseClocks.current
    private let state = Locked<(phase: Phase, retries: Int)>((.launching, 0))

    init(
        _ request: URLRequest,
        into download: FileDownload,
        transport: Transport,
        policy: DownloadRetryPolicy,
        resolver: DecidingResolver<FileDownload.Outcome>,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        self.request = request
        self.download = download
        self.transport = transport
        self.policy = policy
        self.resolver = resolver
        self.progress = progress
    }

    /// Starts the current transfer: the request as the download sends it now (the rest of the bytes kept, after a
    /// retry).
    func start() {
        let request = download.prepare(request)
        let task: URLSessionTask
        let cancel: @Sendable () -> Void
        if let router = transport.router {
            if let progress {
                // Said before the request is sent, on the delegate queue: it comes before any of its callbacks —
                // unless the download was cancelled meanwhile: a stopped download reports nothing.
                transport.session.delegateQueue.addOperation { [self] in
                    let stopped = state.withLock { if case .stopped = $0.phase { true } else { false } }
                    if !stopped { progress(download.connecting) }
                }
            }
            task = transport.session.dataTask(with: request)
            cancel = router.register(
                TransferDelegate(FileTransferSink(download, resolver, progress: progress)),
                for: task
            )
        } else {
            let cancellation = TaskCancellation()
            let sink = FileTransferSink(download, resolver, progress: progress)
            task = transport.session.downloadTask(with: request) { location, response, error in
                cancellation.complete()
                sink.complete(downloadedTo: location, response: response, error: error)
            }
            cancel = { cancellation.cancel(task) }
        }
        let running = state.withLock { state -> Bool in
            guard case .launching = state.phase else { return false }
            state.phase = .running(cancel)
            return true
        }
        // Resumed even if it is cancelled at once: swift-corelibs-foundation never completes a task cancelled before
        // `resume()`, and its ending is what ends the download.
        task.resume()
        if !running { cancel() }
    }

    /// How long to wait before asking again after `error`, or `nil` if it is not a fault that may pass, the retries
    /// are spent, or the server asks to be left alone for longer than five minutes.
    func delay(after error: Error) -> TimeInterval? {
        let fault = TransientFault(error)
        guard fault.mayPass else { return nil }
        let retries = state.withLock { $0.retries }
        guard retries < policy.retries else { return nil }
        return policy.delay(before: retries + 1, retryAfter: fault.retryAfter)
    }

    /// The transfer that failed is to be retried: the download now waits, unless it was cancelled. Called by that
    /// transfer's ending, on the delegate queue, before it gets the file ready. `madeProgress`: the transfer wrote
    /// bytes, which starts the count of faults in a row again.
    ///
    /// - Returns: `false` if the download was cancelled: the ending goes on, and carries the cancellation out.
    func beginRetry(madeProgress: Bool) -> Bool {
        state.withLock { state in
            guard case .running = state.phase else { return false }
            state.retries = madeProgress ? 1 : state.retries + 1
            state.phase = .waiting(nil)
            return true
        }
    }

    /// The file is ready: the next transfer starts after `delay` seconds, unless the download is cancelled first.
    func scheduleRetry(after delay: TimeInterval) {
        // The timer reaches this object only through a box that stopping empties: Dispatch keeps a cancelled timer's
        // block until its deadline, which may be hours away. Scheduled outside the lock: a clock may run the work at
        // once (`ImmediateClock`).
        let fire = Locked<(@Sendable () -> Void)?>({ [self] in
            let fires = state.withLock { state -> Bool in
                guard case .waiting = state.phase else { return false }
                state.phase = .launching
                return true
            }
            if fires { start() }
        })
        let timer = clock.schedule(after: DispatchTimeInterval(clampingSeconds: delay)) {
            fire.withLock { $0.take() }?()
        }
        let stop: @Sendable () -> Void = {
            timer.cancel()
            _ = fire.withLock { $0.take() }
        }
        let cancelled = state.withLock { state -> Bool in
            if case .waiting(nil) = state.phase { state.phase = .waiting(stop) }
            // Fired already (the clock ran it at once) is fine; stopped: the cancellation ends the download.
            if case .stopped = state.phase { return true }
            return false
        }
        if cancelled { stop() }
        download.hooks.didScheduleRetry?()
    }

    /// The file could not be made ready for another transfer: the download ends with the fault after all.
    ///
    /// - Returns: whether the caller ends it; `false` if a cancellation came meanwhile, which ends it
    ///   (``FileDownload/endWaiting(_:)``).
    func abandonRetry() -> Bool {
        state.withLock { state in
            guard case .waiting = state.phase else { return false }
            state.phase = .running({})  // the transfer is over: a cancellation now finds the ending deciding
            return true
        }
    }

    /// The download was cancelled (before its promise rejects, on the cancelling thread): stops the current transfer,
    /// whose ending then carries the cancellation out; or, between two transfers, ends the download on the session's
    /// delegate queue.
    func cancel(_ reason: CancellationReason) {
        enum Then { case stop(@Sendable () -> Void), end((@Sendable () -> Void)?), nothing }
        let then = state.withLock { state -> Then in
            defer { state.phase = .stopped }
            switch state.phase {
            case .running(let cancel): return .stop(cancel)
            case .waiting(let timer): return .end(timer)
            case .launching, .stopped: return .nothing  // a transfer being made is stopped as it starts
            }
        }
        switch then {
        case .stop(let cancel):
            cancel()
        case .end(let stopTimer):
            stopTimer?()
            let (download, resolver) = (download, resolver)
            transport.session.delegateQueue.addOperation { download.endWaiting(resolver) }
        case .nothing:
            break
        }
    }
}
