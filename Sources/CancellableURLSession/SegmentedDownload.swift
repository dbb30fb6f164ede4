public import Cancellable
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLSession {
    /// Downloads one file from several mirrors at once, in segments: each mirror fetches the byte ranges it is fast
    /// enough for, and a mirror that fails, stalls or serves another file is dropped without losing a byte.
    ///
    /// ```swift
    /// let session = URLSession.withProgressReporting()
    /// let mirrors = ["https://a.example/f.iso", "https://b.example/f.iso"].compactMap(URL.init(string:))
    /// let download = session.segmentedDownload(from: mirrors, to: file, verifying: DownloadIntegrity(sha256: digest))
    /// download.done { result in print("\(result.bytesDiscarded) bytes fetched twice") }.catch { show($0) }
    /// stopButton.onTap { download.cancel() }   // every request stops; no partial file is left
    /// ```
    ///
    /// Each mirror first asks for its own segment of ``SegmentedDownloadOptions/segmentSize`` bytes; the first
    /// answer gives the file's length and its strong validator, and the rest of the file is cut into segments. A
    /// mirror that finishes takes the next segment nobody works on; when none is left, it splits the largest segment
    /// still being fetched, taking a tail in proportion to its speed; when no segment is worth splitting, a faster
    /// mirror races the rest of a slower one's segment (``SegmentedDownloadOptions/endGame``), and the loser is
    /// stopped when the winner completes it.
    ///
    /// What is mixed, and what is checked:
    /// - Bytes of two mirrors end up in one file only if both answered `206` with a `Content-Range` naming the
    ///   range asked for and the same length, without a content coding, and without contradicting the first
    ///   mirror's strong validator (`ETag` or `Last-Modified`). A mirror that does not is dropped, with the reason
    ///   in ``MirrorStatus/dropped``.
    /// - A mirror that ignores ranges (`200`), answers an error status, fails, ends its body early, stalls
    ///   (``SegmentedDownloadOptions/stallTimeout``) or is too slow
    ///   (``SegmentedDownloadOptions/minimumBytesPerSecond``) is dropped, and its segment goes to the others. The
    ///   bytes it wrote into that segment are kept only if its response repeated the first mirror's strong
    ///   validator; otherwise they are fetched again. A fault that may pass (``MirrorDropReason/isTransient``) is
    ///   forgiven ``SegmentedDownloadOptions/retriesPerMirror`` times in a row (none by default): it stops only the
    ///   request it hit, and the mirror is asked again after ``SegmentedDownloadOptions/retryDelay``.
    /// - Before the promise fulfills, the file's length is checked, and `integrity` if given (a SHA-256 catches
    ///   mirrors that agree on the length and validator but serve other bytes). An `integrity` with a length also
    ///   drops any mirror that announces another, the first to answer included: without one, the first answer sets
    ///   the length the others must agree with.
    /// - With ``DownloadIntegrity/pieces``, each piece is checked as soon as it is written: a bad one is fetched
    ///   again, and the mirror that alone wrote it is dropped (``MirrorDropReason/pieceMismatch(piece:)``).
    /// - The file is written next to `destination` and renamed over it once complete and checked, as the other
    ///   downloads are: a download that fails or is cancelled leaves no file, and what was at `destination` stays.
    ///
    /// Segments need bytes as they arrive: any session without a delegate (such as `URLSession.shared`), or one made
    /// by ``withProgressReporting(configuration:delegateQueue:)``; a session with a delegate of your own rejects with
    /// ``SegmentedDownloadError/needsLiveDelivery``. Mirrors on one host share the session's
    /// `httpMaximumConnectionsPerHost`. This download cannot pause: any cancellation removes its bytes.
    /// ``resumableSegmentedDownload(from:to:verifying:options:file:line:progress:)`` makes one that can.
    ///
    /// - Parameters:
    ///   - mirrors: the requests for the same file, one per mirror (their headers are sent; each gets a `Range` and
    ///     `Accept-Encoding: identity`). A request with a `Range` of its own is refused.
    ///   - destination: where the file goes.
    ///   - integrity: what the finished file is checked against, besides the length the mirrors announced.
    ///   - options: segment sizes, connections, the end game, and when a mirror counts as stalled or too slow.
    ///   - file: where the caller made the promise (`#fileID`), for `PromiseDiagnostics` (debug builds only).
    ///   - line: the line of that call (`#line`), likewise.
    ///   - progress: the bytes written and each mirror's state, as bytes arrive (on the session's delegate queue).
    /// - Returns: the file's location and what each mirror sent. It rejects with
    ///   ``SegmentedDownloadError/everyMirrorDropped(_:)`` when no mirror is left, with a ``DownloadIntegrityError``
    ///   when the file fails its check, or with the file system's error.
    public func segmentedDownload(
        from mirrors: [URLRequest],
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = SegmentedDownloadOptions(),
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)? = nil
    ) -> CancellablePromise<SegmentedDownloadResult> {
        segmented(mirrors, integrity: integrity, options: options, file: file, line: line, progress: progress) {
            let (partial, handle) = try PartialFile.create(for: destination)
            let schedule = SegmentSchedule.fresh(mirrors: mirrors.count, options: options, integrity: integrity)
            return (partial, handle, schedule)  // `create` claimed the file
        }
    }

    /// Downloads one file from several mirrors at once, in segments: the mirrors' URLs, requested with the
    /// session's defaults. The overload that takes `[URLRequest]` says how mirrors are scheduled and checked.
    ///
    /// ```swift
    /// session.segmentedDownload(from: [mirrorA, mirrorB, mirrorC], to: file)
    ///     .done { open($0.url) }
    ///     .catch { show($0) }
    /// ```
    public func segmentedDownload(
        from mirrors: [URL],
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = SegmentedDownloadOptions(),
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)? = nil
    ) -> CancellablePromise<SegmentedDownloadResult> {
        segmentedDownload(
            from: mirrors.map { URLRequest(url: $0) },
            to: destination,
            verifying: integrity,
            options: options,
            file: file,
            line: line,
            progress: progress
        )
    }

    /// A segmented download that can pause: ``SegmentedDownload/pause()`` keeps every byte written, and
    /// ``resumeSegmentedDownload(_:from:to:verifying:options:withoutValidator:file:line:progress:)`` continues it.
    ///
    /// ```swift
    /// let download = session.resumableSegmentedDownload(from: mirrors, to: file)
    /// download.promise.done { open($0.url) }.catch { show($0) }
    /// pauseButton.onTap { download.pause().done { saved = $0 } }
    /// ```
    ///
    /// It downloads as ``segmentedDownload(from:to:verifying:options:file:line:progress:)`` does (same parameters,
    /// same checks); what differs is what a pause, or every mirror being dropped, leaves: the partial file, and
    /// resume data that names each range of it that is written (``SegmentedDownload``).
    public func resumableSegmentedDownload(
        from mirrors: [URLRequest],
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = SegmentedDownloadOptions(),
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)? = nil
    ) -> SegmentedDownload {
        resumableSegmented(mirrors, integrity: integrity, options: options, file: file, line: line, progress: progress)
        {
            let (partial, handle) = try PartialFile.create(for: destination)
            let schedule = SegmentSchedule.fresh(mirrors: mirrors.count, options: options, integrity: integrity)
            return (partial, handle, schedule)  // `create` claimed the file
        }
    }

    /// A segmented download that can pause, of the mirrors' URLs requested with the session's defaults.
    ///
    /// ```swift
    /// let download = session.resumableSegmentedDownload(from: [mirrorA, mirrorB], to: file)
    /// ```
    public func resumableSegmentedDownload(
        from mirrors: [URL],
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = SegmentedDownloadOptions(),
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)? = nil
    ) -> SegmentedDownload {
        resumableSegmentedDownload(
            from: mirrors.map { URLRequest(url: $0) },
            to: destination,
            verifying: integrity,
            options: options,
            file: file,
            line: line,
            progress: progress
        )
    }

    /// Continues a paused segmented download: fetches only the bytes its resume data does not hold, from its
    /// mirrors or the ones given.
    ///
    /// ```swift
    /// let saved = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: stored)
    /// session.resumeSegmentedDownload(saved, to: destination).promise.done { open($0.url) }
    /// ```
    ///
    /// Every mirror must announce the length the resume data names and, if it names a strong validator, repeat it
    /// — not merely not contradict it: a mirror that does not is dropped with
    /// ``MirrorDropReason/lengthDisagrees(expected:announced:)`` or
    /// ``MirrorDropReason/validatorDisagrees(expected:announced:)``, before any of its bytes is written. If every
    /// mirror serves another version now, the download fails with ``SegmentedDownloadError/everyMirrorDropped(_:)``
    /// and keeps its bytes; call ``SegmentedDownloadResumeData/discard()`` and start again.
    ///
    /// The bytes kept are trusted only as far as the disk holds them: a kept range past the partial file's end
    /// (the file was cut short, or removed) is fetched again. Resume data without a strong validator starts over,
    /// unless `withoutValidator` is ``DownloadResumeData/WithoutValidator/continueIfLengthMatches``; so does resume
    /// data whose length is not the one `integrity` expects.
    ///
    /// - Parameters:
    ///   - resumeData: what ``SegmentedDownload/pause()`` gave, or what was decoded (checked as untrusted input:
    ///     ``SegmentedDownloadResumeData/init(from:)``).
    ///   - mirrors: where to fetch the rest; `nil` for `resumeData.mirrors`.
    ///   - destination: where the file goes; `nil` for `resumeData.destination`. Given, the partial file is looked
    ///     for next to it (``SegmentedDownloadResumeData/relocated(to:)``).
    ///   - integrity: what the finished file must be; `nil` for the expectation in `resumeData`, if any.
    ///   - options: as for a new download.
    ///   - withoutValidator: what to do with bytes no strong validator identifies.
    ///   - file: where the caller made the promise (`#fileID`), for `PromiseDiagnostics` (debug builds only).
    ///   - line: the line of that call (`#line`), likewise.
    ///   - progress: as for a new download; `bytesWritten` counts the bytes kept.
    /// - Returns: the download. It rejects before any request, touching no file, with
    ///   ``DownloadError/partialFileNotOwned(_:)`` if the partial file is a link, a directory or has another
    ///   hard link, and with ``DownloadError/partialFileInUse(_:)`` if another download resumed from the same
    ///   data is still running.
    public func resumeSegmentedDownload(
        _ resumeData: SegmentedDownloadResumeData,
        from mirrors: [URLRequest]? = nil,
        to destination: URL? = nil,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = SegmentedDownloadOptions(),
        withoutValidator: DownloadResumeData.WithoutValidator = .startOver,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)? = nil
    ) -> SegmentedDownload {
        let mirrors = mirrors ?? resumeData.mirrors.map { URLRequest(url: $0) }
        let integrity = integrity ?? resumeData.integrity
        return resumableSegmented(
            mirrors,
            integrity: integrity,
            options: options,
            file: file,
            line: line,
            progress: progress
        ) {
            let data = try destination.map { try resumeData.relocated(to: $0) } ?? resumeData
            guard PartialFile.claim(data.partialFile) else {
                throw DownloadError.partialFileInUse(data.partialFile)
            }
            do {
                let trusted =
                    data.validator != nil || withoutValidator == .continueIfLengthMatches
                let matches = integrity?.length.map { $0 == data.totalBytes } ?? true
                let (partial, handle, kept) = try PartialFile.reopen(
                    data.partialFile,
                    for: data.destination,
                    keeping: trusted && matches ? data.keptRanges : []
                )
                guard let total = data.totalBytes, !kept.isEmpty else {
                    let schedule = SegmentSchedule.fresh(mirrors: mirrors.count, options: options, integrity: integrity)
                    return (partial, handle, schedule)
                }
                let schedule = SegmentSchedule(
                    mirrors: mirrors.count,
                    options: options,
                    expectedLength: integrity?.length,
                    pieces: integrity?.pieces,
                    resuming: kept,
                    of: total,
                    validator: data.validator
                )
                return (partial, handle, schedule)
            } catch {
                PartialFile.release(data.partialFile)
                throw error
            }
        }
    }

    /// What a segmented download starts with: its partial file, claimed (``PartialFile/claim(_:)``) and open, and the
    /// schedule.
    typealias SegmentedStart = (PartialFile, FileHandle, SegmentSchedule)

    /// A resumable segmented download of `mirrors` into what `prepare` opens.
    private func resumableSegmented(
        _ mirrors: [URLRequest],
        integrity: DownloadIntegrity?,
        options: SegmentedDownloadOptions,
        file: StaticString,
        line: UInt,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)?,
        prepare: () throws -> SegmentedStart
    ) -> SegmentedDownload {
        let (resumeData, deliver) = Guarantee<SegmentedDownloadResumeData?>.pending()
        // Let go of when the download ends: the app's progress closure may hold the `SegmentedDownload` (to take
        // checkpoints), and the engine holds that closure. (Not a weak reference: LeakSanitizer cannot follow the
        // tagged pointer to a weak reference's side table, and reports it as leaked while the engine lives.)
        let engine = Locked<SegmentedDownloadEngine?>(nil)
        let promise = segmented(
            mirrors,
            integrity: integrity,
            options: options,
            file: file,
            line: line,
            progress: progress,
            resumeData: deliver,
            prepare: prepare,
            made: { made in
                engine.withLock { $0 = made }
                made.whenEnded { engine.withLock { $0 = nil } }
            }
        )
        return SegmentedDownload(promise: promise, resumeData: resumeData) {
            engine.withLock { $0 }?.checkpoint()
        }
    }

    /// A segmented download of `mirrors` into what `prepare` opens — after the mirrors, options, session and
    /// integrity are checked — handing its resume data to `resumeData`, if given (and `nil` if it is refused).
    private func segmented(
        _ mirrors: [URLRequest],
        integrity: DownloadIntegrity?,
        options: SegmentedDownloadOptions,
        file: StaticString,
        line: UInt,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)?,
        resumeData: (@Sendable (SegmentedDownloadResumeData?) -> Void)? = nil,
        prepare: () throws -> SegmentedStart,
        made: (SegmentedDownloadEngine) -> Void = { _ in }
    ) -> CancellablePromise<SegmentedDownloadResult> {
        let engine: SegmentedDownloadEngine
        do {
            guard !mirrors.isEmpty else { throw SegmentedDownloadError.noMirrors }
            if let problem = options.problem { throw SegmentedDownloadError.invalidOptions(problem) }
            for request in mirrors {
                guard ["http", "https"].contains(request.url?.scheme?.lowercased() ?? ""),
                    request.url?.host?.isEmpty == false,
                    request.value(forHTTPHeaderField: "Range") == nil
                else { throw SegmentedDownloadError.invalidMirror(request.url) }
            }
            let transport = transport
            guard let router = transport.router else { throw SegmentedDownloadError.needsLiveDelivery }
            try integrity?.validate()
            let (partial, handle, schedule) = try prepare()
            let reader: FileHandle?
            do {
                reader = try integrity?.pieces.map { _ in try partial.openForReading() }
            } catch {
                try? handle.close()
                partial.remove()
                PartialFile.release(partial.url)
                throw error
            }
            engine = SegmentedDownloadEngine(
                session: transport.session,
                router: router,
                requests: mirrors,
                partial: partial,
                handle: handle,
                reader: reader,
                schedule: schedule,
                integrity: integrity,
                options: options,
                progress: progress,
                resumeData: resumeData
            )
            made(engine)
        } catch {
            resumeData?(nil)
            return CancellablePromise(error: error)
        }
        return CancellablePromise(
            file: file,
            line: line,
            deciding: { resolver in
                engine.start(resolver)
                return { reason in engine.cancel(reason) }
            }
        )
    }
}

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
        /// What runs once the download has ended (``whenEnded(_:)``).
        var ended: (@Sendable () -> Void)?
    }

    private let state: Locked<State>
    private let session: URLSession
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

    init(
        session: URLSession,
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
        state = Locked(State(schedule: schedule, handle: handle, reader: reader))
        self.resumeData = resumeData
        self.session = session
        self.router = router
        self.requests = requests
        self.partial = partial
        self.integrity = integrity
        self.options = options
        self.progress = progress
        clock = PromiseClocks.current
        interval = options.watchPeriod
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
            // The pieces a resumed download kept whole are checked before they count: on the delegate queue, not on
            // the caller's thread. What they cost is what the download then does.
            session.delegateQueue.addOperation { [self] in
                var failure: Error?
                let actions = state.withLock { state -> [SegmentSchedule.Action] in
                    guard state.phase == .running, let total = state.schedule.total else { return [] }
                    do {
                        return try check(state.schedule.completedPieces(overlapping: 0..<total), &state)
                    } catch {
                        failure = error
                        return state.schedule.stopAll()
                    }
                }
                perform(actions)
                if let failure { fail(failure) } else { settle() }
            }
        } else if complete {
            // A resumed download that kept every byte has nothing to fetch: it ends on the delegate queue, as it would
            // after its last byte.
            session.delegateQueue.addOperation { [self] in settle() }
        }
    }

    /// Checks `pieces` — every byte of each written — against their digests, under the lock, reading them back from
    /// the file: a piece that passes is final; one that fails is fetched again, and drops the mirror that wrote it.
    ///
    /// - Throws: the file system's error if a piece cannot be read: the download fails with it.
    private func check(_ pieces: [Int], _ state: inout State) throws -> [SegmentSchedule.Action] {
        guard let digests = state.schedule.pieces, let total = state.schedule.total, let reader = state.reader else {
            return []
        }
        var actions: [SegmentSchedule.Action] = []
        for piece in pieces {
            let actual = try digests.hexDigest(of: piece, in: total, readingFrom: reader)
            if actual == digests.sha256[piece].lowercased() {
                state.schedule.pieceVerified(piece)
            } else {
                actions += state.schedule.pieceFailed(piece, at: now)
            }
        }
        return actions
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
            let (write, goOn, actions) = state.schedule.receive(data.count, for: id, at: now)
            guard let write, !write.range.isEmpty else { return (goOn, actions) }
            do {
                try handle.writeAll(data.subdata(in: write.range), at: write.offset)
                let written = write.offset..<(write.offset + Int64(write.range.count))
                let checked = try check(state.schedule.completedPieces(overlapping: written), &state)
                return (goOn, actions + checked)
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
            // Built only when someone reads it: this runs for every piece of every body.
            let snapshot = reports || ends ? Self.progress(of: state.schedule, requests: requests) : nil
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
            finish(snapshot, resolver)
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
    private func finish(_ snapshot: SegmentedDownloadProgress, _ resolver: DecidingResolver<SegmentedDownloadResult>) {
        let total = snapshot.totalBytes ?? 0
        var outcome: Result<SegmentedDownloadResult>
        do {
            let size = try PartialFile.size(of: partial.url)
            if size != total { throw DownloadIntegrityError.lengthMismatch(expected: total, actual: size) }
            try integrity?.verify(fileAt: partial.url)
            outcome = .fulfilled(
                SegmentedDownloadResult(url: partial.destination, totalBytes: total, mirrors: snapshot.mirrors)
            )
        } catch {
            outcome = .rejected(error)
        }
        let decision = resolver.decide {
            if case .fulfilled = outcome {
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

    /// The promise was cancelled: stops every request and removes the partial file (unless the download is already
    /// ending, which then sees the cancellation and removes it). It runs on the cancelling thread before the promise
    /// rejects: whoever sees the rejection finds the file gone.
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

    private static func progress(of schedule: SegmentSchedule, requests: [URLRequest]) -> SegmentedDownloadProgress {
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
            }
        )
    }
}
