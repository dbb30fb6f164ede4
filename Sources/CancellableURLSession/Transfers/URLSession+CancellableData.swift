public import Cancellable
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// Cancellable transfers into memory: data and uploads.
extension URLSession {
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
                    TransferDelegate(MemoryTransferSink(resolver, reportsUpload: false, progress: progress)),
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
                    TransferDelegate(MemoryTransferSink(resolver, reportsUpload: true, progress: progress)),
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
}
