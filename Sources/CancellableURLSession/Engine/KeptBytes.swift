import Cancellable
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bytes of a file that a download's partial file holds — the file's first `count` bytes — and what identifies
/// that file: what a pause keeps and a resume continues. "Kept" is the one word for them, here and in the docs
/// (``DownloadResumeData/bytesKept``).
struct KeptBytes: Equatable, Sendable {
    /// How many: the partial file's first `count` bytes are the file's.
    var count: Int64
    /// The file's strong validator, if the server gave one: a resume continues the bytes only under it.
    var validator: DownloadResumeData.Validator?
    /// The whole file's length, if the server said.
    var totalBytes: Int64?

    /// No bytes of any file.
    static let nothing = KeptBytes(count: 0, validator: nil, totalBytes: nil)
}

extension KeptBytes {
    init(count: Int64, totalBytes: Int64?) {
        self.init(count: count, validator: nil, totalBytes: totalBytes)
    }
}
