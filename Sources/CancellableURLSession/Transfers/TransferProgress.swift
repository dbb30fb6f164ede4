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

    /// Makes a progress report.
    public init(bytesTransferred: Int64, totalBytesExpected: Int64?) {
        self.bytesTransferred = bytesTransferred
        self.totalBytesExpected = totalBytesExpected
    }

    /// `bytesTransferred / totalBytesExpected`, when the total is known and not zero.
    public var fractionCompleted: Double? {
        guard let totalBytesExpected, totalBytesExpected > 0 else { return nil }
        return Double(bytesTransferred) / Double(totalBytesExpected)
    }
}
