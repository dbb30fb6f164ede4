import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The file side of one download: it carries out on the partial file what its ``DownloadState`` decides — where the
/// body goes, what is checked before the file replaces the destination, and, for a ``ResumableDownload``, what is
/// kept when it stops early.
///
/// The transfer's callbacks reach it one at a time, on the session's delegate queue (or, on a session without live
/// delivery, once from the task's completion handler), and so does `prepare(_:)` for each retry (on the clock's
/// thread, between two transfers): the state they touch needs no lock. What other threads call — ``cancelled(_:)``
/// and ``checkpoint()`` — touches only what is behind a lock (`cancellation`, `onDisk`). How the download ends is
/// decided against a cancellation under the promise's cancellation lock, through the ``DecidingResolver`` that
/// ``finish(taskError:statusError:response:resolver:progress:)`` is given.
final class FileDownload: @unchecked Sendable {
    /// What a download fulfills with.
    typealias Outcome = (url: URL, response: URLResponse)
    /// Receives a resumable download's resume data, or `nil`, once it ends.
    typealias ResumeDataSink = (DownloadResumeData?) -> Void

    let partial: PartialFile
    /// Where the bytes kept come from: the resume data's URL until this request's response arrives, then this
    /// request's (before redirects). A resume that fails before the answer leaves it as it was, so that resuming
    /// from that resume data does not go back to a mirror that is down.
    private var source: URL
    private let integrity: DownloadIntegrity?
    /// The file's SHA-256, hashed on a queue of its own as the body is written (``DownloadIntegrity/sha256``);
    /// `nil` without one.
    private let digest: StreamingDigest?
    /// Checks each piece as its last byte is written (``DownloadIntegrity/pieces``); `nil` without piece digests.
    private let pieceChecks: PiecesAsWritten?
    /// Resolved when the download ends, for a resumable download.
    private let resumeData: ResumeDataSink?
    private var handle: FileHandle?
    private var state: DownloadState
    /// Whether this download continues bytes kept: resume data, or, after a retry, its own.
    private var isResumed: Bool
    /// The URL this download asks, before redirects.
    private let requestURL: URL
    /// Whether this download holds its partial file (``PartialFile/claim(_:)``): from when it is made — a new file is
    /// claimed as it is created, a resumed one before it is opened — until it ends.
    private var isClaimed = true
    /// Where a test stops the download to force an interleaving; read once, when the download is made.
    let hooks = DownloadHooks.current
    /// What a ``checkpoint()`` may name, for a resumable download — the bytes on disk an ending would keep, where
    /// they came from, and which version of the file's contents they are (`generation` counts the times the file was
    /// emptied to start over) — kept up to date on the delegate queue, read from any thread; `nil` while the file is
    /// being emptied, and once the download ends.
    private let onDisk = Locked<(kept: KeptBytes, source: URL, generation: Int)?>(nil)
    private var generation = 0
    /// What cancellation won, set by ``cancelled(_:)`` on the cancelling thread: `nil` while none has; `true` for one
    /// that removes the file (a file the session downloaded elsewhere is then not kept, ``fill(from:)``), `false` for
    /// a pause that keeps it. A retry does not touch the file once one has (``prepareRetry(keeping:)``).
    private let cancellation = Locked<Bool?>(nil)
    /// Whether bytes without a strong validator may continue on their length alone (the caller opted in): what a
    /// retry of a resumed download keeps, too.
    private var continuesWithoutValidator = false
    /// What asks again after a fault that may pass (``DownloadAttempts``); let go of when the download ends.
    var attempts: DownloadAttempts?
    /// What runs once the download has ended, after its resume data is out (``whenEnded(_:)``).
    private let ended = Locked<(@Sendable () -> Void)?>(nil)
    /// How many bytes the file held when the current attempt began: an attempt that wrote more made progress.
    private var keptAtStart: Int64 = 0

    /// A download of `request` from the start into a new partial file next to `destination`.
    ///
    /// A request with its own `Range` header asks for a part: a download that cannot pause writes the part the
    /// `206` carries; a resumable one, whose resume could not continue a part, is refused.
    ///
    /// - Throws: the file system's error, ``DownloadIntegrityError/invalidExpectation(_:)``, or, for a resumable
    ///   download, ``DownloadError/rangeRequested(_:)``.
    convenience init(
        _ request: URLRequest,
        to destination: URL,
        verifying integrity: DownloadIntegrity?,
        resumeData: ResumeDataSink?
    ) throws {
        try integrity?.validate()
        let range = request.value(forHTTPHeaderField: "Range")
        if let range, resumeData != nil { throw DownloadError.rangeRequested(range) }
        let url = request.url ?? destination
        let (partial, handle) = try PartialFile.create(for: destination)
        let state = DownloadState(kept: .nothing, requested: range == nil ? .whole : .callersRange)
        self.init(
            source: url,
            requestURL: url,
            partial: partial,
            handle: handle,
            state: state,
            integrity: integrity,
            resumed: false,
            resumeData
        )
    }

    /// A download that continues `data`'s partial file, asking `url` for the rest.
    ///
    /// It holds the bytes kept from the start — any ending keeps them, unless cancelled for good — and asks for the
    /// rest only if the server can be held to the same file: under its strong validator, or, if the caller opted in
    /// (`withoutValidator`), on the total length alone; and only if the session delivers bytes as they arrive
    /// (`continuing`). Otherwise it asks for the whole file.
    convenience init(
        resuming data: DownloadResumeData,
        from url: URL,
        continuing: Bool,
        withoutValidator: DownloadResumeData.WithoutValidator,
        verifying integrity: DownloadIntegrity?,
        resumeData: ResumeDataSink?
    ) throws {
        try integrity?.validate()
        guard PartialFile.claim(data.partialFile) else {
            throw DownloadError.partialFileInUse(data.partialFile)
        }
        let partial: PartialFile
        let handle: FileHandle
        let count: Int64
        do {
            (partial, handle, count) = try PartialFile.reopen(
                data.partialFile,
                for: data.destination,
                keeping: data.bytesKept
            )
        } catch {
            PartialFile.release(data.partialFile)
            throw error
        }
        let kept =
            count > 0 ? KeptBytes(count: count, validator: data.validator, totalBytes: data.totalBytes) : .nothing
        let canContinue =
            kept.validator != nil || (withoutValidator == .continueIfLengthMatches && kept.totalBytes != nil)
        let requested: RequestedBytes =
            continuing && kept.count > 0 && canContinue ? .rest(from: kept.count, ifRange: kept.validator) : .whole
        self.init(
            source: data.url,
            requestURL: url,
            partial: partial,
            handle: handle,
            state: DownloadState(kept: kept, requested: requested),
            integrity: integrity,
            resumed: true,
            resumeData
        )
        continuesWithoutValidator = withoutValidator == .continueIfLengthMatches
    }

    private init(
        source: URL,
        requestURL: URL,
        partial: PartialFile,
        handle: FileHandle,
        state: DownloadState,
        integrity: DownloadIntegrity?,
        resumed: Bool,
        _ resumeData: ResumeDataSink?
    ) {
        self.source = source
        self.requestURL = requestURL
        self.partial = partial
        self.handle = handle
        self.state = state
        self.integrity = integrity
        digest = integrity?.sha256 == nil ? nil : StreamingDigest { try partial.openForReading() }
        pieceChecks = PiecesAsWritten(integrity) { try partial.openForReading() }
        isResumed = resumed
        self.resumeData = resumeData
        keptAtStart = state.kept.count
        recordOnDisk()
    }

    /// Records what a checkpoint may name now (``onDisk``).
    private func recordOnDisk() {
        guard resumeData != nil else { return }
        let kept = state.checkpointable.map { ($0, source, generation) }
        onDisk.withLock { $0 = kept }
    }

    /// What resumes the download from the bytes on disk now, while it goes on: `nil` unless it is resumable, holds
    /// bytes, and they could be flushed to disk.
    ///
    /// The bytes are named only once they are written (the record is made after each write) and flushed (a flush
    /// covers every write made before it, through any descriptor); if the file was emptied to start over meanwhile,
    /// nothing is named.
    func checkpoint() -> DownloadResumeData? {
        guard let (kept, source, generation) = onDisk.withLock({ $0 }), kept.count > 0, partial.flush(),
            onDisk.withLock({ $0?.generation == generation })
        else { return nil }
        return makeResumeData(keeping: kept, from: source)
    }

    /// Resume data for `kept`, from `source` — through the checks resume data read back gets, so that the library
    /// never hands out data it would refuse: only a download from a URL that is not HTTP(S), which cannot continue a
    /// range, fails them (`nil`).
    private func makeResumeData(keeping kept: KeptBytes, from source: URL) -> DownloadResumeData? {
        try? DownloadResumeData(
            url: source,
            destination: partial.destination,
            partialFile: partial.url,
            bytesKept: kept.count,
            validator: kept.validator,
            totalBytes: kept.totalBytes,
            integrity: integrity
        )
    }

    /// A report that a request is on its way: the bytes the file holds, and the length if it is known. Read on the
    /// delegate queue, as the transfer's callbacks are.
    var connecting: TransferProgress {
        let kept = state.kept
        return TransferProgress(bytesTransferred: kept.count, totalBytesExpected: kept.totalBytes, phase: .connecting)
    }

    deinit {
        // A download dropped without an ending (its transfer never started) lets go of its file too.
        if isClaimed { PartialFile.release(partial.url) }
    }

    /// `request` as this download sends it: a resumed download replaces `Range` and `If-Range` with what continues
    /// the bytes kept (or removes them, to start over); a resumable one asks for the body without a content coding,
    /// whose byte offsets a resume could not continue (unless the request names an `Accept-Encoding` itself).
    func prepare(_ request: URLRequest) -> URLRequest {
        var request = request
        if resumeData != nil, request.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        guard isResumed else { return request }
        switch state.requested {
        case .whole:
            request.setValue(nil, forHTTPHeaderField: "Range")
            request.setValue(nil, forHTTPHeaderField: "If-Range")
        case .rest(let start, let validator):
            request.setValue("bytes=\(start)-", forHTTPHeaderField: "Range")
            request.setValue(validator?.headerValue, forHTTPHeaderField: "If-Range")
        case .callersRange:
            preconditionFailure("a resumed download asks for the rest of its file or the whole of it, never a part")
        }
        return request
    }

    // MARK: The transfer

    /// Decides what the response's body is, and empties the file if the body starts it over.
    func accept(_ response: URLResponse) -> DownloadState.BodyAction {
        source = requestURL
        onDisk.withLock { $0 = nil }  // a checkpoint names nothing while the answer may start the file over
        defer { recordOnDisk() }
        let action = state.receive(response)
        guard action == .write(truncating: true), let handle else { return action }
        generation += 1
        pieceChecks?.restarted()
        do {
            try PartialFile.truncate(handle, at: 0)
            return action
        } catch {
            state.failWriting(error)
            return .cancel
        }
    }

    /// Appends the bytes of `data` that the file does not hold yet.
    ///
    /// - Returns: `false` if the write failed, or the body runs past the file's announced length: cancel the task;
    ///   the ending reports the error.
    func write(_ data: Data) -> Bool {
        guard let handle else { return true }
        defer { recordOnDisk() }  // a write that fails, or runs past the length, changes what an ending keeps
        let position = state.position ?? 0  // where the first of these bytes goes in the file
        guard let held = state.admit(Int64(data.count)).map(Int.init) else { return false }
        do {
            if held < data.count {
                let bytes = data.dropFirst(held)  // shares `data`'s storage: the digest takes it without a copy
                try handle.writeAll(bytes)
                // The file holds every byte before these: bytes kept, or held, are read back on the hashing queue.
                digest?.append(bytes, at: position + Int64(held), writtenFrom: 0)
                pieceChecks?.written((position + Int64(held))..<(position + Int64(data.count)))
            }
            state.advance(by: Int64(data.count))
            if let failure = pieceChecks?.failure {
                // A piece failed its digest: the rest of the body cannot make the file right.
                state.failWriting(failure)
                return false
            }
            return true
        } catch {
            state.failWriting(error)
            return false
        }
    }

    /// How far the file has got, counted in bytes of the whole file.
    var progress: TransferProgress? { state.progress }

    /// Moves the file a session without live delivery downloaded in one piece (`location`, possibly on another
    /// volume) into the partial file.
    ///
    /// - Returns: its size, or `nil` if it could not be moved or is longer than announced (the ending reports why).
    func fill(from location: URL?) -> Int64? {
        try? handle?.close()
        handle = nil
        onDisk.withLock { $0 = nil }  // the file is replaced whole
        generation += 1
        digest?.reset()
        pieceChecks?.restarted()
        do {
            guard let location else { throw URLError(.cannotOpenFile) }
            // Moved outside the lock — it may be a copy from another volume, which a `cancel()` must not wait for —
            // and removed after if a cancellation for good came first or meanwhile (swift-corelibs-foundation leaves
            // the file where it wrote it; Apple's Foundation removes it once the completion returns).
            guard cancellation.withLock({ $0 }) != true else {
                try? FileManager.default.removeItem(at: location)
                return nil
            }
            try partial.fill(from: location)
            guard cancellation.withLock({ $0 }) != true else {
                partial.remove()
                return nil
            }
            let size = try PartialFile.size(of: partial.url)
            return state.filled(size: size) ? size : nil
        } catch {
            location.map { try? FileManager.default.removeItem(at: $0) }
            state.failWriting(error)
            return nil
        }
    }

    // MARK: The ending

    /// A cancellation won, on the cancelling thread, before the promise rejects: the ending will lose its decision
    /// (``finish(taskError:statusError:response:resolver:)``) and keep nothing but what a pause of a resumable
    /// download keeps. What it will not keep is removed now, so that whoever sees the rejection finds it gone. The
    /// file stays claimed until the ending lets go of it: nothing else can take its name meanwhile, and a write the
    /// delegate queue is making goes to the removed file, which the system frees once the download closes it.
    func cancelled(_ reason: CancellationReason) {
        let removes = reason != .paused || resumeData == nil
        cancellation.withLock { $0 = removes }
        digest?.stop()  // the download ends without a file to check
        pieceChecks?.stop()
        guard removes else { return }  // kept: flushed and handed out by the ending
        onDisk.withLock { $0 = nil }
        partial.remove()
    }

    /// Ends the download: decides, under the promise's cancellation lock, whether the transfer's own ending or a
    /// cancellation wins; then carries out the winner on the partial file — moves it into place, keeps it for a
    /// resume, or removes it — and resolves the promise.
    ///
    /// A transfer that completes just as it is paused or cancelled therefore never commits its file while the promise
    /// says it was cancelled, and a `cancel()` that loses finds the promise fulfilled with the file in place.
    ///
    /// - Parameters:
    ///   - taskError: the task's error, if it failed.
    ///   - statusError: the error to reject with if the response was an error status.
    ///   - response: the response, if one arrived.
    func finish(
        taskError: Error?,
        statusError: Error?,
        response: URLResponse?,
        resolver: DecidingResolver<Outcome>,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) {
        try? handle?.close()
        handle = nil
        onDisk.withLock { $0 = nil }  // the ending decides what is kept, and its resume data names it
        let kept = state.kept
        let report = { (phase: TransferPhase) in
            progress?(TransferProgress(bytesTransferred: kept.count, totalBytesExpected: kept.totalBytes, phase: phase))
        }
        var ending = state.end(taskError: taskError, statusError: statusError)
        if let failure = pieceChecks?.failure {
            // A piece of the file failed its digest (its verdict came after the last write): no retry, and no resume,
            // can make these bytes right.
            ending = .fail(failure, keeping: nil)
        }
        if case .fail(let error, let keeping) = ending, let attempts, let delay = attempts.delay(after: error),
            attempts.beginRetry(madeProgress: kept.count > keptAtStart)
        {
            // Asked again after the delay: the ending waits for the last transfer.
            if prepareRetry(keeping: keeping) { return attempts.scheduleRetry(after: delay) }
            // The file cannot be made ready: the download ends with its fault, unless a cancellation came meanwhile,
            // which ends it (`endWaiting`).
            guard attempts.abandonRetry() else { return }
        }
        if case .commit = ending, let integrity {
            // Checked before the decision: a long check can still be paused or cancelled. The SHA-256 hashed the body
            // as it was written, and each piece was checked as its last byte was: what is left is to wait for their
            // queues and read back what they did not take.
            // Said before waiting: checks still queued are part of verifying.
            let piecesVerified = pieceChecks?.allPassed ?? (integrity.pieces == nil)
            if integrity.hasWorkLeft(forFileOf: kept.count, digest: digest, piecesVerified: piecesVerified) {
                report(.verifying)
            }
            do {
                let passed = try pieceChecks?.settled().get() ?? []
                try integrity.verify(
                    fileAt: partial.url,
                    digest: digest,
                    verifiedPieces: passed.contains,
                    reading: hooks.willHashPiece
                )
            } catch {
                ending = .fail(error, keeping: nil)
            }
        }
        digest?.stop()  // no retry follows: what is still queued is dropped
        pieceChecks?.stop()
        hooks.willDecide?()
        let decision = resolver.decide {
            hooks.didDecide?()
            if case .commit = ending { report(.movingIntoPlace) }
            return carryOut(ending, response: response)
        }
        switch decision {
        case .resolved:
            break
        case .cancelled(let reason):
            _ = carryOut(state.cancel(reason), response: response)
        case .resolvedAlready:
            preconditionFailure("A download's promise was resolved by something other than the download")
        }
    }

    /// Ends the download when it was cancelled between two transfers (``DownloadAttempts``), on the delegate queue: a
    /// pause keeps the bytes the file holds, flushed, with their resume data; any other cancellation removes them.
    func endWaiting(_ resolver: DecidingResolver<Outcome>) {
        try? handle?.close()
        handle = nil
        onDisk.withLock { $0 = nil }
        let decision = resolver.decide {
            preconditionFailure("A download is ended between two transfers only once a cancellation has won")
        }
        if case .cancelled(let reason) = decision {
            _ = carryOut(state.cancel(reason), response: nil)
        }
    }

    /// Gets the file ready for the next attempt after a fault that may pass: a resumable download keeps the bytes it
    /// holds under a strong validator — flushed, and asked for no more — and asks for the rest; any other download
    /// starts over from an empty file.
    ///
    /// - Returns: `false` if the file cannot be reopened: the download ends with the fault instead.
    ///
    /// It touches the file only if no cancellation has won (under the lock ``cancelled(_:)`` takes): a cancel's removal
    /// is not undone, and a pause keeps what the file held.
    private func prepareRetry(keeping kept: KeptBytes?) -> Bool {
        let identified = kept?.validator != nil || (continuesWithoutValidator && kept?.totalBytes != nil)
        let continues = resumeData != nil && (kept?.count ?? 0) > 0 && identified && partial.flush()
        let keep = continues ? kept ?? .nothing : .nothing
        return cancellation.withLock { cancelled in
            guard cancelled == nil else { return false }
            do {
                let (_, handle, count) = try PartialFile.reopen(
                    partial.url,
                    for: partial.destination,
                    keeping: keep.count
                )
                self.handle = handle
                generation += 1
                pieceChecks?.restarted()
                let startOver: RequestedBytes = state.requested == .callersRange ? .callersRange : .whole
                let requested: RequestedBytes = count > 0 ? .rest(from: count, ifRange: keep.validator) : startOver
                state = DownloadState(kept: count > 0 ? keep : .nothing, requested: requested)
                isResumed = isResumed || count > 0
                keptAtStart = count
                recordOnDisk()
                return true
            } catch {
                return false
            }
        }
    }

    /// Carries out `ending` on the partial file, then publishes the resume data (or `nil`).
    ///
    /// - Returns: what the promise resolves with.
    private func carryOut(_ ending: DownloadState.Ending, response: URLResponse?) -> Result<Outcome> {
        switch ending {
        case .commit:
            guard let response else {
                return carryOut(.fail(URLError(.badServerResponse), keeping: nil), response: nil)
            }
            do {
                try partial.commit()
                publish(nil)
                return .fulfilled((partial.destination, response))
            } catch {
                publish(nil)  // `commit()` removed the partial file
                return .rejected(error)
            }
        case .fail(let error, let kept?) where resumeData != nil:
            // The kept bytes are on disk before anyone reads the resume data: an app that saves it may then lose
            // power, not only crash. Bytes that cannot be flushed are not kept.
            guard kept.count == 0 || partial.flush() else {
                return carryOut(.fail(error, keeping: nil), response: response)
            }
            // A download from a URL that is not HTTP(S) cannot continue a range: it keeps nothing.
            guard let data = makeResumeData(keeping: kept, from: source) else {
                return carryOut(.fail(error, keeping: nil), response: response)
            }
            publish(data)
            return .rejected(error)
        case .fail(let error, _):
            partial.remove()
            publish(nil)
            return .rejected(error)
        }
    }

    /// The last thing a download does with its partial file, on every ending: gives up its hold on the file (it no
    /// longer writes, moves or removes it), then hands `data` (`nil`: nothing to resume) to whoever waits for the
    /// resume data — who may resume from it at once, even inside that callback.
    private func publish(_ data: DownloadResumeData?) {
        attempts = nil
        if isClaimed {
            isClaimed = false
            PartialFile.release(partial.url)
        }
        resumeData?(data)
        ended.withLock { ended in
            defer { ended = nil }
            return ended
        }?()
    }

    /// Runs `body` once the download has ended, after its resume data is out; set before it starts.
    func whenEnded(_ body: @escaping @Sendable () -> Void) {
        ended.withLock { $0 = body }
    }
}
