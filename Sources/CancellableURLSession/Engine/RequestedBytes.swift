import Cancellable
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a download's request asks the server for.
enum RequestedBytes: Equatable, Sendable {
    /// The whole file: a new download, or a resume that starts over.
    case whole
    /// The rest of the file, from byte `start`: `Range: bytes=<start>-`, with `If-Range: <validator>`; without a
    /// validator only when the caller opted in, and then the total length must match.
    case rest(from: Int64, ifRange: DownloadResumeData.Validator?)
    /// The part the caller's own `Range` header asks for, in a download that cannot pause: a `206` is the body.
    case callersRange
}
