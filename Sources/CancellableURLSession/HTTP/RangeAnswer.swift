import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a response says about the bytes it carries, reduced to what decides whether they continue other bytes of the
/// same file: read from the response once, so that the decision (``Continuation``) is a pure function of values a
/// test writes down.
struct RangeAnswer: Sendable, Equatable {
    /// The status; 0 for a response that is not HTTP.
    var status: Int
    /// The `Content-Range`, parsed; `nil` if absent or malformed.
    var range: ContentRange?
    /// The `Content-Range` as sent, for errors.
    var rangeHeader: String?
    /// The `ETag` as sent, if any.
    var entityTag: String?
    /// The `Last-Modified` as sent, if any.
    var lastModified: String?
    /// The representation's strong validator, if it has one (``HTTPURLResponse/strongValidator``): what a first
    /// answer sets as the reference of the bytes that follow.
    var validator: DownloadResumeData.Validator?
    /// The body's content coding (`gzip`, `br`, …); `nil` for none, or `identity`.
    var contentCoding: String?
    /// The body's length (`Content-Length`), unless it has a content coding.
    var announcedLength: Int64?
    /// How long the server asked to be left alone (`Retry-After`), in seconds.
    var retryAfter: TimeInterval?

    init(
        status: Int,
        range: ContentRange? = nil,
        rangeHeader: String? = nil,
        entityTag: String? = nil,
        lastModified: String? = nil,
        validator: DownloadResumeData.Validator? = nil,
        contentCoding: String? = nil,
        announcedLength: Int64? = nil,
        retryAfter: TimeInterval? = nil
    ) {
        self.status = status
        self.range = range
        self.rangeHeader = rangeHeader
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.validator = validator
        self.contentCoding = contentCoding
        self.announcedLength = announcedLength
        self.retryAfter = retryAfter
    }

    /// What `response` says; `now` dates a `Retry-After` given as an HTTP date.
    init(_ response: URLResponse, now: Date = Date()) {
        guard let http = response as? HTTPURLResponse else {
            let length = response.expectedContentLength
            self.init(status: 0, announcedLength: length >= 0 ? length : nil)
            return
        }
        let header = http.value(forHTTPHeaderField: "Content-Range")
        self.init(
            status: http.statusCode,
            range: ContentRange(header),
            rangeHeader: header,
            entityTag: http.value(forHTTPHeaderField: "ETag"),
            lastModified: http.value(forHTTPHeaderField: "Last-Modified"),
            validator: http.strongValidator,
            contentCoding: http.isContentCoded ? http.value(forHTTPHeaderField: "Content-Encoding") : nil,
            announcedLength: http.announcedLength,
            retryAfter: http.retryAfter(now: now)
        )
    }
}
