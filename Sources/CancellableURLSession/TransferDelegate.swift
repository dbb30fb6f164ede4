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
        /// Write the body to a file as it arrives (see ``FileDownload``).
        case file(FileDownload)
    }

    private let resolver: Resolver<(body: Data, fileURL: URL?, response: URLResponse)>
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let reportsUpload: Bool
    private let sink: Sink
    /// Whether the body goes to memory: always for `.memory`; for a file, once the response is an error status.
    private var collectsBody: Bool
    /// Set when the file already has every byte and the body (a 416's) is not part of it.
    private var ignoresBody = false
    private var body = Data()
    private var received: Int64 = 0
    private var response: URLResponse?

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
        if case .memory = sink { collectsBody = true } else { collectsBody = false }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        self.response = response
        guard case .file(let file) = sink else { return completionHandler(.allow) }
        switch file.accept(response) {
        case .write:
            break
        case .errorBody:
            // An error body is not the file the caller asked for: keep it for the error instead.
            collectsBody = true
        case .ignore:
            ignoresBody = true
        case .cancel:
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if ignoresBody { return }
        if collectsBody {
            received += Int64(data.count)
            body.append(data)
        } else if case .file(let file) = sink {
            guard file.write(data) else { return dataTask.cancel() }
        }
        guard !reportsUpload, let progress else { return }
        if case .file(let file) = sink, !collectsBody {
            progress(file.progress)
        } else {
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
        let response = response ?? task.response
        var fileURL: URL?
        let errorStatus: Bool
        switch sink {
        case .memory:
            if let error { return resolver.reject(error) }
            errorStatus = response.map { !$0.isSuccess } ?? false
        case .file(let file):
            // Only a response `FileDownload` took for an error: a 416 may finish or fail the download.
            errorStatus = collectsBody
            switch file.finish(
                error: error ?? (response == nil ? URLError(.badServerResponse) : nil),
                errorStatus: errorStatus
            ) {
            case .success(let url):
                fileURL = url
            case .failure(let failure) where !errorStatus:
                // A cancelled task means the promise was cancelled: it is already rejected, and this is ignored.
                return resolver.reject(failure)
            case .failure:
                break
            }
        }
        guard let response else {
            return resolver.reject(URLError(.badServerResponse))
        }
        if let http = response as? HTTPURLResponse, errorStatus {
            return resolver.reject(HTTPStatusError(response: http, body: body))
        }
        resolver.fulfill((body, fileURL, response))
    }
}

extension URLResponse {
    /// Whether this is not an HTTP response, or an HTTP response with a status in 200–299.
    var isSuccess: Bool {
        guard let http = self as? HTTPURLResponse else { return true }
        return (200...299).contains(http.statusCode)
    }
}
