import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a response says about the representation it carries, for deciding whether bytes can be continued: HTTP lets
/// a client combine two responses only if they share the same *strong* validator (RFC 9110 §15.3.7.3), and a byte
/// offset means the same thing in both only if neither has a content coding.
extension HTTPURLResponse {
    /// Whether the body has a content coding (`gzip`, `br`, …). URLSession decodes it, so the bytes written are not
    /// the representation's bytes: no byte range of it can be continued.
    var isContentCoded: Bool {
        guard let coding = value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces) else {
            return false
        }
        return !coding.isEmpty && coding.lowercased() != "identity"
    }

    /// The strong validator of the representation, if it has one and no content coding: its `ETag`, if it is a
    /// well-formed strong entity-tag; otherwise its `Last-Modified`, if it is a well-formed HTTP-date and the `Date`
    /// is at least 60 seconds later — the only way a client may deduce that a date is strong enough for `If-Range`
    /// (RFC 9110 §8.8.2.2, §13.1.5). A malformed value is no validator: it is never sent back.
    var strongValidator: DownloadResumeData.Validator? {
        guard !isContentCoded else { return nil }
        if let tag = value(forHTTPHeaderField: "ETag").map(DownloadResumeData.Validator.entityTag), tag.isWellFormed {
            return tag
        }
        guard let modified = value(forHTTPHeaderField: "Last-Modified"),
            let modifiedAt = HTTPDate.parse(modified),
            let date = value(forHTTPHeaderField: "Date").flatMap(HTTPDate.parse),
            date.timeIntervalSince(modifiedAt) >= 60
        else { return nil }
        return .lastModified(modified)
    }

    /// The length of the body the server announced (`Content-Length`), unless it has a content coding (then it is the
    /// coded length, not the length of the bytes written).
    var announcedLength: Int64? {
        expectedContentLength >= 0 && !isContentCoded ? expectedContentLength : nil
    }

    /// How long the server asks to be left alone (`Retry-After`, RFC 9110 §10.2.3), in seconds from `now`: a number
    /// of seconds (digits only, at most nine), or an HTTP date (`0` if it is past). `nil` if absent or anything else.
    func retryAfter(now: Date) -> TimeInterval? {
        guard let text = value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        if !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy(digits.contains) {
            return TimeInterval(text)
        }
        return HTTPDate.parse(text).map { max(0, $0.timeIntervalSince(now)) }
    }
}
