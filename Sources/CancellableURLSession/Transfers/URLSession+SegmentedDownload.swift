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
    ///   forgiven as ``SegmentedDownloadOptions/retrying`` says (not at all by default): it stops only the request it
    ///   hit, and the mirror is asked again once it has rested.
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

    /// One URL's download on the segmented engine, as its one mirror, asking for the rest of the file
    /// (``SegmentSchedule/Requests/rest``): a server without ranges is taken whole, a forgiven fault asks for the
    /// rest under `If-Range`. A request with a `Range` of its own asks for a part, which is the file it writes
    /// (``SegmentSchedule/Requests/part``). `cancellableDownload` and `resumableDownload` move onto it once it has
    /// every single-URL behaviour (design note 0007, step 4); internal until then.
    func restDownload(
        _ request: URLRequest,
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = SegmentedDownloadOptions(),
        file: StaticString = #file,
        line: UInt = #line,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)? = nil
    ) -> CancellablePromise<SegmentedDownloadResult> {
        let requests: SegmentSchedule.Requests = request.value(forHTTPHeaderField: "Range") == nil ? .rest : .part
        return segmented(
            [request],
            integrity: integrity,
            options: options,
            file: file,
            line: line,
            progress: progress,
            allowingARange: requests == .part
        ) {
            let (partial, handle) = try PartialFile.create(for: destination)
            let schedule = SegmentSchedule.fresh(mirrors: 1, options: options, requests: requests, integrity: integrity)
            return (partial, handle, schedule)  // `create` claimed the file
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
    /// integrity are checked — handing its resume data to `resumeData`, if given (and `nil` if it is refused). A
    /// mirror's request may carry a `Range` of its own only if `allowingARange` (the caller's part of one URL).
    private func segmented(
        _ mirrors: [URLRequest],
        integrity: DownloadIntegrity?,
        options: SegmentedDownloadOptions,
        file: StaticString,
        line: UInt,
        progress: (@Sendable (SegmentedDownloadProgress) -> Void)?,
        resumeData: (@Sendable (SegmentedDownloadResumeData?) -> Void)? = nil,
        allowingARange: Bool = false,
        prepare: () throws -> SegmentedStart,
        made: (SegmentedDownloadEngine) -> Void = { _ in }
    ) -> CancellablePromise<SegmentedDownloadResult> {
        let engine: SegmentedDownloadEngine
        do {
            guard !mirrors.isEmpty else { throw SegmentedDownloadError.noMirrors }
            if let problem = options.problem { throw SegmentedDownloadError.invalidOptions(problem) }
            for request in mirrors {
                guard request.url?.isHTTPWithHost == true,
                    allowingARange || request.value(forHTTPHeaderField: "Range") == nil
                else { throw SegmentedDownloadError.invalidMirror(request.url) }
            }
            let transport = lastingTransport
            guard let router = transport.router else { throw SegmentedDownloadError.needsLiveDelivery }
            try integrity?.validate()
            let (partial, handle, schedule) = try prepare()
            engine = SegmentedDownloadEngine(
                transport: transport,
                router: router,
                requests: mirrors,
                partial: partial,
                handle: handle,
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
