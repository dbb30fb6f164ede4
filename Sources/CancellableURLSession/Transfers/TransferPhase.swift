/// What a transfer is doing now: shown beside its progress, so that a download at 100% that is still checking its
/// file says so.
///
/// ```swift
/// session.cancellableDownload(from: url, to: file, verifying: expected) { progress in
///     switch progress.phase {
///     case .verifying: label.text = "Verifying…"
///     case .movingIntoPlace: label.text = "Finishing…"
///     default: label.text = "\(Int((progress.fractionCompleted ?? 0) * 100))%"
///     }
/// }
/// ```
public enum TransferPhase: Sendable, Hashable {
    /// The request is on its way; no byte of the answer has arrived.
    case connecting
    /// Bytes are arriving (or, for an upload, leaving).
    case transferring
    /// Every byte has arrived; the file is being checked against its `DownloadIntegrity`: reported only while
    /// bytes are left to hash, not when they were all hashed as they arrived.
    case verifying
    /// The file is complete and checked, and is being moved over the destination.
    case movingIntoPlace
}
