public import Foundation

/// How far a segmented download has got.
///
/// ```swift
/// session.segmentedDownload(from: mirrors, to: file) { progress in
///     print(progress.fractionCompleted ?? 0, progress.mirrors.map(\.bytesReceived))
/// }
/// ```
public struct SegmentedDownloadProgress: Sendable, Hashable {
    /// Bytes of the file written so far.
    public let bytesWritten: Int64
    /// The file's length, once a mirror has said.
    public let totalBytes: Int64?
    /// Each mirror, in the order given.
    public let mirrors: [MirrorStatus]
    /// What the download is doing: ``TransferPhase/transferring`` while bytes arrive, then
    /// ``TransferPhase/verifying`` while it checks the finished file, then ``TransferPhase/movingIntoPlace``.
    public let phase: TransferPhase
    /// The download's speed — every mirror's bytes written, in bytes per second — smoothed over the last few seconds;
    /// `nil` until a quarter of a second has passed.
    public let bytesPerSecond: Double?

    init(
        bytesWritten: Int64,
        totalBytes: Int64?,
        mirrors: [MirrorStatus],
        phase: TransferPhase = .transferring,
        bytesPerSecond: Double? = nil
    ) {
        self.bytesWritten = bytesWritten
        self.totalBytes = totalBytes
        self.mirrors = mirrors
        self.phase = phase
        self.bytesPerSecond = bytesPerSecond
    }

    /// `bytesWritten / totalBytes`, when the length is known and not zero.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return Double(bytesWritten) / Double(totalBytes)
    }

    /// How long the bytes still missing take at ``bytesPerSecond``, in seconds; `nil` without a speed or a length.
    public var estimatedTimeRemaining: TimeInterval? {
        guard let totalBytes, let bytesPerSecond, bytesPerSecond > 0 else { return nil }
        return Double(max(0, totalBytes - bytesWritten)) / bytesPerSecond
    }

    /// The same report in another phase: with a speed only while bytes arrive, as a single URL's reports.
    func with(phase: TransferPhase) -> SegmentedDownloadProgress {
        SegmentedDownloadProgress(
            bytesWritten: bytesWritten,
            totalBytes: totalBytes,
            mirrors: mirrors,
            phase: phase,
            bytesPerSecond: phase == .transferring ? bytesPerSecond : nil
        )
    }
}
