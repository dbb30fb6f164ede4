public import Foundation

/// How far a transfer has got: bytes received (downloads) or sent (uploads) so far.
///
/// ```swift
/// session.cancellableData(for: request) { progress in
///     print("\(progress.bytesTransferred) of \(progress.totalBytesExpected.map(String.init) ?? "?")")
/// }
/// ```
public struct TransferProgress: Sendable, Equatable {
    /// Bytes transferred so far.
    public let bytesTransferred: Int64
    /// The total the server announced, if it did (`Content-Length`).
    public let totalBytesExpected: Int64?
    /// What the transfer is doing: ``TransferPhase/transferring`` while bytes arrive; a download that checks its
    /// file then reports ``TransferPhase/verifying``, and one that moves it into place
    /// ``TransferPhase/movingIntoPlace``.
    public let phase: TransferPhase
    /// The speed, in bytes per second, smoothed over the last few seconds; `nil` until a quarter of a second of the
    /// transfer has passed, and in a report made once at the end (a session with a delegate of your own).
    public let bytesPerSecond: Double?

    /// Makes a progress report of a transfer under way (``TransferPhase/transferring``), without a speed.
    public init(bytesTransferred: Int64, totalBytesExpected: Int64?) {
        self.init(bytesTransferred: bytesTransferred, totalBytesExpected: totalBytesExpected, phase: .transferring)
    }

    /// Makes a progress report.
    ///
    /// ```swift
    /// TransferProgress(bytesTransferred: 512, totalBytesExpected: 1_024, phase: .transferring, bytesPerSecond: 256)
    ///     .estimatedTimeRemaining   // 2
    /// ```
    public init(
        bytesTransferred: Int64,
        totalBytesExpected: Int64?,
        phase: TransferPhase,
        bytesPerSecond: Double? = nil
    ) {
        self.bytesTransferred = bytesTransferred
        self.totalBytesExpected = totalBytesExpected
        self.phase = phase
        self.bytesPerSecond = bytesPerSecond
    }

    /// How long the bytes still expected take at ``bytesPerSecond``, in seconds; `nil` without a speed or a total.
    public var estimatedTimeRemaining: TimeInterval? {
        guard let totalBytesExpected, let bytesPerSecond, bytesPerSecond > 0 else { return nil }
        return Double(max(0, totalBytesExpected - bytesTransferred)) / bytesPerSecond
    }

    /// The same report with a speed.
    func with(bytesPerSecond: Double?) -> TransferProgress {
        TransferProgress(
            bytesTransferred: bytesTransferred,
            totalBytesExpected: totalBytesExpected,
            phase: phase,
            bytesPerSecond: bytesPerSecond
        )
    }

    /// `bytesTransferred / totalBytesExpected`, when the total is known and not zero.
    public var fractionCompleted: Double? {
        guard let totalBytesExpected, totalBytesExpected > 0 else { return nil }
        return Double(bytesTransferred) / Double(totalBytesExpected)
    }
}
