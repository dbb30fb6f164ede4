import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One range of a segmented download: the ``TransferSink`` that hands its transfer's response, body and ending to the
/// ``SegmentedDownloadEngine``, which checks the response against the schedule and writes the bytes it admits.
struct SegmentTransferSink: TransferSink {
    let engine: SegmentedDownloadEngine
    /// The transfer's identifier in the engine's schedule.
    let id: Int

    func accept(_ response: URLResponse) -> Bool {
        engine.accept(response, for: id)
    }

    func receive(_ data: Data) -> Bool {
        engine.receive(data, for: id)
    }

    func complete(response: URLResponse?, error: Error?) {
        engine.complete(id, error: error)
    }
}
