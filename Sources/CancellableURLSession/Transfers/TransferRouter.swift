import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of a session made by `URLSession.withProgressReporting(configuration:delegateQueue:)` (or of a
/// stand-in session, see ``Transport``): hands each task's callbacks to that task's ``TransferDelegate``.
///
/// A session delegate works everywhere: FoundationNetworking on Linux never calls per-task delegates
/// (`URLSessionTask.delegate`). On Apple platforms from macOS 12 and iOS 15, a router made with `perTask: true`
/// is also set as one task's own delegate, for sessions without a delegate of their own.
final class TransferRouter: NSObject, URLSessionDataDelegate, Sendable {
    /// Each running task's transfer, by task identifier.
    private let transfers = Locked<[Int: TransferDelegate]>([:])
    private let perTask: Bool

    init(perTask: Bool = false) {
        self.perTask = perTask
    }

    /// Hands `task`'s callbacks to `transfer`.
    ///
    /// - Returns: what cancels the task: through `transfer`, which never cancels it between a question of
    ///   URLSession's and its answer.
    func register(_ transfer: TransferDelegate, for task: URLSessionTask) -> @Sendable () -> Void {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
        #if !canImport(FoundationNetworking)
        // The task keeps its delegate until it completes.
        if perTask, #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) { task.delegate = self }
        #endif
        return { transfer.cancel(task) }
    }

    private func transfer(for task: URLSessionTask, removing: Bool = false) -> TransferDelegate? {
        transfers.withLock { removing ? $0.removeValue(forKey: task.taskIdentifier) : $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfer(for: dataTask) else { return completionHandler(.allow) }
        transfer.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard let transfer = transfer(for: task) else { return completionHandler(request) }
        transfer.urlSession(
            session,
            task: task,
            willPerformHTTPRedirection: response,
            newRequest: request,
            completionHandler: completionHandler
        )
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        transfer(for: task)?.urlSession(
            session,
            task: task,
            didSendBodyData: bytesSent,
            totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend
        )
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        transfer(for: task, removing: true)?.urlSession(session, task: task, didCompleteWithError: error)
    }
}
