import Dispatch
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// How a ``StubServer`` answers one request: status, headers, body, how the body is paced and how it ends.
///
/// ```swift
/// StubResponse.body(payload)                                         // 200, all at once
/// StubResponse.body(payload, chunkSize: 1_000, every: .seconds(1))   // 1 KB per virtual second
/// StubResponse.status(503)                                           // an error status, empty body
/// StubResponse.body(payload, chunkSize: 1_000).failing(after: 2_500) // the connection drops after 2,500 bytes
/// StubResponse.body(payload, chunkSize: 1_000).stalling(after: 2_500)// then nothing more, ever
/// StubResponse.stall                                                 // no answer at all
/// StubResponse.refused                                               // the connection is refused
/// StubResponse.body(payload).delayed(by: .seconds(5))                // headers after 5 virtual seconds
/// StubResponse.redirect(to: "/v2/file")                              // 302, followed to /v2/file
/// ```
public struct StubResponse: Sendable {
    /// How the response ends once ``limit`` bytes (or the whole body) are sent.
    public enum Ending: Sendable, Equatable {
        /// Normally.
        case finish
        /// With this error, as a dropped connection does (`.networkConnectionLost`).
        case fail(URLError.Code)
        /// Not at all: no more bytes and no end, until the client gives up.
        case stall
    }

    /// The status code.
    public var status: Int
    /// The response headers. `Content-Length` is added from the body unless present.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// Bytes per chunk: the body is delivered in chunks of this size (the whole body when `nil`).
    public var chunkSize: Int?
    /// Virtual time between chunks, on the server's clock: the first chunk is sent at once, each later one this
    /// much later. `nil` sends every chunk at once.
    public var interval: DispatchTimeInterval?
    /// Send at most this many body bytes, then end as ``ending`` says. `nil`: the whole body.
    public var limit: Int?
    /// How the response ends.
    public var ending: Ending
    /// Whether any response is sent: `false` for ``stall`` (no status, no headers, nothing).
    public var answers: Bool
    /// Fail the request with this error before any response, as a refused or unreachable connection does
    /// (``refused``); `nil`: answer.
    public var failureBeforeResponse: URLError.Code?
    /// Virtual time, on the server's clock, before the status and headers are sent (``delayed(by:)``); `nil`: at once.
    public var delay: DispatchTimeInterval?

    /// A response with every property given.
    public init(
        status: Int = 200,
        headers: [String: String] = [:],
        body: Data = Data(),
        chunkSize: Int? = nil,
        interval: DispatchTimeInterval? = nil,
        limit: Int? = nil,
        ending: Ending = .finish,
        answers: Bool = true,
        failureBeforeResponse: URLError.Code? = nil,
        delay: DispatchTimeInterval? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.chunkSize = chunkSize.map { max(1, $0) }
        self.interval = interval
        self.limit = limit.map { max(0, $0) }
        self.ending = ending
        self.answers = answers
        self.failureBeforeResponse = failureBeforeResponse
        self.delay = delay
    }

    /// `status` (200 by default) with `body`, in chunks of `chunkSize` bytes sent `every` so often on the
    /// server's clock (all at once when `every` is `nil`).
    public static func body(
        _ body: Data,
        status: Int = 200,
        headers: [String: String] = [:],
        chunkSize: Int? = nil,
        every interval: DispatchTimeInterval? = nil
    ) -> StubResponse {
        StubResponse(status: status, headers: headers, body: body, chunkSize: chunkSize, interval: interval)
    }

    /// An error status — `404`, `503` — with an optional body.
    public static func status(_ status: Int, body: Data = Data(), headers: [String: String] = [:]) -> StubResponse {
        StubResponse(status: status, headers: headers, body: body)
    }

    /// A redirect to `location` — a path on the same server, or another `StubServer`'s URL — with `status`: `301`,
    /// `302` (the default), `303`, `307` or `308`.
    ///
    /// ```swift
    /// let server = StubServer { request in
    ///     request.url?.path == "/latest" ? .redirect(to: "/v2/file") : .body(payload)
    /// }
    /// let (data, response) = try await session.cancellableData(from: server.url("/latest")).async()
    /// #expect(response.url == server.url("/v2/file"))
    /// #expect(server.transfers.map(\.status) == [302, 200])
    /// ```
    ///
    /// The stub follows it, as URLSession follows a server's: the app receives the answer to the request it leads
    /// to, whose URL is the response's `url`, and both requests are in ``StubServer/transfers`` (the first one
    /// ``StubTransfer/State/redirected(to:)``). After a `303`, and after a `301` or `302` answering a `POST`, the
    /// next request is a `GET` without a body; after a `307` or `308` it repeats the method and the body. The 17th
    /// redirect in a row fails the request with `URLError.httpTooManyRedirects`; one to a URL no `StubServer` serves
    /// fails it with `URLError.unsupportedURL`. Any response with one of those statuses and a `Location` header is
    /// followed the same way.
    ///
    /// The session's delegate is not asked (`urlSession(_:task:willPerformHTTPRedirection:newRequest:
    /// completionHandler:)`): swift-corelibs-foundation gives a `URLProtocol` no way to redirect, so the stub follows
    /// redirects itself, on every platform alike, and a test of the delegate's redirect policy needs a real server.
    public static func redirect(to location: String, status: Int = 302) -> StubResponse {
        StubResponse(status: status, headers: ["Location": location])
    }

    /// Where this response redirects a request for `url`: its `Location`, resolved against `url`, if its status is a
    /// redirect's; `nil` otherwise.
    func redirectLocation(from url: URL) -> URL? {
        guard [301, 302, 303, 307, 308].contains(status) else { return nil }
        let location = headers.first { $0.key.caseInsensitiveCompare("Location") == .orderedSame }?.value
        return location.flatMap { URL(string: $0, relativeTo: url)?.absoluteURL }
    }

    /// No answer at all: the request stays unanswered until the client cancels it (or its own timeout fires).
    public static var stall: StubResponse {
        StubResponse(answers: false)
    }

    /// A connection refused: the request fails with `URLError.cannotConnectToHost` (or `code`) before any response,
    /// as a mirror that is down does.
    ///
    /// ```swift
    /// StubServer { _ in .refused }
    /// ```
    public static var refused: StubResponse { refused(with: .cannotConnectToHost) }

    /// A request that fails with `code` before any response: `.timedOut`, `.cannotFindHost`, `.notConnectedToInternet`.
    public static func refused(with code: URLError.Code) -> StubResponse {
        StubResponse(failureBeforeResponse: code)
    }

    /// This response with its status and headers sent `delay` after the request, on the server's clock (a slow
    /// server's first byte); the body follows as it would at once.
    ///
    /// ```swift
    /// StubServer(clock: clock) { _ in StubResponse.body(payload).delayed(by: .seconds(5)) }
    /// ```
    public func delayed(by delay: DispatchTimeInterval) -> StubResponse {
        var response = self
        response.delay = delay
        return response
    }

    /// This response, cut off after `bytes` body bytes by a failure (`.networkConnectionLost` by default): a
    /// connection reset mid-body.
    public func failing(after bytes: Int, with code: URLError.Code = .networkConnectionLost) -> StubResponse {
        var response = self
        response.limit = max(0, bytes)
        response.ending = .fail(code)
        return response
    }

    /// This response, stopping after `bytes` body bytes: nothing more is sent and it never ends.
    public func stalling(after bytes: Int) -> StubResponse {
        var response = self
        response.limit = max(0, bytes)
        response.ending = .stall
        return response
    }

    /// `file` as an HTTP server serves it to `request` (RFC 9110 §14), with a strong `ETag` of `etag` (quotes
    /// included) and a `Last-Modified` of `lastModified`, either of which may be `nil`:
    ///
    /// - no `Range`: `200` and the whole file;
    /// - `Range: bytes=N-` or `bytes=N-M` (and an `If-Range` that is absent or names the file as it is): `206` with
    ///   those bytes (up to the end) and a `Content-Range`; `416` if `N` is past the end;
    /// - an `If-Range` that does not name the file as it is — another entity-tag, a weak one, another date — (the
    ///   file changed): `200` and the whole file.
    ///
    /// ```swift
    /// StubServer(clock: clock) { request in
    ///     StubResponse.file(payload, etag: "\"v1\"", for: request).paced(chunkSize: 1_000, every: .seconds(1))
    /// }
    /// ```
    ///
    /// Other `Range` forms (suffixes, several ranges, nonsense) are answered with the whole file, as servers may.
    /// The project's own loopback test server answers ranges with this too.
    public static func file(
        _ file: Data,
        etag: String? = "\"stub\"",
        lastModified: String? = nil,
        for request: URLRequest
    ) -> StubResponse {
        var headers = ["Accept-Ranges": "bytes"]
        headers["ETag"] = etag
        headers["Last-Modified"] = lastModified
        guard let requested = request.value(forHTTPHeaderField: "Range").flatMap(byteRange),
            ifRange(request.value(forHTTPHeaderField: "If-Range"), names: etag, lastModified)
        else {
            return .body(file, headers: headers)
        }
        guard requested.lowerBound < file.count else {
            headers["Content-Range"] = "bytes */\(file.count)"
            return .status(416, headers: headers)
        }
        let range = requested.lowerBound..<min(file.count, requested.upperBound)
        headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(file.count)"
        return .body(file.subdata(in: range), status: 206, headers: headers)
    }

    /// `bytes=N-` or `bytes=N-M`: one range, whose end may lie past the file's; `nil` for anything else.
    private static func byteRange(_ header: String) -> Range<Int>? {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.hasPrefix("bytes="), !value.contains(",") else { return nil }
        let bounds = value.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), first >= 0 else { return nil }
        if bounds[1].isEmpty { return first..<Int.max }
        guard let last = Int(bounds[1]), last >= first else { return nil }
        return first..<(last == Int.max ? Int.max : last + 1)
    }

    /// Whether an `If-Range` (absent: yes) names the file as it is: its entity-tag, compared strongly (a weak one
    /// never matches), or its exact `Last-Modified` date.
    private static func ifRange(_ condition: String?, names etag: String?, _ lastModified: String?) -> Bool {
        guard let condition else { return true }
        if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
            return etag.map { !$0.hasPrefix("W/") && $0 == condition } ?? false
        }
        return condition == lastModified
    }

    /// This response with its body sent in chunks of `chunkSize` bytes, `every` so often on the server's clock.
    public func paced(chunkSize: Int, every interval: DispatchTimeInterval?) -> StubResponse {
        var response = self
        response.chunkSize = max(1, chunkSize)
        response.interval = interval
        return response
    }
}
