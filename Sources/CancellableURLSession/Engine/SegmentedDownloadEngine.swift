import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Carries out a ``SegmentSchedule``: sends its requests, writes the bytes it admits at their offsets, watches for
/// stalls, and ends the download.
///
/// The schedule, the file handle and the transfers' cancel closures are behind one lock. Requests are started and
/// cancelled outside it, as are the progress reports and the ending. URLSession delivers each transfer's callbacks
/// on the session's delegate queue, one at a time; the stall timer and a cancellation come from other threads.
final class SegmentedDownloadEngine: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is in `state`, behind its lock.
    private enum Phase {
        case running, finishing, stopped
    }

    private struct State {
        var schedule: SegmentSchedule
        var handle: FileHandle?
        /// Reads pieces back to check their digests (``DownloadIntegrity/pieces``); `nil` without them.
        var reader: FileHandle?
        var phase = Phase.running
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
    }

    private let state: Locked<State>
    /// Where the requests run: held for as long as the download, with the app's session it stands for.
    private let transport: Transport
    private var session: URLSession { transport.session }
    private let router: TransferRouter
    private let requests: [URLRequest]
    private let partial: PartialFile
    private let integrity: DownloadIntegrity?
    private let options: SegmentedDownloadOptions
    private let progress: (@Sendable (SegmentedDownloadProgress) -> Void)?
    /// Receives a resumable download's resume data, or `nil`, once it ends; `nil` for a download that cannot pause.
    private let resumeData: (@Sendable (SegmentedDownloadResumeData?) -> Void)?
    /// What the stall watch waits on: `PromiseClocks.current` when the download was made.
    private let clock: any PromiseClock
    /// How often the stall watch looks: a quarter of the stall timeout, from 20 ms to 1 s.
    private let interval: TimeInterval
    /// Hashes completed pieces off the lock (``DownloadIntegrity/pieces``); `nil` without piece digests.
    private let checker: PieceChecker?
    /// Hashes the file as it is written, from its first segment on (``DownloadIntegrity/sha256``); `nil` without it.
    private let digest: StreamingDigest?

    init(
        transport: Transport,
        router: TransferRouter,
        requests: [URLRequest],
        partial: PartialFile,
        handle: FileHandle,
        reader: FileHandle?,
        schedule: SegmentSchedule,
        integrity: DownloadIntegrity?,
        options: SegmentedDownloadOptions,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)?,
        resumeData: (@Sendable (SegmentedDownloadResumeData?) -> Void)?
    ) {
        let state = Locked(State(schedule: schedule, handle: handle, reader: reader))
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
        // Its queued work is dropped once the download has stopped; a finishing download still needs it.
        digest =
            integrity?.sha256 == nil
            ? nil : StreamingDigest(isRunning: { state.withLock { $0.phase != .stopped } }, open: open)
    }

    /// The time on ``clock``, which measures speeds as it counts stalls and rests: a test's `TestClock` drives all of
    /// them.
    private var now: TimeInterval { clock.elapsed }

    /// Sends the first requests and starts watching for stalls.
    func start(_ resolver: DecidingResolver<SegmentedDownloadResult>) {
        let (actions, complete) = state.withLock { state in
            state.resolver = resolver
            return (state.schedule.begin(at: now), state.schedule.isComplete)
        }
        scheduleWatch()
        perform(actions)
        if state.withLock({ $0.schedule.pieces != nil }) {
            // The pieces a resumed download kept whole are checked before they count, as any other piece: queued from
            // the delegate queue, not from the caller's thread. What they cost is what the download then does.
            session.delegateQueue.addOperation { [self] in
                state.withLock { state in
                    guard state.phase == .running, let total = state.schedule.total else { return }
                    check(0..<total, &state)
                }
                settle()
            }
        } else if complete {
            // A resumed download that kept every byte has nothing to fetch: it ends on the delegate queue, as it would
            // after its last byte.
            session.delegateQueue.addOperation { [self] in settle() }
        }
    }

    /// Queues the pieces that the bytes `written` completed — every byte of each written, not verified yet — to be
    /// checked against their digests on the checker's queue, off the lock (``PieceChecker``). Under the lock.
    ///
    /// A piece being checked is not queued again; if `written` wrote some of its bytes again, its verdict is not
    /// trusted, and it is checked again once it is complete (``checked(_:_:)``).
    private func check(_ written: Range<Int64>, _ state: inout State) {
        guard let checker, let total = state.schedule.total else { return }
        checker.touch(written)
        checker.check(
            state.schedule.completedPieces(overlapping: written),
            in: total,
            isRunning: { [weak self] in self?.state.withLock { $0.phase == .running } ?? false },
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
        let actions = state.withLock { state -> [SegmentSchedule.Action] in
            let holds = checker?.settle(piece) ?? false
            guard state.phase == .running, let pieces = state.schedule.pieces, let total = state.schedule.total
            else { return [] }
            // A piece written again meanwhile, or given back by a rollback (its bytes are to be written again), is
            // checked again once it is complete: the verdict is on bytes it may no longer hold.
            let bytes = pieces.range(of: piece, in: total)
            guard holds, state.schedule.completedPieces(overlapping: bytes).contains(piece) else {
                check(bytes, &state)
                return []
            }
            switch verdict {
            case .passed:
                state.schedule.pieceVerified(piece)
                return []
            case .failed:
                return state.schedule.pieceFailed(piece, at: now)
            case .unreadable(let error):
                failure = error
                return state.schedule.stopAll()
            }
        }
        perform(actions)
        if let failure { fail(failure) } else { settle() }
    }

    /// Looks for stalls again in ``interval``, unless the download has stopped.
    private func scheduleWatch() {
        let timer = clock.schedule(after: .nanoseconds(Int(interval * 1_000_000_000))) { [self] in
            watch()
            scheduleWatch()
        }
        let stopped = state.withLock { state in
            guard state.phase == .running else { return true }
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

    // MARK: A transfer's callbacks

    /// Checks a response: `true` to take its body.
    func accept(_ response: URLResponse, for id: Int) -> Bool {
        let answer = RangeAnswer(response)
        let (take, actions) = state.withLock { state -> (Bool, [SegmentSchedule.Action]) in
            guard state.phase == .running else { return (false, []) }
            return state.schedule.accept(answer, for: id, at: now)
        }
        perform(actions)
        settle()
        return take
    }

    /// Writes what the schedule admits of `data`: `false` to stop the transfer.
    func receive(_ data: Data, for id: Int) -> Bool {
        var failure: Error?
        let (goOn, actions) = state.withLock { state -> (Bool, [SegmentSchedule.Action]) in
            guard state.phase == .running, let handle = state.handle else { return (false, []) }
            let run = digest == nil ? nil : state.schedule.segmentStart(of: id)  // written from there to the write
            let (write, goOn, actions) = state.schedule.receive(data.count, for: id, at: now)
            guard let write, !write.range.isEmpty else { return (goOn, actions) }
            do {
                let bytes = data.subdata(in: write.range)
                try handle.writeAll(bytes, at: write.offset)
                digest?.append(bytes, at: write.offset, writtenFrom: run ?? write.offset)
                check(write.offset..<(write.offset + Int64(write.range.count)), &state)
                return (goOn, actions)
            } catch {
                state.schedule.unwrite(write, for: id)
                failure = error
                return (false, actions + state.schedule.stopAll())
            }
        }
        perform(actions)
        if let failure { fail(failure) } else { settle() }
        return goOn
    }

    /// A transfer ended: its error, if it failed.
    func complete(_ id: Int, error: Error?) {
        let fault = error.map(MirrorDropReason.failure(of:))
        let actions = state.withLock { state -> [SegmentSchedule.Action] in
            guard state.phase == .running else { return [] }
            return state.schedule.end(id, fault: fault, at: now)
        }
        perform(actions)
        settle()
    }

    /// Drops mirrors whose requests stalled or are too slow.
    private func watch() {
        let actions = state.withLock { state -> [SegmentSchedule.Action] in
            guard state.phase == .running else { return [] }
            let now = now
            var actions: [SegmentSchedule.Action] = []
            let faults = state.schedule.tick(
                by: interval,
                stallTimeout: options.stallTimeout,
                minimumSpeed: options.minimumBytesPerSecond,
                at: now
            )
            for (id, reason) in faults { actions += state.schedule.fail(id, reason, at: now) }
            return actions + state.schedule.rest(by: interval, at: now)
        }
        perform(actions)
        settle(reporting: false)
    }

    // MARK: Carrying out

    private func perform(_ actions: [SegmentSchedule.Action]) {
        for action in actions {
            switch action {
            case .start(let id, let mirror, let start, let end):
                var request = requests[mirror]
                request.setValue("bytes=\(start)-\(end - 1)", forHTTPHeaderField: "Range")
                request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
                let task = session.dataTask(with: request)
                let cancel = router.register(
                    TransferDelegate(sink: .segment(self, id), reportsUpload: false, progress: nil),
                    for: task
                )
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelledEarly.remove(id) != nil || state.phase != .running { return true }
                    state.cancels[id] = cancel
                    return false
                }
                // Resumed even if it is cancelled at once: swift-corelibs-foundation never completes a task cancelled
                // before `resume()`, and the router would keep its transfer — and this engine — for ever.
                task.resume()
                if cancelled { cancel() }
            case .cancel(let id):
                let cancel = state.withLock { state in
                    let cancel = state.cancels.removeValue(forKey: id)
                    if cancel == nil { state.cancelledEarly.insert(id) }
                    return cancel
                }
                cancel?()
            }
        }
    }

    /// Reports progress (if `reporting`: only on the delegate queue, where the callbacks come one at a time), and
    /// ends the download once it is complete or no mirror is left.
    private func settle(reporting: Bool = true) {
        let reports = reporting && progress != nil
        let (snapshot, ending) = state.withLock { state -> (SegmentedDownloadProgress?, Ending?) in
            let running = state.phase == .running
            let ends = running && (state.schedule.isComplete || state.schedule.isStranded)
            // Built only when someone reads it: this runs for every piece of every body. Once the download has
            // stopped or is finishing, a late callback of a transfer being stopped reports nothing.
            var snapshot: SegmentedDownloadProgress?
            if (reports && running) || ends {
                state.speed.record(total: state.schedule.written, at: now)
                snapshot = Self.progress(of: state.schedule, requests: requests, speed: state.speed)
            }
            guard running else { return (snapshot, nil) }
            if state.schedule.isComplete {
                state.phase = .finishing
                try? state.handle?.close()
                try? state.reader?.close()
                state.handle = nil
                state.reader = nil
                state.schedule.stopAll()
                return (snapshot, .complete(state.resolver))
            }
            if state.schedule.isStranded {
                return (snapshot, .stranded)
            }
            return (snapshot, nil)
        }
        if reports, let snapshot { progress?(snapshot) }
        switch (ending, snapshot) {
        case (.complete(let resolver?), let snapshot?):
            stopWatching()
            // Requests still running fetch nothing the file needs (a range past its end, an end game's loser): they
            // stop now, and each hands its transfer back as it completes.
            cancelAll()
            finish(snapshot, resolver, reporting: reports)
        case (.stranded, let snapshot?):
            fail(SegmentedDownloadError.everyMirrorDropped(snapshot.mirrors))
        default:
            break
        }
    }

    private enum Ending {
        case complete(DecidingResolver<SegmentedDownloadResult>?)
        case stranded
    }

    /// Checks the complete file, then — unless a cancellation came first — moves it into place and fulfills.
    ///
    /// With `reporting` (on the delegate queue), it tells the progress closure when it verifies and when it moves the
    /// file into place.
    private func finish(
        _ snapshot: SegmentedDownloadProgress,
        _ resolver: DecidingResolver<SegmentedDownloadResult>,
        reporting: Bool
    ) {
        let report = { (phase: TransferPhase) in if reporting { self.progress?(snapshot.with(phase: phase)) } }
        let total = snapshot.totalBytes ?? 0
        var outcome: Result<SegmentedDownloadResult>
        do {
            let size = try PartialFile.size(of: partial.url)
            if size != total { throw DownloadIntegrityError.lengthMismatch(expected: total, actual: size) }
            if let integrity {
                // Every piece passed already (the schedule completes only then), and the SHA-256 hashed the bytes
                // that came in order as they came: what is left is to read back the rest.
                if integrity.hasWorkLeft(forFileOf: total, digest: digest, piecesVerified: true) { report(.verifying) }
                try integrity.verify(fileAt: partial.url, digest: digest, piecesVerified: true)
            }
            outcome = .fulfilled(
                SegmentedDownloadResult(url: partial.destination, totalBytes: total, mirrors: snapshot.mirrors)
            )
        } catch {
            outcome = .rejected(error)
        }
        let decision = resolver.decide {
            if case .fulfilled = outcome {
                report(.movingIntoPlace)
                do { try partial.commit() } catch { return .rejected(error) }
            } else {
                partial.remove()
            }
            return outcome
        }
        if case .cancelled(let reason) = decision {
            // A pause that came as the file was completed keeps it whole, unless it failed its check.
            if reason == .paused, resumeData != nil, case .fulfilled = outcome, let total = snapshot.totalBytes {
                partial.flush()
                keep(total > 0 ? [0..<total] : [], of: total, validator: state.withLock { $0.schedule.validator })
                return
            }
            partial.remove()
        }
        publish(nil)
    }

    /// Stops every request and rejects with `error`, unless a cancellation came first. A resumable download that
    /// lost every mirror keeps its bytes, once they are flushed to disk.
    private func fail(_ error: Error) {
        let keeps = resumeData != nil && error is SegmentedDownloadError
        guard let (resolver, stopped) = stop(keeping: keeps), let resolver else { return }
        stopWatching()
        cancelAll()
        // Bytes that cannot be flushed to disk are not kept: resume data would name bytes a power loss can take.
        let kept = stopped.flatMap { partial.flush() ? $0 : nil }
        // What is kept, and its resume data, are settled before the promise rejects.
        let settle = { (keeping: Kept?) in
            if let keeping {
                self.keep(keeping.ranges, of: keeping.total, validator: keeping.validator)
            } else {
                self.partial.remove()
                self.publish(nil)
            }
        }
        switch resolver.decide({
            settle(kept); return .rejected(error)
        }) {
        case .resolved:
            break
        case .cancelled(let reason):
            // Its cancel handler removed the file already, unless it is a pause: that keeps what this failure kept.
            settle(reason == .paused ? kept : nil)
        case .resolvedAlready:
            settle(nil)
        }
    }

    /// What a stopped download keeps: the ranges written of a file of `total` bytes (`nil` if the length is not
    /// known), identified by `validator`.
    private struct Kept {
        var ranges: [Range<Int64>]
        var total: Int64?
        var validator: DownloadResumeData.Validator?
    }

    /// Stops the download if it is running: no byte is written after it returns. If `keeping`, what the file holds
    /// is returned, to keep once it is flushed to disk — which the caller does, outside the lock every callback needs.
    ///
    /// - Returns: `nil` if the download had already stopped or was ending; else the resolver, and what is kept.
    private func stop(keeping: Bool) -> (DecidingResolver<SegmentedDownloadResult>?, Kept?)? {
        state.withLock { state in
            guard state.phase == .running else { return nil }
            state.phase = .stopped
            var kept: Kept?
            if keeping {
                kept = Kept(
                    ranges: state.schedule.keptRanges,
                    total: state.schedule.total,
                    validator: state.schedule.validator
                )
            }
            try? state.handle?.close()
            try? state.reader?.close()
            state.handle = nil
            state.reader = nil
            state.schedule.stopAll()
            return (state.resolver, kept)
        }
    }

    /// What resumes the download from the bytes on disk now, while it goes on; `nil` unless it is running and its
    /// partial file could be flushed.
    ///
    /// The ranges are taken under the lock that every write holds, so each byte they name has been written; the
    /// file is flushed after that (a flush applies to every write made before it), so each is on disk before the
    /// resume data is returned. Bytes past a segment's frontier are written again only when a rollback
    /// (``SegmentSchedule/drop(_:_:at:)``) or a failed piece (``SegmentSchedule/pieceFailed(_:at:)``) distrusts
    /// them, and then with bytes of the same file: what the resume data names stays on disk.
    func checkpoint() -> SegmentedDownloadResumeData? {
        guard resumeData != nil else { return nil }
        let kept = state.withLock { state -> Kept? in
            guard state.phase == .running else { return nil }
            return Kept(
                ranges: state.schedule.keptRanges,
                total: state.schedule.total,
                validator: state.schedule.validator
            )
        }
        guard let kept, partial.flush() else { return nil }
        return try? SegmentedDownloadResumeData(
            mirrors: requests.map { $0.url! },
            destination: partial.destination,
            partialFile: partial.url,
            totalBytes: kept.total,
            validator: kept.validator,
            keptRanges: kept.total == nil ? [] : kept.ranges,
            integrity: integrity
        )
    }

    /// Keeps the partial file for a resume, and publishes its resume data — through the checks decoded resume data
    /// gets, so that the library never hands out data it would refuse; if those fail, removes the file instead.
    private func keep(_ ranges: [Range<Int64>], of total: Int64?, validator: DownloadResumeData.Validator?) {
        let data = try? SegmentedDownloadResumeData(
            mirrors: requests.map { $0.url! },
            destination: partial.destination,
            partialFile: partial.url,
            totalBytes: total,
            validator: validator,
            keptRanges: total == nil ? [] : ranges,
            integrity: integrity
        )
        if data == nil { partial.remove() }
        publish(data)
    }

    /// Runs `body` once the download has ended, after its resume data is published; set before it starts.
    func whenEnded(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.ended = body }
    }

    /// The last thing the download does with its partial file, on every ending: gives up its hold on the file, then
    /// hands `data` to whoever waits for the resume data.
    private func publish(_ data: SegmentedDownloadResumeData?) {
        PartialFile.release(partial.url)  // held since the download was made
        resumeData?(data)
        state.withLock { state in
            defer { state.ended = nil }
            return state.ended
        }?()
    }

    /// The promise was cancelled: stops every request and removes the partial file — even if the download was already
    /// ending: that ending then loses its decision to this cancellation. It runs on the cancelling thread before the
    /// promise rejects: whoever sees the rejection finds the file gone.
    ///
    /// A pause (`reason` `.paused`) of a resumable download keeps the bytes written instead: it stops every write
    /// here, and on the session's delegate queue — not on the caller's thread, usually the main thread — flushes the
    /// file and publishes the resume data.
    func cancel(_ reason: CancellationReason) {
        let pausing = reason == .paused && resumeData != nil
        guard let (_, stopped) = stop(keeping: pausing) else {
            // The download was already ending: that ending loses its decision to this cancellation, and removes the
            // file too — after the promise has rejected. Removed now, unless a pause keeps it.
            if !pausing { partial.remove() }
            return
        }
        if let stopped {
            stopWatching()
            cancelAll()
            session.delegateQueue.addOperation { [self] in
                // Bytes that cannot be flushed are not kept: resume data would name bytes a power loss can take.
                guard partial.flush() else {
                    partial.remove()
                    return publish(nil)
                }
                keep(stopped.ranges, of: stopped.total, validator: stopped.validator)
            }
            return
        }
        partial.remove()  // first: the promise is already rejected, and nothing writes to the file any more
        stopWatching()
        cancelAll()
        publish(nil)
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
