import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A data or upload transfer's ``TransferSink``: collects the body in memory and resolves the promise with it — or
/// with the task's error, or ``HTTPStatusError`` for a status outside 200–299.
///
/// Reports the bytes received as they arrive; an upload reports the bytes of its request's body sent instead.
final class MemoryTransferSink: TransferSink, @unchecked Sendable {
    // @unchecked Sendable: its callbacks come one at a time, on the session's delegate queue.
    private let resolver: Resolver<(data: Data, response: URLResponse)>
    private let reportsUpload: Bool
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private var body = Data()
    private var expected: Int64?
    /// Measured on the clock current when the transfer was made.
    private var speed = TransferSpeed()
    private let clock = PromiseClocks.current

    init(
        _ resolver: Resolver<(data: Data, response: URLResponse)>,
        reportsUpload: Bool,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        self.resolver = resolver
        self.reportsUpload = reportsUpload
        self.progress = progress
    }

    func accept(_ response: URLResponse) -> Bool {
        expected = response.expectedContentLength >= 0 ? response.expectedContentLength : nil
        return true
    }

    func receive(_ data: Data) -> Bool {
        body.append(data)
        if !reportsUpload { report(Int64(body.count), of: expected) }
        return true
    }

    func sent(_ totalBytesSent: Int64, of expected: Int64?) {
        if reportsUpload { report(totalBytesSent, of: expected) }
    }

    func complete(response: URLResponse?, error: Error?) {
        resolver.resolve(URLSession.outcome(of: body, response, error))
    }

    private func report(_ total: Int64, of expected: Int64?) {
        guard let progress else { return }
        speed.record(total: total, at: clock.elapsed)
        progress(
            TransferProgress(
                bytesTransferred: total,
                totalBytesExpected: expected,
                phase: .transferring,
                bytesPerSecond: speed.bytesPerSecond
            )
        )
    }
}
