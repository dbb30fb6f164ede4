public import Cancellable
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLSession {
    /// Who hands a new task's callbacks to its `TransferDelegate`: the session's own router (a session made by
    /// ``withProgressReporting(configuration:delegateQueue:)``); on Apple platforms from macOS 12 and iOS 15, a
    /// router set as the task's own delegate when the session has no delegate (`URLSession.shared`), so that
    /// such sessions report live progress too; otherwise none, and the task uses a completion handler.
    /// FoundationNetworking on Linux never calls per-task delegates.
    fileprivate var transferRouter: TransferRouter? {
        if let router = delegate as? TransferRouter { return router }
        #if !canImport(FoundationNetworking)
        if delegate == nil, #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) {
            return TransferRouter(perTask: true)
        }
        #endif
        return nil
    }
}

extension URLSession {
    /// Makes a session whose cancellable transfers report progress as bytes arrive and stream downloads
    /// straight to disk.
    ///
    /// ```swift
    /// let session = URLSession.withProgressReporting()
    /// session.cancellableData(from: url) { print($0.fractionCompleted ?? 0) }
    /// ```
    ///
    /// Any session works with the `cancellable…` methods; this one is needed for live progress on Linux, where
    /// FoundationNetworking reports bytes only to a session's delegate, and on Apple platforms before macOS 12
    /// and iOS 15 (later ones report live progress on any session without a delegate, such as
    /// `URLSession.shared`). Its delegate belongs to the library: do not use the session with delegate-based
    /// APIs of your own. Like any session with a delegate, it lives until it is invalidated: call
    /// `finishTasksAndInvalidate()` when you no longer need it (running transfers finish first).
    public static func withProgressReporting(
        configuration: URLSessionConfiguration = .default,
        delegateQueue: OperationQueue? = nil
    ) -> URLSession {
        URLSession(configuration: configuration, delegate: TransferRouter(), delegateQueue: delegateQueue)
    }

    /// Loads `request` into memory; `cancel()` cancels the transfer and closes the connection.
    ///
    /// ```swift
    /// let page = URLSession.shared.cancellableData(for: URLRequest(url: url))
    /// page.done { data, response in show(data) }.catch { show($0) }
    /// stopButton.onTap { page.cancel() }
    /// ```
    ///
    /// - Parameter progress: bytes received so far — as they arrive on a session made by
    ///   ``withProgressReporting(configuration:delegateQueue:)`` (or, from macOS 12 and iOS 15, on a session
    ///   without a delegate), once at the end on any other session.
    /// - Returns: the body and the response. A status outside 200–299 rejects with ``HTTPStatusError``
    ///   (carrying the response and the body); a network failure rejects with the `URLError`.
    public func cancellableData(
        for request: URLRequest,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        CancellablePromise { resolver in
            let task: URLSessionTask
            if let router = transferRouter {
                task = dataTask(with: request)
                router.register(
                    TransferDelegate(resolver: resolver, sink: .memory, reportsUpload: false, progress: progress),
                    for: task
                )
            } else {
                task = dataTask(with: request) { data, response, error in
                    Self.complete(resolver, data ?? Data(), response, error, progress: progress)
                }
            }
            task.resume()
            return { task.cancel() }
        }
        .map(on: nil) { (data: $0.body, response: $0.response) }
    }

    /// Loads `url` into memory; `cancel()` cancels the transfer and closes the connection.
    ///
    /// ```swift
    /// URLSession.shared.cancellableData(from: url).done { data, _ in show(data) }
    /// ```
    public func cancellableData(
        from url: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        cancellableData(for: URLRequest(url: url), progress: progress)
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
    /// outside 200–299 (``HTTPStatusError``), the partial file is removed and a file already at the destination
    /// is left as it was. A destination whose directory cannot be written, or that is a directory, rejects at once
    /// with the file system's error, and nothing is sent.
    ///
    /// - Returns: the destination URL and the response.
    public func cancellableDownload(
        for request: URLRequest,
        to destination: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(url: URL, response: URLResponse)> {
        let partial: PartialFile
        let handle: FileHandle
        do {
            (partial, handle) = try PartialFile.create(for: destination)
        } catch {
            return CancellablePromise(error: error)
        }
        return CancellablePromise { resolver in
            let task: URLSessionTask
            if let router = transferRouter {
                task = dataTask(with: request)
                let transfer = TransferDelegate(
                    resolver: resolver,
                    sink: .file(handle, partial),
                    reportsUpload: false,
                    progress: progress
                )
                router.register(transfer, for: task)
            } else {
                try? handle.close()
                task = downloadTask(with: request) { location, response, error in
                    Self.completeDownload(resolver, location, partial, response, error, progress: progress)
                }
            }
            task.resume()
            return { task.cancel() }
        }
        .map(on: nil) { (url: $0.fileURL ?? destination, response: $0.response) }
    }

    /// Uploads `body` with `request` (its method, `POST` if unset) and loads the response into memory.
    ///
    /// ```swift
    /// var request = URLRequest(url: uploadURL)
    /// request.httpMethod = "PUT"
    /// URLSession.shared.cancellableUpload(for: request, from: photo).done { _, response in … }
    /// ```
    ///
    /// - Parameter progress: bytes *sent* so far (live on a ``withProgressReporting(configuration:delegateQueue:)``
    ///   session, or from macOS 12 and iOS 15 on a session without a delegate; once at the end otherwise).
    public func cancellableUpload(
        for request: URLRequest,
        from body: Data,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        var request = request
        if request.httpMethod == nil || request.httpMethod == "GET" {
            request.httpMethod = "POST"
        }
        return CancellablePromise { resolver in
            let task: URLSessionTask
            if let router = transferRouter {
                task = uploadTask(with: request, from: body)
                router.register(
                    TransferDelegate(resolver: resolver, sink: .memory, reportsUpload: true, progress: progress),
                    for: task
                )
            } else {
                let size = Int64(body.count)
                task = uploadTask(with: request, from: body) { data, response, error in
                    if error == nil {
                        progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
                    }
                    Self.complete(resolver, data ?? Data(), response, error, progress: nil)
                }
            }
            task.resume()
            return { task.cancel() }
        }
        .map(on: nil) { (data: $0.body, response: $0.response) }
    }

    private static func complete(
        _ resolver: Resolver<(body: Data, fileURL: URL?, response: URLResponse)>,
        _ body: Data,
        _ response: URLResponse?,
        _ error: Error?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        if let error {
            return resolver.reject(error)
        }
        guard let response else {
            return resolver.reject(URLError(.badServerResponse))
        }
        if let http = response as? HTTPURLResponse, !response.isSuccess {
            return resolver.reject(HTTPStatusError(response: http, body: body))
        }
        let size = Int64(body.count)
        progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
        resolver.fulfill((body, nil, response))
    }

    private static func completeDownload(
        _ resolver: Resolver<(body: Data, fileURL: URL?, response: URLResponse)>,
        _ location: URL?,
        _ partial: PartialFile,
        _ response: URLResponse?,
        _ error: Error?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        guard error == nil, let location, let response else {
            partial.remove()
            return resolver.reject(error ?? URLError(.badServerResponse))
        }
        if let http = response as? HTTPURLResponse, !response.isSuccess {
            let body = (try? Data(contentsOf: location)) ?? Data()
            partial.remove()
            return resolver.reject(HTTPStatusError(response: http, body: body))
        }
        do {
            // The session's file may be on another volume: move it next to the destination, then rename it over.
            try partial.fill(from: location)
            try partial.commit()
            let attributes = try? FileManager.default.attributesOfItem(atPath: partial.destination.path)
            let size = Int64((attributes?[.size] as? Int) ?? 0)
            progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
            resolver.fulfill((Data(), partial.destination, response))
        } catch {
            partial.remove()
            resolver.reject(error)
        }
    }
}
