import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether a single-URL transfer's fault may pass, and how long its server asked to be left alone: the faults a
/// segmented download forgives a mirror (``MirrorDropReason/isTransient``).
struct TransientFault {
    let mayPass: Bool
    let retryAfter: TimeInterval?

    init(_ error: Error) {
        if let status = error as? HTTPStatusError {
            mayPass = MirrorDropReason.status(status.statusCode).isTransient
            retryAfter = RangeAnswer(status.response).retryAfter
        } else if error is URLError {
            mayPass = MirrorDropReason.failure(of: error).isTransient
            retryAfter = nil
        } else {
            mayPass = false
            retryAfter = nil
        }
    }
}
