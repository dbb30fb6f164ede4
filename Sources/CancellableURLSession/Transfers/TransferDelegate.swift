import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one task's callbacks (routed by ``TransferRouter``) and hands them to the task's ``TransferSink``, which
/// says what becomes of the answer: a data or upload transfer's body in memory, a download's file, a segment's range.
///
/// URLSession calls its delegate on the session's delegate queue, one callback at a time, so the state below is
/// confined to that queue. Cancelling the promise runs its cancel handler on the cancelling thread, which only cancels
/// the task, through ``cancel(_:)``; whether a download's ending or that cancellation wins is decided under the
/// promise's cancellation lock, by the download.
///
/// Cancelling the task and answering URLSession's questions (whether to follow a redirect, how to go on after a
/// response) are serialised: swift-corelibs-foundation ends the process ("Received callback for HTTP redirection,
/// but we're not waiting for it") when a task is cancelled between asking its delegate and receiving the answer (its
/// HTTP protocol does not wait for the answer to a response; its other protocols do, with the same check). An answer
/// is given only if the task was not cancelled first; a cancelled task ends with its cancellation error without it.
final class TransferDelegate: @unchecked Sendable {
    private let sink: any TransferSink
    /// Cancels the task at most once and never after its completion; its lock also covers each answer to URLSession.
    private let cancellation = TaskCancellation()
    /// Where a test cancels the transfer just before an answer; read once, when the transfer is made.
    private let hooks = DownloadHooks.current
    private var response: URLResponse?
    /// Whether the sink refused the body, or stopped taking it: what still arrives of it is dropped.
    private var refused = false

    init(_ sink: any TransferSink) {
        self.sink = sink
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
        guard sink.accept(response) else {
            refused = true
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
        guard !refused else { return }
        if !sink.receive(data) {
            refused = true
            cancel(dataTask)
        }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        sink.sent(totalBytesSent, of: totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        cancellation.complete()
        sink.complete(response: response ?? task.response, error: error)
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
