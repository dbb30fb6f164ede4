import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one task's callbacks (routed by ``TransferRouter``) and ends its transfer: resolves a data or upload
/// transfer's promise itself, and hands a download's response, body and ending to its ``FileDownload``.
///
/// URLSession calls its delegate on the session's delegate queue, one callback at a time, so the state below is
/// confined to that queue. Cancelling the promise runs its cancel handler on the cancelling thread, which only cancels
/// the task, through ``cancel(_:)``; whether a download's ending or that cancellation wins is decided under the
/// promise's cancellation lock, in ``FileDownload/finish(taskError:statusError:response:resolver:)``.
///
/// Cancelling the task and answering URLSession's questions (whether to follow a redirect, how to go on after a
/// response) are serialised: swift-corelibs-foundation ends the process ("Received callback for HTTP redirection,
/// but we're not waiting for it") when a task is cancelled between asking its delegate and receiving the answer (its
/// HTTP protocol does not wait for the answer to a response; its other protocols do, with the same check). An answer
/// is given only if the task was not cancelled first; a cancelled task ends with its cancellation error without it.
final class TransferDelegate: @unchecked Sendable {
    enum Sink {
        /// Collect the body in memory, and resolve with it.
        case memory(Resolver<(data: Data, response: URLResponse)>)
        /// Write the body to a file as it arrives; the download ends through `resolver`.
        case file(FileDownload, DecidingResolver<FileDownload.Outcome>)
        /// One range of a segmented download: its engine checks the response and writes the bytes.
        case segment(SegmentedDownloadEngine, Int)
    }

    private let sink: Sink
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let reportsUpload: Bool
    /// Cancels the task at most once and never after its completion; its lock also covers each answer to URLSession.
    private let cancellation = TaskCancellation()
    /// Where a test cancels the transfer just before an answer; read once, when the transfer is made.
    private let hooks = DownloadHooks.current
    /// What happens to the response's body: collected for a data or upload transfer; for a download, what its file
    /// decided when the response arrived.
    private var bodyAction: DownloadState.BodyAction
    private var body = Data()
    private var received: Int64 = 0
    private var response: URLResponse?
    /// The speed reported with the progress, measured on the clock current when the transfer was made.
    private var speed = TransferSpeed()
    private let clock = PromiseClocks.current

    /// The speed once `total` bytes have been transferred, now.
    private func measure(_ total: Int64) -> Double? {
        speed.record(total: total, at: clock.elapsed)
        return speed.bytesPerSecond
    }

    init(sink: Sink, reportsUpload: Bool, progress: (@Sendable (TransferProgress) -> Void)?) {
        self.sink = sink
        self.reportsUpload = reportsUpload
        self.progress = progress
        if case .memory = sink { bodyAction = .collect } else { bodyAction = .write(truncating: false) }
    }

    /// Cancels the task, unless it was cancelled already or has completed; never between a question of URLSession's
    /// and its answer.
    func cancel(_ task: URLSessionTask) {
        cancellation.cancel(task)
    }

    /// Gives URLSession the answer it waits for — `answer` calls its completion handler — unless the task was
    /// cancelled (then it ends without one).
    private func answer(_ answer: () -> Void) {
        hooks.willAnswer?()
        cancellation.ifNotCancelled(answer)
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        self.response = response
        switch sink {
        case .memory:
            return answer { completionHandler(.allow) }
        case .file(let file, _):
            // A `.collect` is an error body, which is not the file the caller asked for: it is kept for the error.
            bodyAction = file.accept(response)
        case .segment(let engine, let id):
            bodyAction = engine.accept(response, for: id) ? .write(truncating: false) : .cancel
        }
        guard bodyAction != .cancel else {
            answer { completionHandler(.cancel) }
            // swift-corelibs-foundation ignores `.cancel` and would read the whole refused body: stop the task too,
            // so that no more than what is already buffered crosses the network.
            cancel(dataTask)
            return
        }
        answer { completionHandler(.allow) }
    }

    /// Follows the redirect, unless the task was cancelled.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        answer { completionHandler(request) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        switch bodyAction {
        case .ignore, .cancel:
            return
        case .collect:
            received += Int64(data.count)
            body.append(data)
            guard !reportsUpload, let progress else { return }
            let expected = dataTask.response?.expectedContentLength ?? -1
            progress(
                TransferProgress(
                    bytesTransferred: received,
                    totalBytesExpected: expected >= 0 ? expected : nil,
                    phase: .transferring,
                    bytesPerSecond: measure(received)
                )
            )
        case .write:
            switch sink {
            case .memory:
                preconditionFailure("Only a download writes a file")
            case .file(let file, _):
                guard file.write(data) else { return cancel(dataTask) }
                received += Int64(data.count)
                if let progress, let report = file.progress { progress(report.with(bytesPerSecond: measure(received))) }
            case .segment(let engine, let id):
                if !engine.receive(data, for: id) { cancel(dataTask) }
            }
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
                totalBytesExpected: totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil,
                phase: .transferring,
                bytesPerSecond: measure(totalBytesSent)
            )
        )
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        cancellation.complete()
        let response = response ?? task.response
        switch sink {
        case .memory(let resolver):
            resolver.resolve(URLSession.outcome(of: body, response, error))
        case .file(let file, let resolver):
            let statusError = bodyAction == .collect ? HTTPStatusError(checking: response, body: body) : nil
            file.finish(
                taskError: error,
                statusError: statusError,
                response: response,
                resolver: resolver,
                progress: progress
            )
        case .segment(let engine, let id):
            engine.complete(id, error: error)
        }
    }
}

extension URLSession {
    /// What a transfer into memory resolves with: the body and the response, or the error — the task's, or
    /// ``HTTPStatusError`` for a status outside 200–299.
    static func outcome(
        of body: Data,
        _ response: URLResponse?,
        _ error: Error?
    ) -> Swift.Result<(data: Data, response: URLResponse), Error> {
        if let error { return .failure(error) }
        guard let response else { return .failure(URLError(.badServerResponse)) }
        if let statusError = HTTPStatusError(checking: response, body: body) { return .failure(statusError) }
        return .success((body, response))
    }
}
