import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Carries out a ``DownloadMachine``: sends the requests its schedule makes, writes the bytes it admits at their
/// offsets, watches for stalls, checks pieces and the complete file, and ends the download the way the machine says.
///
/// The machine, the file handles and the transfers' cancel closures are behind one lock. Requests are started and
/// cancelled outside it, as are the progress reports and the ending. URLSession delivers each transfer's callbacks
/// on the session's delegate queue, one at a time; the stall timer and a cancellation come from other threads.
///
/// A transfer's callbacks and the requests it sends are in `SegmentedDownloadEngine+Transfers.swift`; its ending —
/// checking the complete file, settling the promise, the resume data — in `SegmentedDownloadEngine+Ending.swift`. What
/// those files read is internal only because `private` does not reach across files.
final class SegmentedDownloadEngine: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is in `state`, behind its lock.
    struct State {
        var machine: DownloadMachine
        var handle: FileHandle?
        /// What stops each running request.
        var cancels: [Int: @Sendable () -> Void] = [:]
        /// Requests cancelled before their cancel closure was stored.
        var cancelledEarly: Set<Int> = []
        var resolver: DecidingResolver<SegmentedDownloadResult>?
        /// The next stall watch, on ``clock``.
        var watch: PromiseTimer?
        /// The download's speed, over every mirror's bytes written.
        var speed = TransferSpeed()
        /// What runs once the download has ended (``whenEnded(_:)``).
        var ended: (@Sendable () -> Void)?
        /// The error of the latest fault a transfer met — its own `URLError`, an ``HTTPStatusError`` with its body, a
        /// piece's ``DownloadIntegrityError`` —: what a single URL rejects with when its one mirror is dropped
        /// (``MirrorDropReason/singleURLError(recorded:validator:)``).
        var lastFault: Error?

        var schedule: SegmentSchedule { machine.schedule }

        /// Runs `step` on the machine, and closes the file as soon as the machine has stopped running: no byte is
        /// written after the step that stopped it.
        mutating func step<T>(_ step: (inout DownloadMachine) -> T) -> T {
            let result = step(&machine)
            if !machine.isRunning, let file = handle {
                try? file.close()
                handle = nil
            }
            return result
        }
    }

    let state: Locked<State>
    /// Where the requests run: held for as long as the download, with the app's session it stands for.
    private let transport: Transport
    var session: URLSession { transport.session }
    let router: TransferRouter
    let requests: [URLRequest]
    let partial: PartialFile
    let integrity: DownloadIntegrity?
    private let options: SegmentedDownloadOptions
    let progress: (@Sendable (SegmentedDownloadProgress) -> Void)?
    /// Receives a resumable download's resume data, or `nil`, once it ends; `nil` for a download that cannot pause.
    let resumeData: (@Sendable (SegmentedDownloadResumeData?) -> Void)?
    /// What the stall watch waits on: `PromiseClocks.current` when the download was made.
    private let clock: any PromiseClock
    /// How often the stall watch looks: a quarter of the stall timeout, from 20 ms to 1 s.
    private let interval: TimeInterval
    /// Hashes completed pieces off the lock (``DownloadIntegrity/pieces``); `nil` without piece digests.
    let checker: PieceChecker?
    /// Hashes the file as it is written, from its first segment on (``DownloadIntegrity/sha256``); `nil` without it.
    let digest: StreamingDigest?
    /// Whether an answer or a transfer's ending is reported as progress: a segmented download's mirrors change then
    /// (a mirror dropped, a retry counted); one URL reports its bytes, and the requests it sends (``start(_:)``).
    let reportsAnswersAndEndings: Bool

    init(
        transport: Transport,
        router: TransferRouter,
        requests: [URLRequest],
        partial: PartialFile,
        handle: FileHandle,
        schedule: SegmentSchedule,
        integrity: DownloadIntegrity?,
        options: SegmentedDownloadOptions,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)?,
        resumeData: (@Sendable (SegmentedDownloadResumeData?) -> Void)?
    ) {
        let machine = DownloadMachine(schedule: schedule, keepsBytes: resumeData != nil)
        let state = Locked(State(machine: machine, handle: handle))
        self.state = state
        self.resumeData = resumeData
        self.transport = transport
        self.router = router
        self.requests = requests
        self.partial = partial
        self.integrity = integrity
        self.options = options
        self.progress = progress
        clock = PromiseClocks.current
        interval = options.watchPeriod
        let open: @Sendable () throws -> FileHandle = { try partial.openForReading() }
        checker = integrity?.pieces.map { PieceChecker($0, open: open) }
        reportsAnswersAndEndings = !schedule.requests.isOneRequest
        // Its queued work is dropped once the download has stopped; a finishing download still needs it.
        digest =
            integrity?.sha256 == nil
            ? nil : StreamingDigest(isRunning: { state.withLock { !$0.machine.hasStopped } }, open: open)
    }

    /// The time on ``clock``, which measures speeds as it counts stalls and rests: a test's `TestClock` drives all of
    /// them.
    var now: TimeInterval { clock.elapsed }

    /// Sends the first requests and starts watching for stalls.
    func start(_ resolver: DecidingResolver<SegmentedDownloadResult>) {
        let (actions, complete) = state.withLock { state in
            state.resolver = resolver
            return (state.machine.begin(at: now), state.schedule.isComplete)
        }
        scheduleWatch()
        if !actions.isEmpty { reportConnecting() }
        perform(actions)
        if state.withLock({ $0.schedule.pieces != nil }) {
            // The pieces a resumed download kept whole are checked before they count, as any other piece: queued from
            // the delegate queue, not from the caller's thread. What they cost is what the download then does.
            session.delegateQueue.addOperation { [self] in
                state.withLock { state in
                    guard state.machine.isRunning, let total = state.schedule.total else { return }
                    queueCompletedPieces(overlapping: 0..<total, &state)
                }
                settle()
            }
        } else if complete {
            // A resumed download that kept every byte has nothing to fetch: it ends on the delegate queue, as it would
            // after its last byte.
            session.delegateQueue.addOperation { [self] in settle() }
        }
    }

    /// Reports that requests are on their way, with the bytes the file holds: before the first requests are sent, and
    /// before each request one URL sends again after a forgiven fault. Said on the delegate queue, before any callback
    /// of those requests; unless the download stopped meanwhile: a stopped download reports nothing.
    func reportConnecting() {
        guard let progress else { return }
        session.delegateQueue.addOperation { [self] in
            let snapshot = state.withLock { state in
                state.machine.isRunning
                    ? Self.progress(of: state.schedule, requests: requests, speed: state.speed) : nil
            }
            if let snapshot { progress(snapshot.with(phase: .connecting)) }
        }
    }

    /// Queues the pieces that the bytes `written` completed — every byte of each written, not verified yet — to be
    /// checked against their digests on the checker's queue, off the lock (``PieceChecker``). Under the lock.
    ///
    /// A piece being checked is not queued again; if `written` wrote some of its bytes again, its verdict is not
    /// trusted, and it is checked again once it is complete (``checked(_:_:)``).
    func check(_ written: Range<Int64>, _ state: inout State) {
        checker?.touch(written)
        queueCompletedPieces(overlapping: written, &state)
    }

    /// Queues the pieces overlapping `bytes` that are written whole and not verified yet, writing nothing: the verdict
    /// of a piece being checked stays trusted. (Touching them, as a write does, made a piece whose check was under way
    /// when a fresh download's start looked for kept pieces — late, on a loaded machine — be hashed twice.) Under the
    /// lock.
    func queueCompletedPieces(overlapping bytes: Range<Int64>, _ state: inout State) {
        guard let checker, let total = state.schedule.total else { return }
        checker.check(
            state.machine.completedPieces(overlapping: bytes),
            in: total,
            isRunning: { [weak self] in self?.state.withLock { $0.machine.isRunning } ?? false },
            verdict: { [weak self] piece, verdict in
                guard let self else { return }
                session.delegateQueue.addOperation { self.checked(piece, verdict) }
            }
        )
    }

    /// The verdict on `piece`, on the delegate queue: a piece that passed is final; one that failed is fetched again,
    /// and drops the mirror that wrote it; one that could not be read fails the download. Ignored once the download
    /// has stopped.
    private func checked(_ piece: Int, _ verdict: PieceChecker.Verdict) {
        var failure: Error?
        let actions = state.withLock { state -> [DownloadMachine.Action] in
            let holds = checker?.settle(piece) ?? false
            guard state.machine.isRunning, let pieces = state.schedule.pieces, let total = state.schedule.total
            else { return [] }
            // A piece written again meanwhile, or given back by a rollback (its bytes are to be written again), is
            // checked again once it is complete: the verdict is on bytes it may no longer hold.
            let bytes = pieces.range(of: piece, in: total)
            guard holds, state.machine.completedPieces(overlapping: bytes).contains(piece) else {
                queueCompletedPieces(overlapping: bytes, &state)
                return []
            }
            switch verdict {
            case .passed:
                return state.machine.piece(piece, passed: true, at: now)
            case .failed(let actual):
                state.lastFault = DownloadIntegrityError.pieceMismatch(
                    piece: piece,
                    expected: pieces.sha256[piece],
                    actual: actual
                )
                return state.machine.piece(piece, passed: false, at: now)
            case .unreadable(let error):
                failure = error
                return []
            }
        }
        perform(actions)
        if let failure { fail(failure) } else { settle() }
    }

    /// Looks for stalls again in ``interval``, unless the download has stopped.
    private func scheduleWatch() {
        let timer = clock.schedule(after: .nanoseconds(Int(interval * 1_000_000_000))) { [self] in
            // On the delegate queue, as every other event: an ending the watch brings about (every mirror stalled)
            // flushes, verifies and reports its phases there, never on the clock's thread.
            session.delegateQueue.addOperation { [self] in
                watch()
                scheduleWatch()
            }
        }
        let stopped = state.withLock { state in
            guard state.machine.isRunning else { return true }
            state.watch = timer
            return false
        }
        if stopped { timer.cancel() }
    }

    /// Stops the stall watch.
    private func stopWatching() {
        state.withLock { state in
            let watch = state.watch
            state.watch = nil
            return watch
        }?.cancel()
    }

    /// Drops mirrors whose requests stalled or are too slow.
    private func watch() {
        let actions = state.withLock { state in
            state.machine.tick(
                by: interval,
                stallTimeout: options.stallTimeout,
                minimumSpeed: options.minimumBytesPerSecond,
                at: now
            )
        }
        perform(actions)
        settle(reportingProgress: false)
    }

    // MARK: Carrying out

    func perform(_ actions: [DownloadMachine.Action], _ context: Context = Context()) {
        for action in actions {
            switch action {
            case .transfer(.start(let id, let mirror, let start, let end)):
                let (validator, retrying) = state.withLock { state in
                    (state.schedule.validator, state.schedule.requests.isOneRequest && id > 0)
                }
                // One URL asked again after a forgiven fault says so, as its first request did (``start(_:)``).
                if retrying { reportConnecting() }
                let request = Self.request(requests[mirror], from: start, to: end, ifRange: validator)
                let task = session.dataTask(with: request)
                let cancel = router.register(
                    TransferDelegate(SegmentTransferSink(engine: self, id: id)),
                    for: task
                )
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelledEarly.remove(id) != nil || !state.machine.isRunning { return true }
                    state.cancels[id] = cancel
                    return false
                }
                // Resumed even if it is cancelled at once: swift-corelibs-foundation never completes a task cancelled
                // before `resume()`, and the router would keep its transfer — and this engine — for ever.
                task.resume()
                if cancelled { cancel() }
            case .transfer(.truncate):
                truncate()
            case .transfer(.cancel(let id)):
                let cancel = state.withLock { state in
                    let cancel = state.cancels.removeValue(forKey: id)
                    if cancel == nil { state.cancelledEarly.insert(id) }
                    return cancel
                }
                cancel?()
            case .stop:
                stopWatching()
                cancelAll()
            case .verify:
                verify(context)
            case .end(let ending):
                end(ending, context)
            case .keepLater(let kept):
                session.delegateQueue.addOperation { [self] in keep(kept) }
            case .remove:
                partial.remove()
            case .publishNothing:
                publish(nil)
            }
        }
    }

    /// Reports progress (unless `reportingProgress` is `false`: a tick of the watch, which brings no byte), and ends
    /// the download once it is complete or no mirror is left. Runs on the delegate queue, as every event does: the
    /// progress closure hears of each report there, one at a time.
    func settle(reportingProgress: Bool = true) {
        let reports = reportingProgress && progress != nil
        let (snapshot, outlook, actions) = state.withLock {
            state -> (SegmentedDownloadProgress?, DownloadMachine.Outlook, [DownloadMachine.Action]) in
            let outlook = state.machine.outlook
            // Built only when someone reads it: this runs for every piece of every body. Once the download has
            // stopped or is finishing, a late callback of a transfer being stopped reports nothing.
            var snapshot: SegmentedDownloadProgress?
            if (reports && state.machine.isRunning) || outlook != .goingOn {
                state.speed.record(total: state.schedule.written, at: now)
                snapshot = Self.progress(of: state.schedule, requests: requests, speed: state.speed)
            }
            return (snapshot, outlook, outlook == .complete ? state.step { $0.startVerifying() } : [])
        }
        if reports, let snapshot { progress?(snapshot) }
        if outlook == .stranded, let snapshot {
            fail(strandedError(snapshot))
        }
        perform(actions, Context(snapshot: snapshot, reporting: progress != nil))
    }

    /// Why a download that no mirror is left to finish rejects: every mirror's reason, or, for one URL, its own.
    private func strandedError(_ snapshot: SegmentedDownloadProgress) -> Error {
        state.withLock { state in
            guard state.schedule.requests.isOneRequest, let reason = state.schedule.mirrors.first?.dropped else {
                return SegmentedDownloadError.everyMirrorDropped(snapshot.mirrors)
            }
            return reason.singleURLError(recorded: state.lastFault, validator: state.schedule.validator)
        }
    }

    /// What the actions of one step need beside the machine's word.
    struct Context {
        /// The progress the step was taken on: what a complete download is checked against and fulfills with.
        var snapshot: SegmentedDownloadProgress?
        /// Whether the progress closure hears of the phases.
        var reporting = false
        /// What the promise settles with, if the step ends the download.
        var outcome: Result<SegmentedDownloadResult>?
    }

    /// The promise was cancelled: stops every request and removes the partial file — even if the download was already
    /// ending: that ending then loses its decision to this cancellation. It runs on the cancelling thread before the
    /// promise rejects: whoever sees the rejection finds the file gone.
    ///
    /// A pause (`reason` `.paused`) of a resumable download keeps the bytes written instead: it stops every write
    /// here, and on the session's delegate queue — not on the caller's thread, usually the main thread — flushes the
    /// file and publishes the resume data.
    func cancel(_ reason: CancellationReason) {
        perform(state.withLock { $0.step { $0.cancel(reason) } })
    }

    /// Cancels every running request.
    private func cancelAll() {
        let cancels = state.withLock { state in
            let cancels = Array(state.cancels.values)
            state.cancels.removeAll()
            return cancels
        }
        for cancel in cancels { cancel() }
    }

    // MARK: Progress

    private static func progress(
        of schedule: SegmentSchedule,
        requests: [URLRequest],
        speed: TransferSpeed
    ) -> SegmentedDownloadProgress {
        SegmentedDownloadProgress(
            bytesWritten: schedule.written,
            totalBytes: schedule.total,
            mirrors: schedule.mirrors.enumerated().map { index, mirror in
                MirrorStatus(
                    url: requests[index].url!,
                    bytesReceived: mirror.received,
                    bytesWritten: mirror.written,
                    activeRequests: mirror.connections,
                    bytesPerSecond: mirror.speed,
                    dropped: mirror.dropped,
                    retries: mirror.retries,
                    lastRetriedFault: mirror.lastRetriedFault
                )
            },
            bytesPerSecond: speed.bytesPerSecond
        )
    }
}
