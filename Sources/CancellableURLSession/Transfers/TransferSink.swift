import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where one task's answer goes: the body of a data or upload transfer in memory (``MemoryTransferSink``), a
/// single-URL download's file (``FileTransferSink``), or one range of a segmented download
/// (``SegmentTransferSink``). A ``TransferDelegate`` hands each of its task's callbacks to its sink, on the session's
/// delegate queue, one at a time; it answers URLSession's questions and cancels the task itself, so that a sink only
/// says what becomes of the answer.
protocol TransferSink {
    /// The response's headers arrived (after any redirect): `true` to take its body, `false` to stop the transfer.
    func accept(_ response: URLResponse) -> Bool

    /// The next bytes of an accepted body: `false` to stop the transfer (its ending says why).
    func receive(_ data: Data) -> Bool

    /// `totalBytesSent` of the request's body of `expected` bytes (`nil` if unknown) have been sent.
    func sent(_ totalBytesSent: Int64, of expected: Int64?)

    /// The transfer is over: `error` if it failed; `response` is the last response received, if any. Called once.
    func complete(response: URLResponse?, error: Error?)
}

extension TransferSink {
    /// Only an upload reports what it sent.
    func sent(_ totalBytesSent: Int64, of expected: Int64?) {}
}
