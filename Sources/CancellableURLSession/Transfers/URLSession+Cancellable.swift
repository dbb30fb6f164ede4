public import Cancellable
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLSession {
    /// Makes a session whose cancellable transfers report progress as bytes arrive and stream downloads
    /// straight to disk.
    ///
    /// ```swift
    /// let session = URLSession.withProgressReporting()
    /// session.cancellableData(from: url) { print($0.fractionCompleted ?? 0) }
    /// ```
    ///
    /// Any session works with the `cancellable…` methods, and one without a delegate (`URLSession.shared`,
    /// `URLSession(configuration:)`) reports live progress too: on Linux, and on Apple platforms before macOS 12 and
    /// iOS 15, its transfers run on a session like this one that the library makes with its configuration. Make one
    /// yourself to choose the delegate queue. Its delegate belongs to the library: do not use the session with
    /// delegate-based APIs of your own (a session with a delegate of your own keeps it: its transfers use
    /// completion handlers, and report progress once, at the end). Like any session with a delegate, it lives until
    /// it is invalidated: call `finishTasksAndInvalidate()` when you no longer need it (running transfers finish
    /// first).
    ///
    /// On Linux the session has no URL cache, whatever `configuration` says: swift-corelibs-foundation ends the
    /// process when a transfer that is looking its response up in a cache is cancelled.
    ///
    /// - Parameters:
    ///   - configuration: the session's configuration.
    ///   - delegateQueue: where the session's delegate calls — and so the `progress` closures — run; `nil` for a
    ///     serial queue the session makes. A transfer's callbacks must come one at a time, in order (bytes are
    ///     written to the file in the order they arrive), so a queue that runs several operations at once is not
    ///     used as it is: the session gets a serial queue that runs its operations on `delegateQueue`'s
    ///     `underlyingQueue` if it has one (a private thread otherwise). `OperationQueue.main` is serial, and used
    ///     as it is.
    public static func withProgressReporting(
        configuration: URLSessionConfiguration = .default,
        delegateQueue: OperationQueue? = nil
    ) -> URLSession {
        #if canImport(FoundationNetworking)
        // swift-corelibs-foundation: a data task that looks its response up in a URL cache can be cancelled into a
        // crash (see `taskIntoMemory`), and every transfer of this session is a data task.
        let configuration = configuration.copy() as! URLSessionConfiguration
        configuration.urlCache = nil
        #endif
        return URLSession(
            configuration: configuration,
            delegate: TransferRouter(),
            delegateQueue: serial(delegateQueue)
        )
    }

    /// `queue` if it runs one operation at a time (or is `nil`); otherwise a serial queue that runs its operations
    /// on `queue`'s dispatch queue, if it has one. (URLSession's documentation asks for a serial delegate queue; on a
    /// concurrent one, two pieces of one body could be written to the file at once, or out of order.)
    static func serial(_ queue: OperationQueue?) -> OperationQueue? {
        guard let queue, queue.maxConcurrentOperationCount != 1 else { return queue }
        return SerialDelegateQueue(runningOn: queue)
    }

    /// Loads `request` into memory; `cancel()` cancels the transfer and closes the connection.
    ///
    /// ```swift
    /// let page = URLSession.shared.cancellableData(for: URLRequest(url: url))
    /// page.done { data, response in show(data) }.catch { show($0) }
    /// stopButton.onTap { page.cancel() }
    /// ```
    ///
    /// On Linux, on a session with a delegate of your own and a URL cache, the transfer is a download task whose file
    /// is read into memory: swift-corelibs-foundation can end the process when a data task is cancelled while it
    /// looks its response up in the cache. The file is removed once read; one of a transfer cancelled before it ended
    /// stays in the temporary directory (swift-corelibs-foundation neither removes it nor says where it is). Sessions
    /// without a delegate, and those made by ``withProgressReporting(configuration:delegateQueue:)``, leave nothing
    /// there: their transfers use no URL cache on Linux.
    ///
    /// - Parameters:
    ///   - file: where the caller made the promise (`#fileID`), which `PromiseDiagnostics` and PromiseTesting's leak
    ///     check report if it is left pending (debug builds only).
    ///   - line: the line of that call (`#line`), likewise.
    ///   - progress: bytes received so far — as they arrive, unless the session has a delegate of your own (then once,
    ///     at the end).
    /// - Returns: the body and the response. A status outside 200–299 rejects with ``HTTPStatusError``
    ///   (carrying the response and the body); a network failure rejects with the `URLError`.
    public func cancellableData(
        for request: URLRequest,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        let transport = transport
        return CancellablePromise(file: file, line: line) { resolver in
            let task: URLSessionTask
            let cancel: @Sendable () -> Void
            if let router = transport.router {
                task = transport.session.dataTask(with: request)
                cancel = router.register(
                    TransferDelegate(sink: .memory(resolver), reportsUpload: false, progress: progress),
                    for: task
                )
            } else {
                let cancellation = TaskCancellation()
                task = taskIntoMemory(for: request, uploading: nil) { data, response, error in
                    cancellation.complete()
                    let outcome = Self.outcome(of: data, response, error)
                    if case .success(let (data, _)) = outcome {
                        let size = Int64(data.count)
                        progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
                    }
                    resolver.resolve(outcome)
                }
                cancel = { cancellation.cancel(task) }
            }
            task.resume()
            return cancel
        }
    }

    /// Loads `url` into memory; `cancel()` cancels the transfer and closes the connection.
    ///
    /// ```swift
    /// URLSession.shared.cancellableData(from: url).done { data, _ in show(data) }
    /// ```
    public func cancellableData(
        from url: URL,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        cancellableData(for: URLRequest(url: url), file: file, line: line, progress: progress)
    }

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
                transport: transport,
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
        let transport = transport
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

    /// Uploads `body` with `request` (its method, `POST` if unset) and loads the response into memory.
    ///
    /// ```swift
    /// var request = URLRequest(url: uploadURL)
    /// request.httpMethod = "PUT"
    /// URLSession.shared.cancellableUpload(for: request, from: photo).done { _, response in … }
    /// ```
    ///
    /// On Linux, on a session with a delegate of your own and a URL cache, the transfer is a download task carrying
    /// `body`, as for ``cancellableData(for:file:line:progress:)``.
    ///
    /// - Parameters:
    ///   - file: where the caller made the promise (`#fileID`), which `PromiseDiagnostics` and PromiseTesting's leak
    ///     check report if it is left pending (debug builds only).
    ///   - line: the line of that call (`#line`), likewise.
    ///   - progress: bytes *sent* so far: as they go, unless the session has a delegate of your own (then once, at the
    ///     end).
    public func cancellableUpload(
        for request: URLRequest,
        from body: Data,
        file: StaticString = #fileID,
        line: UInt = #line,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        var request = request
        if request.httpMethod == nil || request.httpMethod == "GET" {
            request.httpMethod = "POST"
        }
        let transport = transport
        return CancellablePromise(file: file, line: line) { resolver in
            let task: URLSessionTask
            let cancel: @Sendable () -> Void
            if let router = transport.router {
                task = transport.session.uploadTask(with: request, from: body)
                cancel = router.register(
                    TransferDelegate(sink: .memory(resolver), reportsUpload: true, progress: progress),
                    for: task
                )
            } else {
                let size = Int64(body.count)
                let cancellation = TaskCancellation()
                task = taskIntoMemory(for: request, uploading: body) { data, response, error in
                    cancellation.complete()
                    if error == nil {
                        progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
                    }
                    resolver.resolve(Self.outcome(of: data, response, error))
                }
                cancel = { cancellation.cancel(task) }
            }
            task.resume()
            return cancel
        }
    }

    /// A task that loads the response to `request` (sending `body`, if any) into memory and hands it to
    /// `completion`, on a session without live delivery.
    ///
    /// On swift-corelibs-foundation a data or upload task on a session with a URL cache looks its response up in
    /// the cache on a background queue before it starts, and a cancellation made meanwhile can be carried out after
    /// the task has completed and been forgotten, which ends the process ("Trying to access a behaviour for a task
    /// that in not in the registry"). A download task never looks in the cache: there, on such a session, the
    /// transfer is a download task — which sends the request's body like an upload task — whose file is read into
    /// memory. Unless the request goes to a `URLProtocol` of the app's (a stub, say), which swift-corelibs-foundation
    /// gives no file to write a download to.
    private func taskIntoMemory(
        for request: URLRequest,
        uploading body: Data?,
        completion: @escaping @Sendable (Data, URLResponse?, Error?) -> Void
    ) -> URLSessionTask {
        #if canImport(FoundationNetworking)
        if configuration.urlCache != nil, Self.isServedByFoundation(request, on: configuration) {
            var request = request
            if let body { request.httpBody = body }
            return downloadTask(with: request) { location, response, error in
                var data = Data()
                var failure = error
                if let location {
                    if failure == nil {
                        do { data = try Data(contentsOf: location) } catch { failure = error }
                    }
                    // swift-corelibs-foundation leaves the file where it wrote it (Apple's Foundation removes it once
                    // this returns): removed here, before the promise resolves, or every transfer would leave one
                    // behind in the temporary directory.
                    try? FileManager.default.removeItem(at: location)
                }
                completion(data, response, failure)
            }
        }
        #endif
        guard let body else {
            return dataTask(with: request) { data, response, error in completion(data ?? Data(), response, error) }
        }
        return uploadTask(with: request, from: body) { data, response, error in
            completion(data ?? Data(), response, error)
        }
    }

    #if canImport(FoundationNetworking)
    /// FoundationNetworking's own protocols: those of a default configuration, read once.
    private static let foundationProtocols = (URLSessionConfiguration.default.protocolClasses ?? []).map(
        ObjectIdentifier.init
    )

    /// Whether the first of the session's protocols that can load `request` is one of FoundationNetworking's own.
    private static func isServedByFoundation(_ request: URLRequest, on configuration: URLSessionConfiguration) -> Bool {
        let loaders = (configuration.protocolClasses ?? []).compactMap { $0 as? URLProtocol.Type }
        guard let loader = loaders.first(where: { $0.canInit(with: request) }) else { return false }
        return foundationProtocols.contains(ObjectIdentifier(loader))
    }
    #endif

    /// Ends a download on a session without live delivery: the whole body arrived at `location` at once.
    static func completeDownload(
        _ file: FileDownload,
        _ resolver: DecidingResolver<FileDownload.Outcome>,
        _ location: URL?,
        _ response: URLResponse?,
        _ error: Error?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        var statusError: Error?
        if error == nil, let response {
            switch file.accept(response) {
            case .write:
                if let size = file.fill(from: location) {
                    progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
                }
            case .collect:
                let body = location.flatMap { try? PartialFile.contents(of: $0) } ?? Data()
                statusError = HTTPStatusError(checking: response, body: body)
            case .ignore, .cancel:
                break  // the file already holds every byte (a 416), or the ending says why not
            }
        }
        file.finish(
            taskError: error,
            statusError: statusError,
            response: response,
            resolver: resolver,
            progress: progress
        )
    }
}
