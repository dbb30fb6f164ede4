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
/// A cancellation while it waits between two transfers ends the download itself (``endWaiting(_:)``): no transfer is
/// left to end it.
final class DownloadAttempts: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is behind `phase`'s lock; the rest is immutable.
    private enum Phase {
        /// A transfer runs; this stops it.
        case running(@Sendable () -> Void)
        /// Between two transfers; the timer starts the next one (`nil` while it is being scheduled).
        case waiting(PromiseTimer?)
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
            task = transport.session.dataTask(with: request)
            cancel = router.register(
                TransferDelegate(sink: .file(download, resolver), reportsUpload: false, progress: progress),
                for: task
            )
        } else {
            let cancellation = TaskCancellation()
            let (download, resolver, progress) = (download, resolver, progress)
            task = transport.session.downloadTask(with: request) { location, response, error in
                cancellation.complete()
                URLSession.completeDownload(download, resolver, location, response, error, progress: progress)
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

    /// How long to pause before asking again after `error`, or `nil` if it is not a fault that may pass, the retries
    /// are spent, or the server asks for a longer pause than five minutes.
    func pause(after error: Error) -> TimeInterval? {
        let fault = TransientFault(error)
        guard fault.mayPass else { return nil }
        let retries = state.withLock { $0.retries }
        guard retries < policy.retries else { return nil }
        return policy.pause(before: retries + 1, retryAfter: fault.retryAfter)
    }

    /// Asks again after `pause` seconds, unless the download was cancelled: called by the ending of the transfer that
    /// failed, on the delegate queue. `madeProgress`: that transfer wrote bytes, which starts the count of faults in a
    /// row again.
    ///
    /// - Returns: whether a retry is scheduled; `false`: the download ends with the fault.
    func retry(after pause: TimeInterval, madeProgress: Bool) -> Bool {
        let scheduling = state.withLock { state -> Bool in
            guard case .running = state.phase else { return false }
            state.retries = madeProgress ? 1 : state.retries + 1
            state.phase = .waiting(nil)
            return true
        }
        guard scheduling else { return false }
        // Scheduled outside the lock: a clock may run the work at once (`ImmediateClock`).
        let timer = clock.schedule(after: DispatchTimeInterval(clampingSeconds: pause)) { [self] in
            let fires = state.withLock { state -> Bool in
                guard case .waiting = state.phase else { return false }
                state.phase = .launching
                return true
            }
            if fires { start() }
        }
        let stale = state.withLock { state -> Bool in
            guard case .waiting(nil) = state.phase else { return !isWaitingOrLaunching(state.phase) }
            state.phase = .waiting(timer)
            return false
        }
        if stale { timer.cancel() }
        download.hooks.didScheduleRetry?()
        return true
    }

    private func isWaitingOrLaunching(_ phase: Phase) -> Bool {
        switch phase {
        case .waiting, .launching, .running: true
        case .stopped: false
        }
    }

    /// The download was cancelled (before its promise rejects, on the cancelling thread): stops the current transfer,
    /// whose ending then carries the cancellation out; or, between two transfers, ends the download on the session's
    /// delegate queue.
    func cancel(_ reason: CancellationReason) {
        enum Then { case stop(@Sendable () -> Void), end(PromiseTimer?), nothing }
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
        case .end(let timer):
            timer?.cancel()
            let (download, resolver) = (download, resolver)
            transport.session.delegateQueue.addOperation { download.endWaiting(resolver) }
        case .nothing:
            break
        }
    }
}

/// Whether a single-URL transfer's fault may pass, and how long its server asked to be left alone: the faults a
/// segmented download forgives a mirror (``MirrorDropReason/isTransient``).
struct TransientFault {
    let mayPass: Bool
    let retryAfter: TimeInterval?

    init(_ error: Error) {
        if let status = error as? HTTPStatusError {
            mayPass = MirrorDropReason.status(status.statusCode).isTransient
            retryAfter = RangeAnswer(status.response).retryAfter
        } else if error is URLError {
            mayPass = MirrorDropReason.failure(of: error).isTransient
            retryAfter = nil
        } else {
            mayPass = false
            retryAfter = nil
        }
    }
}
