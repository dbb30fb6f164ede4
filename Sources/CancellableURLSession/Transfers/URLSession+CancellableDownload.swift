public import Cancellable
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// Cancellable and resumable single-URL downloads.
extension URLSession {
    /// Downloads `request` to the file at `destination`; `cancel()` cancels the transfer.
    ///
    /// ```swift
    /// let file = FileManager.default.temporaryDirectory.appendingPathComponent("big.iso")
    /// let download = URLSession.shared.cancellableDownload(for: URLRequest(url: url), to: file)
    /// download.done { url, _ in open(url) }
    /// ```
    ///
    /// The body is written to a hidden file next to the destination (`.<name>.<UUID>.partial`), which replaces the
    /// destination in one step when the download succeeds. If the transfer fails, is cancelled, or the status is
    /// outside 200–299 (``HTTPStatusError``), the partial file is removed — before the promise rejects, so that a
    /// `catch` on any queue finds it gone — and a file already at the destination is left as it was. A destination
    /// whose folder does not exist (`CocoaError.fileNoSuchFile`) or cannot be written (`.fileWriteNoPermission`), that
    /// is a folder (`.fileWriteFileExists`), or whose path has `..` (`.fileWriteInvalidFileName`) rejects at once, and
    /// nothing is sent. To pause and continue later, use
    /// ``resumableDownload(for:to:verifying:retrying:file:line:progress:)``.
    ///
    /// A request with its own `Range` header downloads that part: the `206` answering it is the file (a server
    /// that ignores ranges answers `200` with the whole file, which is written instead). Without one, a `206` is not
    /// the file and rejects with ``DownloadError/unexpectedContentRange(_:)``.
    ///
    /// - Parameters:
    ///   - integrity: the length and/or SHA-256 the file must have; a mismatch rejects with
    ///     ``DownloadIntegrityError`` and leaves the destination as it was.
    ///   - policy: how many faults that may pass (a connection lost, a `503`…) are forgiven, and how long to pause
    ///     before asking again (``DownloadRetryPolicy``); none by default. This download cannot resume, so a retry
    ///     starts over; a resumable one continues from the bytes it holds. A policy out of range rejects at once with
    ///     ``DownloadError/invalidRetryPolicy(_:)``.
    ///   - file: where the caller made the promise (`#fileID`), which `PromiseDiagnostics` and PromiseTesting's leak
    ///     check report if it is left pending (debug builds only).
    ///   - line: the line of that call (`#line`), likewise.
    /// - Returns: the destination URL and the response.
    public func cancellableDownload(
        for request: URLRequest,
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        retrying policy: DownloadRetryPolicy = .none,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(url: URL, response: URLResponse)> {
        do {
            if let problem = policy.problem { throw DownloadError.invalidRetryPolicy(problem) }
            let download = try FileDownload(request, to: destination, verifying: integrity, resumeData: nil)
            return self.download(
                request,
                into: download,
                transport: transport(retrying: policy),
                retrying: policy,
                file: file,
                line: line,
                progress: progress
            )
        } catch {
            return CancellablePromise(error: error)
        }
    }

    /// Downloads `url` to the file at `destination`; `cancel()` cancels the transfer.
    ///
    /// ```swift
    /// let download = URLSession.shared.cancellableDownload(from: url, to: file) { print($0.fractionCompleted ?? 0) }
    /// stopButton.onTap { download.cancel() }
    /// ```
    ///
    /// Behaves as ``cancellableDownload(for:to:verifying:retrying:file:line:progress:)``.
    public func cancellableDownload(
        from url: URL,
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        retrying policy: DownloadRetryPolicy = .none,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(url: URL, response: URLResponse)> {
        cancellableDownload(
            for: URLRequest(url: url),
            to: destination,
            verifying: integrity,
            retrying: policy,
            file: file,
            line: line,
            progress: progress
        )
    }

    /// Downloads `request` to the file at `destination`, in a way that can pause and continue later from the byte
    /// where it stopped.
    ///
    /// ```swift
    /// let download = session.resumableDownload(for: URLRequest(url: url), to: file)
    /// download.pause().done { saved = $0 }                      // later: session.resumeDownload(saved!)
    /// ```
    ///
    /// Behaves as ``cancellableDownload(for:to:verifying:retrying:file:line:progress:)``, except when it stops early:
    /// see ``ResumableDownload``; and a retry (`policy`, ``DownloadRetryPolicy``) continues from the bytes it holds.
    /// It downloads the whole file, which a resume continues: a request with its own `Range` header rejects at once
    /// with ``DownloadError/rangeRequested(_:)``, and nothing is sent.
    public func resumableDownload(
        for request: URLRequest,
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        retrying policy: DownloadRetryPolicy = .none,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> ResumableDownload {
        resumable(request, retrying: policy, file: file, line: line, progress: progress) { _, deliver in
            try FileDownload(request, to: destination, verifying: integrity, resumeData: deliver)
        }
    }

    /// Downloads `url` to the file at `destination`, in a way that can pause and continue later.
    ///
    /// ```swift
    /// let download = session.resumableDownload(from: url, to: file) { print($0.fractionCompleted ?? 0) }
    /// ```
    public func resumableDownload(
        from url: URL,
        to destination: URL,
        verifying integrity: DownloadIntegrity? = nil,
        retrying policy: DownloadRetryPolicy = .none,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> ResumableDownload {
        resumableDownload(
            for: URLRequest(url: url),
            to: destination,
            verifying: integrity,
            retrying: policy,
            file: file,
            line: line,
            progress: progress
        )
    }

    /// Continues a paused download from the byte where it stopped, from the URL it came from or from `request`
    /// (another mirror of the same file).
    ///
    /// ```swift
    /// let resumed = session.resumeDownload(saved) { print($0.bytesTransferred) }   // starts at saved.bytesKept
    /// let fromMirror = session.resumeDownload(saved, from: URLRequest(url: mirror))
    /// ```
    ///
    /// The download holds the bytes kept from the start: if it ends before the server answers — paused, a refused
    /// connection, a mirror that is down — its resume data keeps them all. It asks for the rest with
    /// `Range: bytes=<bytesKept>-` and `If-Range: <validator>`, and continues the bytes only if the answer is of the
    /// same file:
    ///
    /// - `206` that starts at `bytesKept`, repeats the validator, names the same total length and has no content
    ///   coding: the bytes are appended; progress counts on from `bytesKept`.
    /// - `200`: the server ignores ranges, or the file changed. If it repeats the validator, the file is the same and
    ///   the bytes kept stay (the ones it sends again are not rewritten); otherwise the download starts over from byte
    ///   0.
    /// - `416` when the partial file already holds every byte: the download finishes with it. Any other `416`, or a
    ///   `206` that is not of the same file, rejects with ``DownloadError`` and removes the bytes.
    ///
    /// Resume data is untrusted input, checked when decoded (``DownloadResumeData/init(from:)``); a resume also opens
    /// the partial file only if it is a regular file, not a link, with no other hard link, and otherwise rejects with
    /// ``DownloadError/partialFileNotOwned(_:)`` before any request, touching nothing.
    ///
    /// Resume data without a strong validator starts over, unless `withoutValidator` is
    /// ``DownloadResumeData/WithoutValidator/continueIfLengthMatches``; so does resume data whose partial file is
    /// gone or shorter than it says, and every resume on a session that does not deliver bytes as they arrive (see
    /// ``ResumableDownload``).
    ///
    /// - Parameters:
    ///   - resumeData: what ``ResumableDownload/pause()`` gave.
    ///   - destination: where the file goes; `nil` for `resumeData.destination`. Given, the partial file is looked
    ///     for next to it (``DownloadResumeData/relocated(to:)``): for resume data whose folder has moved since —
    ///     an iOS app's container moves when the app is updated — or which should not decide where the app writes.
    ///   - request: where to continue from; `nil` for `resumeData.url`. Its `Range` and `If-Range` are replaced.
    ///   - integrity: what the finished file must be; `nil` for the expectation in `resumeData`, if any.
    ///   - withoutValidator: what to do with bytes no strong validator identifies: start over (the default), or
    ///     continue them if the server's total length is the same.
    ///   - policy: how many faults that may pass are forgiven, each retry continuing from the bytes then held
    ///     (``DownloadRetryPolicy``); none by default.
    ///   - file: where the caller made the promise (`#fileID`), which `PromiseDiagnostics` and PromiseTesting's leak
    ///     check report if it is left pending (debug builds only).
    ///   - line: the line of that call (`#line`), likewise.
    public func resumeDownload(
        _ resumeData: DownloadResumeData,
        to destination: URL? = nil,
        from request: URLRequest? = nil,
        verifying integrity: DownloadIntegrity? = nil,
        withoutValidator: DownloadResumeData.WithoutValidator = .startOver,
        retrying policy: DownloadRetryPolicy = .none,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> ResumableDownload {
        let request = request ?? URLRequest(url: resumeData.url)
        return resumable(request, retrying: policy, file: file, line: line, progress: progress) { transport, deliver in
            try FileDownload(
                resuming: destination.map { try resumeData.relocated(to: $0) } ?? resumeData,
                from: request.url ?? resumeData.url,
                continuing: transport.isLive,
                withoutValidator: withoutValidator,
                verifying: integrity ?? resumeData.integrity,
                resumeData: deliver
            )
        }
    }

    /// Where a single-URL download that retries as `policy` says runs: one that may make a request after it started
    /// runs where the app cannot invalidate its session under it (``lastingTransport``).
    private func transport(retrying policy: DownloadRetryPolicy) -> Transport {
        policy.retries > 0 ? lastingTransport : transport
    }

    /// A resumable download of `request` into the file `makeFile` prepares (given where the transfer runs, and what
    /// receives the resume data); rejected at once if `makeFile` throws.
    private func resumable(
        _ request: URLRequest,
        retrying policy: DownloadRetryPolicy,
        file: StaticString,
        line: UInt,
        progress: (@Sendable (TransferProgress) -> Void)?,
        into makeFile: (Transport, @escaping FileDownload.ResumeDataSink) throws -> FileDownload
    ) -> ResumableDownload {
        let transport = transport(retrying: policy)
        let (resumeData, deliver) = Guarantee<DownloadResumeData?>.pending()
        do {
            if let problem = policy.problem { throw DownloadError.invalidRetryPolicy(problem) }
            let download = try makeFile(transport, deliver)
            // Let go of when the download ends: the app's progress closure may hold the `ResumableDownload` (to take
            // checkpoints), and the download holds that closure while it runs. (Not a weak reference: LeakSanitizer
            // cannot follow the tagged pointer to a weak reference's side table.)
            let held = Locked<FileDownload?>(download)
            download.whenEnded { held.withLock { $0 = nil } }
            return ResumableDownload(
                promise: self.download(
                    request,
                    into: download,
                    transport: transport,
                    retrying: policy,
                    file: file,
                    line: line,
                    progress: progress
                ),
                resumeData: resumeData,
                checkpoint: { held.withLock { $0 }?.checkpoint() }
            )
        } catch {
            deliver(nil)
            return ResumableDownload(promise: CancellablePromise(error: error), resumeData: resumeData) { nil }
        }
    }

    /// Downloads `request` into `file`, retrying faults that may pass as `policy` says (``DownloadAttempts``): each
    /// transfer streamed through the transport's router if it has live delivery, a download task with a completion
    /// handler otherwise. How it ends — and whether that or a cancellation wins — is `file`'s to decide, under the
    /// promise's cancellation lock. A cancellation that wins stops the current transfer and removes what it does not
    /// keep before the promise rejects (``FileDownload/cancelled(_:)``).
    private func download(
        _ request: URLRequest,
        into download: FileDownload,
        transport: Transport,
        retrying policy: DownloadRetryPolicy,
        file: StaticString,
        line: UInt,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) -> CancellablePromise<(url: URL, response: URLResponse)> {
        CancellablePromise(
            file: file,
            line: line,
            deciding: { resolver in
                let attempts = DownloadAttempts(
                    request,
                    into: download,
                    transport: transport,
                    policy: policy,
                    resolver: resolver,
                    progress: progress
                )
                download.attempts = attempts
                attempts.start()
                return { reason in
                    download.hooks.willCancelTask?()
                    attempts.cancel(reason)
                    download.cancelled(reason)
                }
            }
        )
    }
}
