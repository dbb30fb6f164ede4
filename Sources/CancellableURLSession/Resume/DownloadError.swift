public import Foundation

/// Why a download could not go on with the bytes it had, or could not start: an answer that does not continue the
/// bytes kept, or contradicts itself (a `206` nobody asked for, a body longer than it announced), or resume data, a
/// partial file or a request the library refuses. The partial file was removed (except for ``partialFileInUse(_:)``,
/// ``partialFileNotOwned(_:)``, ``invalidResumeData(field:reason:)`` and ``rangeRequested(_:)``, which touch no
/// file, and ``bodyLongerThanAnnounced(totalBytes:)``, which keeps the bytes from before that answer); start the
/// download again.
///
/// It was called `DownloadResumeError` until 0.2, although downloads that never resumed throw it too; that name is
/// a deprecated alias.
///
/// ```swift
/// session.resumeDownload(saved).promise.catch { error in
///     if error is DownloadError { session.resumableDownload(from: url, to: file) }
/// }
/// ```
///
/// A server that cannot or will not continue in a harmless way — it ignores ranges, or the file changed and
/// `If-Range` no longer matches — answers `200` with the whole file, and the download simply starts over from
/// byte 0; that is not an error.
public enum DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server's file is shorter than the bytes kept — it answered `416 Range Not Satisfiable`, or its whole file
    /// ended before them — (its length is `serverLength` if known), so it is not the same file.
    case rangeNotSatisfiable(serverLength: Int64?)
    /// The server answered `206` with a `Content-Range` (`header`) that does not continue the bytes kept: another
    /// start, or another total length than the file had.
    case unexpectedContentRange(String?)
    /// The server answered `206` without repeating the strong validator of the bytes kept — its `ETag`, or its
    /// `Last-Modified` — so its bytes may be of another file.
    case validatorNotRepeated(DownloadResumeData.Validator)
    /// The server answered `206` with a content coding (`Content-Encoding`, given here): the bytes it sends are not at
    /// the offsets of the file's bytes.
    case contentCoded(String)
    /// Another download resumed from the same resume data is still running: one partial file cannot take two
    /// downloads at once. The partial file was left to that download.
    case partialFileInUse(URL)
    /// The resume data names, as its partial file, something the library did not make for its destination: a path
    /// that is not the hidden `.<name>.<UUID>.partial` file next to the destination, or, at that path, a directory,
    /// a symbolic link, or a file with another hard link. Nothing was opened, changed or removed.
    case partialFileNotOwned(URL)
    /// ``DownloadResumeData/init(url:destination:partialFile:bytesKept:validator:totalBytes:integrity:)`` was given a
    /// value no download could have produced: `field` names it, `reason` says why.
    case invalidResumeData(field: String, reason: String)
    /// The server sent more of the body than the file's length it announced (`totalBytes`), for instance a `206`
    /// whose body runs past its `Content-Range`. The transfer was stopped there; the bytes kept before this answer
    /// stay for a resume.
    case bodyLongerThanAnnounced(totalBytes: Int64)
    /// A resumable download's request carries its own `Range` header (given here). A resumable download is of the
    /// whole file — a resume asks for the rest of it — so it was refused before any request, and no file was made.
    /// `URLSession.cancellableDownload(for:to:verifying:retrying:file:line:progress:)` downloads the part a `Range`
    /// asks for.
    case rangeRequested(String)
    /// A ``DownloadRetryPolicy`` out of range (the reason names the value): nothing was sent, and no file was made.
    case invalidRetryPolicy(String)

    /// A sentence saying what the server answered.
    public var description: String {
        switch self {
        case .rangeNotSatisfiable(let length):
            "The server cannot continue the download: its file is "
                + "\(length.map { "\($0) bytes" } ?? "of unknown length"), shorter than the bytes kept."
        case .unexpectedContentRange(let header):
            "The server continued the download with Content-Range \(header ?? "(none)"), which does not follow the "
                + "bytes kept."
        case .validatorNotRepeated(let validator):
            "The server continued the download without repeating the validator \(validator.headerValue) of the bytes "
                + "kept: they may be of another file."
        case .contentCoded(let coding):
            "The server continued the download with the content coding \"\(coding)\": its bytes are not at the "
                + "offsets of the bytes kept."
        case .partialFileInUse(let file):
            "Another download is already writing \(file.path): one partial file cannot take two downloads."
        case .partialFileNotOwned(let file):
            "The resume data's partial file \(file.path) is not a file this library made for its destination: "
                + "nothing was touched."
        case .invalidResumeData(let field, let reason):
            "The resume data's \(field) is invalid: \(reason)."
        case .bodyLongerThanAnnounced(let total):
            "The server sent more than the \(total) bytes it announced as the file's length."
        case .rangeRequested(let range):
            "A resumable download is of the whole file, but its request asks for Range \(range): download a part "
                + "with cancellableDownload(for:to:)."
        case .invalidRetryPolicy(let reason):
            "The download's retry policy is invalid: \(reason)."
        }
    }
}

/// The name of ``DownloadError`` until 0.2: rename it where you match it.
@available(*, deprecated, renamed: "DownloadError")
public typealias DownloadResumeError = DownloadError

extension DownloadError: LocalizedError {
    /// The same sentence as `description`, for `localizedDescription`: what an app shows or logs.
    public var errorDescription: String? { description }
}
