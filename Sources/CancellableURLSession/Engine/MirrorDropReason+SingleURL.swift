import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MirrorDropReason {
    /// The error a download of one URL rejects with when its one mirror is dropped for this reason: the transfer's
    /// own — the `URLError` it failed with, the ``HTTPStatusError`` with the body its server sent, the
    /// ``DownloadIntegrityError`` of a piece that failed its digest — if `recorded` is one of that kind, and what the
    /// reason says otherwise (a ``DownloadError`` for an answer that does not continue the bytes written). Never
    /// ``SegmentedDownloadError/everyMirrorDropped(_:)``: one URL has no mirrors to speak of.
    ///
    /// ```swift
    /// MirrorDropReason.contentCoded("gzip").singleURLError(recorded: nil, validator: nil)
    /// // DownloadError.contentCoded("gzip")
    /// ```
    func singleURLError(recorded: Error?, validator: DownloadResumeData.Validator?) -> Error {
        switch self {
        case .transferFailed(let code, let description):
            if let recorded, Self.failure(of: recorded) == self { return recorded }
            return URLError(code, userInfo: [NSLocalizedDescriptionKey: description])
        case .endedEarly:
            // The server closed the connection in order, short of the length it named: no error of the transfer's.
            return URLError(.networkConnectionLost)
        case .stalled, .tooSlow:
            return URLError(.timedOut)
        case .status(let status):
            if let error = recorded as? HTTPStatusError, error.response.statusCode == status { return error }
            return URLError(.badServerResponse)
        case .pieceMismatch(let piece):
            if let error = recorded as? DownloadIntegrityError, case .pieceMismatch(piece, _, _) = error {
                return error
            }
            return URLError(.cannotDecodeContentData)
        case .validatorDisagrees(let expected, _):
            return DownloadError.validatorNotRepeated(validator ?? .entityTag(expected))
        case .lengthDisagrees(let expected, let announced):
            return DownloadIntegrityError.lengthMismatch(expected: expected, actual: announced)
        case .unexpectedContentRange(let header):
            return DownloadError.unexpectedContentRange(header)
        case .contentCoded(let coding):
            return DownloadError.contentCoded(coding)
        case .ignoresRanges:
            return DownloadError.unexpectedContentRange(nil)
        }
    }
}
