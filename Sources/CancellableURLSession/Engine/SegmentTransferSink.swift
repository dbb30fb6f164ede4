import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One range of a segmented download, or one request of a single URL's: the ``TransferSink`` that hands its
/// transfer's response, body and ending to the ``SegmentedDownloadEngine``, which checks the response against the
/// schedule and writes the bytes it admits. The body of an error status that a single URL answered is not the file:
/// it is collected (up to ``errorBodyLimit`` bytes) for the ``HTTPStatusError`` the download rejects with.
final class SegmentTransferSink: TransferSink, @unchecked Sendable {
    // @unchecked Sendable: its callbacks come one at a time, on the session's delegate queue.
    let engine: SegmentedDownloadEngine
    /// The transfer's identifier in the engine's schedule.
    let id: Int
    /// An error status's body, while it is collected.
    private var errorBody: Data?

    /// The most of an error status's body kept: a server may send any length, and the error holds it in memory.
    static let errorBodyLimit = 1_048_576

    init(engine: SegmentedDownloadEngine, id: Int) {
        self.engine = engine
        self.id = id
    }

    func accept(_ response: URLResponse) -> Bool {
        switch engine.accept(response, for: id) {
        case .write: return true
        case .collect:
            errorBody = Data()
            return true
        case .refuse: return false
        }
    }

    func receive(_ data: Data) -> Bool {
        guard var body = errorBody else { return engine.receive(data, for: id) }
        engine.heard(from: id)
        errorBody = nil  // appended to without a copy
        body.append(data.prefix(Self.errorBodyLimit - body.count))
        errorBody = body
        // Past the limit, the transfer stops: the error says what the server sent first.
        return body.count < Self.errorBodyLimit
    }

    func complete(response: URLResponse?, error: Error?) {
        let statusError = errorBody.flatMap { HTTPStatusError(checking: response, body: $0) }
        engine.complete(id, error: error, statusError: statusError)
    }
}
