import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one task's callbacks (routed by ``TransferRouter``) and settles its promise.
///
/// URLSession calls its delegate on the session's delegate queue, one callback at a time, so the state below
/// is confined to that queue; the only other entry point, `cancel()` of the promise, calls
/// `URLSessionTask.cancel()`, which is thread-safe.
final class TransferDelegate: @unchecked Sendable {
    enum Sink {
        /// Collect the body in memory.
        case memory
        /// Write the body to a partial file as it arrives; it replaces the destination on success.
        case file(FileHandle, PartialFile)
    }

    private let resolver: Resolver<(body: Data, fileURL: URL?, response: URLResponse)>
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let reportsUpload: Bool
    private var sink: Sink
    private var body = Data()
    private var received: Int64 = 0
    private var response: URLResponse?
    private var fileError: Error?

    init(
        resolver: Resolver<(body: Data, fileURL: URL?, response: URLResponse)>,
        sink: Sink,
        reportsUpload: Bool,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        self.resolver = resolver
        self.sink = sink
        self.reportsUpload = reportsUpload
        self.progress = progress
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        self.response = response
        if case .file(let handle, let partial) = sink, !response.isSuccess {
            // An error body is not the file the caller asked for: keep it for the error instead.
            try? handle.close()
            partial.remove()
            sink = .memory
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received += Int64(data.count)
        switch sink {
        case .memory:
            body.append(data)
        case .file(let handle, _):
            do {
                if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
                    try handle.write(contentsOf: data)
                } else {
                    handle.write(data)  // the only write before those versions; it cannot report an error
                }
            } catch {
                fileError = error
                dataTask.cancel()
                return
            }
        }
        if !reportsUpload, let progress {
            let expected = dataTask.response?.expectedContentLength ?? -1
            progress(TransferProgress(bytesTransferred: received, totalBytesExpected: expected >= 0 ? expected : nil))
        }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard reportsUpload, let progress else { return }
        progress(
            TransferProgress(
                bytesTransferred: totalBytesSent,
                totalBytesExpected: totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil
            )
        )
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        var partial: PartialFile?
        if case .file(let handle, let file) = sink {
            try? handle.close()
            partial = file
        }
        if let error = fileError ?? error {
            partial?.remove()
            // A cancelled task means the promise was cancelled: it is already rejected, and this is ignored.
            resolver.reject(error)
            return
        }
        guard let response = response ?? task.response else {
            partial?.remove()
            resolver.reject(URLError(.badServerResponse))
            return
        }
        if let http = response as? HTTPURLResponse, !response.isSuccess {
            resolver.reject(HTTPStatusError(response: http, body: body))
            return
        }
        guard let partial else { return resolver.fulfill((body, nil, response)) }
        do {
            try partial.commit()
            resolver.fulfill((body, partial.destination, response))
        } catch {
            resolver.reject(error)
        }
    }
}

extension URLResponse {
    /// Whether this is not an HTTP response, or an HTTP response with a status in 200–299.
    var isSuccess: Bool {
        guard let http = self as? HTTPURLResponse else { return true }
        return (200...299).contains(http.statusCode)
    }
}
