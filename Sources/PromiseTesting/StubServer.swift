import Dispatch
public import Foundation
public import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Serves a `URLSession`'s transfers from the test: no socket, no server, and — with a ``TestClock`` — no waiting.
///
/// ```swift
/// let clock = TestClock()
/// let server = StubServer(clock: clock) { request in
///     .body(Data(count: 1_000), chunkSize: 100, every: .milliseconds(100))   // 1 KB over one virtual second
/// }
/// let session = URLSession.withProgressReporting(configuration: server.configuration)
/// let download = session.cancellableData(from: server.url("/file"))
/// await server.waitForRequests(1)
/// await clock.advance(by: .milliseconds(450))   // 5 chunks sent
/// download.cancel()                              // Stop
/// await server.waitUntil { $0[0].state == .stoppedByClient }
/// ```
///
/// Each server has a host of its own (`stub-<uuid>.invalid`), so tests running in parallel each reach their own.
/// A session reaches it when made with ``configuration``, a session configuration whose `protocolClasses` start
/// with the stub's `URLProtocol` subclass. The `respond` closure answers each request with a ``StubResponse``:
/// a status, headers and a body sent in chunks, paced on `clock` or all at once, then ended normally, by a
/// failure or a stall. ``StubResponse/file(_:etag:lastModified:for:)`` answers `Range` and `If-Range` as an HTTP
/// server does.
///
/// What each request became is in ``transfers``; ``waitForRequests(_:timeout:fileID:filePath:line:column:)`` and
/// ``waitUntil(timeout:fileID:filePath:line:column:_:)`` wait for it without polling, failing the test if it does
/// not come within their timeout.
public final class StubServer: Sendable {
    /// The host of this server's URLs.
    public let host: String
    let clock: any PromiseClock
    let respond: @Sendable (URLRequest) -> StubResponse

    /// Every transfer, in order; waited on by ``waitUntil(timeout:fileID:filePath:line:column:_:)``.
    private let recorded = Watched<[StubTransfer]>([])

    /// A server that answers each request with `respond(request)`, pacing bodies on `clock` (by default
    /// `PromiseClocks.current` when the server is made).
    ///
    /// Keep the server for as long as its URLs are used: a request to a server that is gone fails with
    /// `URLError.cannotFindHost` and fails the test, naming where the server was made.
    public init(
        clock: any PromiseClock = PromiseClocks.current,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column,
        respond: @escaping @Sendable (URLRequest) -> StubResponse
    ) {
        self.host = "stub-\(UUID().uuidString.lowercased()).invalid"
        self.clock = clock
        self.respond = respond
        StubRegistry.shared.register(
            self,
            madeAt: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        )
    }

    deinit {
        StubRegistry.shared.unregister(host)
    }

    /// `http://<host><path>`: a URL this server answers.
    public func url(_ path: String) -> URL {
        URL(string: "http://\(host)\(path.hasPrefix("/") ? path : "/" + path)")!
    }

    /// An ephemeral session configuration whose transfers this server (or any other `StubServer`) serves.
    /// Requests to other hosts fail with `URLError.unsupportedURL`. It has no URL cache: every request reaches the
    /// server, and is in ``transfers``.
    ///
    /// ```swift
    /// let session = URLSession.withProgressReporting(configuration: server.configuration)
    /// ```
    ///
    /// Make the session with `URLSession.withProgressReporting(configuration:delegateQueue:)`, as the app's code
    /// should: on Linux a stub cannot serve a `URLSessionDownloadTask` — which a download on a session without that
    /// delegate uses — and such a download fails with `URLError.unsupportedURL` saying so. Data and upload transfers
    /// work on any session.
    public var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        configuration.urlCache = nil
        return configuration
    }

    /// Every request received so far, in order, and what became of it.
    public var transfers: [StubTransfer] {
        recorded.read { $0 }
    }

    /// Returns once at least `count` requests have arrived and the stub has done what it does at once for each:
    /// sent the headers and the first chunk, and scheduled the later chunks on the clock.
    ///
    /// ```swift
    /// let download = session.resumableDownload(from: server.url("/file"), to: destination)
    /// await server.waitForRequests(1)
    /// ```
    ///
    /// A request that never comes fails the test after `timeout` seconds of real time (60 by default), saying what
    /// arrived instead; a cancelled task stops waiting at once.
    ///
    /// - Returns: whether the requests arrived (`false`: the test has failed, or was cancelled).
    @discardableResult
    public func waitForRequests(
        _ count: Int,
        timeout: TimeInterval = 60,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async -> Bool {
        await wait(
            for: "\(count) request\(count == 1 ? "" : "s")",
            timeout: timeout,
            at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        ) { $0.count(where: \.isStarted) >= count }
    }

    /// Returns once `predicate` holds for ``transfers``; checked now and after each change, never while the server
    /// holds its lock (it may read the server itself).
    ///
    /// ```swift
    /// await server.waitUntil { $0.first?.bytesSent == 500 }
    /// ```
    ///
    /// If it does not hold within `timeout` seconds of real time (60 by default), the test fails with the transfers
    /// as they were; a cancelled task stops waiting at once.
    ///
    /// - Returns: whether `predicate` held (`false`: the test has failed, or was cancelled).
    @discardableResult
    public func waitUntil(
        timeout: TimeInterval = 60,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column,
        _ predicate: @escaping @Sendable ([StubTransfer]) -> Bool
    ) async -> Bool {
        await wait(
            for: "the condition",
            timeout: timeout,
            at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column),
            until: predicate
        )
    }

    private func wait(
        for what: String,
        timeout: TimeInterval,
        at site: CallSite,
        until predicate: @escaping @Sendable ([StubTransfer]) -> Bool
    ) async -> Bool {
        await recorded.wait(until: predicate, timeout: timeout, reportingAt: site) { transfers in
            let seen = transfers.isEmpty ? "no request" : transfers.map(\.summary).joined(separator: "; ")
            return "StubServer waited \(timeout) s for \(what) in vain; it saw: \(seen)"
        }
    }

    /// Records a new transfer and returns its index.
    func begin(_ request: URLRequest, response: StubResponse) -> Int {
        update { transfers in
            transfers.append(StubTransfer(request: request, status: response.status))
            return transfers.count - 1
        }
    }

    /// Changes the transfers and resumes the waiters whose condition now holds.
    @discardableResult
    func update<R>(_ body: (inout [StubTransfer]) -> R) -> R {
        recorded.update(body)
    }
}

/// What a ``StubServer`` did with one request.
public struct StubTransfer: Sendable {
    /// `GET /file → 206, 500 bytes sent, sending`: what a failed wait reports.
    var summary: String {
        "\(request.httpMethod ?? "GET") \(request.url?.path ?? "?") → \(status), \(bytesSent) bytes sent, \(state)"
    }

    /// How a transfer stands.
    public enum State: Sendable, Equatable {
        /// Headers sent; the body is being sent.
        case sending
        /// The whole body was sent and the response ended.
        case finished
        /// The response ended with this error after ``StubTransfer/bytesSent`` bytes, as the stub was told.
        case failed(URLError.Code)
        /// The stub sends nothing more and never ends, as it was told: only the client can end it.
        case stalled
        /// The client stopped it (its task was cancelled) before it ended.
        case stoppedByClient
        /// The response was a redirect to this URL, which the stub followed: the next transfer is its request
        /// (``StubResponse/redirect(to:status:)``).
        case redirected(to: URL)
    }

    /// The request as the stub received it: its `Range` and `If-Range` headers, for instance.
    public let request: URLRequest
    /// The body the request sent — a `POST`'s form, an upload's data — from its `httpBody` or its `httpBodyStream`
    /// (Apple's URLSession passes an upload's body as a stream); empty if it sent none. On Linux an upload task's
    /// body is not passed to a `URLProtocol` at all: send it as the request's `httpBody` to see it here.
    ///
    /// ```swift
    /// #expect(server.transfers[0].requestBody == Data("name=ada".utf8))
    /// #expect(server.transfers[0].request.value(forHTTPHeaderField: "Authorization") == "Bearer t0ken")
    /// ```
    public let requestBody: Data
    /// The status answered.
    public let status: Int
    /// Body bytes sent so far.
    public internal(set) var bytesSent = 0
    /// How it stands.
    public internal(set) var state = State.sending
    /// Whether the stub has done everything it does at once — headers, the first chunk, scheduling the rest.
    var isStarted = false

    init(request: URLRequest, status: Int) {
        self.request = request
        self.status = status
        requestBody = request.httpBody ?? request.httpBodyStream.map(Self.readAll) ?? Data()
    }

    /// Everything `stream` holds.
    private static func readAll(_ stream: InputStream) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        stream.open()
        defer { stream.close() }
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { return data }
            data.append(buffer, count: count)
        }
    }
}
