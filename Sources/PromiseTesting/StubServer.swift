public import Dispatch
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
/// clock.advance(by: .milliseconds(450))   // 5 chunks sent
/// download.cancel()                        // Stop
/// await server.waitUntil { $0[0].state == .stoppedByClient }
/// ```
///
/// Each server has a host of its own (`stub-<uuid>.invalid`), so tests running in parallel each reach their own.
/// A session reaches it when made with ``configuration``, a session configuration whose `protocolClasses` start
/// with the stub's `URLProtocol` subclass. The `respond` closure answers each request with a ``StubResponse``:
/// a status, headers and a body sent in chunks, paced on `clock` or all at once, then ended normally, by a
/// failure or a stall. ``StubResponse/file(_:etag:for:)`` answers `Range` and `If-Range` as an HTTP server does.
///
/// What each request became is in ``transfers``; ``waitForRequests(_:)`` and ``waitUntil(_:)`` wait for it
/// without polling and without timeouts of their own.
public final class StubServer: Sendable {
    /// The host of this server's URLs.
    public let host: String
    let clock: any PromiseClock
    let respond: @Sendable (URLRequest) -> StubResponse

    /// Every transfer, in order; waited on by ``waitUntil(_:)``.
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
    /// Requests to other hosts fail with `URLError.unsupportedURL`.
    public var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        return configuration
    }

    /// Every request received so far, in order, and what became of it.
    public var transfers: [StubTransfer] {
        recorded.read { $0 }
    }

    /// Returns once at least `count` requests have arrived and the stub has done what it does at once for each:
    /// sent the headers and the first chunk, and scheduled the later chunks on the clock.
    public func waitForRequests(_ count: Int) async {
        await waitUntil { $0.count(where: \.isStarted) >= count }
    }

    /// Returns once `predicate` holds for ``transfers``; checked now and after each change.
    ///
    /// ```swift
    /// await server.waitUntil { $0.first?.bytesSent == 500 }
    /// ```
    public func waitUntil(_ predicate: @escaping @Sendable ([StubTransfer]) -> Bool) async {
        await recorded.wait(until: predicate)
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
    }

    /// The request as the stub received it: its `Range` and `If-Range` headers, for instance.
    public let request: URLRequest
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
    }
}

/// How a ``StubServer`` answers one request: status, headers, body, how the body is paced and how it ends.
///
/// ```swift
/// StubResponse.body(payload)                                         // 200, all at once
/// StubResponse.body(payload, chunkSize: 1_000, every: .seconds(1))   // 1 KB per virtual second
/// StubResponse.status(503)                                           // an error status, empty body
/// StubResponse.body(payload, chunkSize: 1_000).failing(after: 2_500) // the connection drops after 2,500 bytes
/// StubResponse.body(payload, chunkSize: 1_000).stalling(after: 2_500)// then nothing more, ever
/// StubResponse.stall                                                 // no answer at all
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

    /// A response with every property given.
    public init(
        status: Int = 200,
        headers: [String: String] = [:],
        body: Data = Data(),
        chunkSize: Int? = nil,
        interval: DispatchTimeInterval? = nil,
        limit: Int? = nil,
        ending: Ending = .finish,
        answers: Bool = true
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.chunkSize = chunkSize.map { max(1, $0) }
        self.interval = interval
        self.limit = limit.map { max(0, $0) }
        self.ending = ending
        self.answers = answers
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

    /// No answer at all: the request stays unanswered until the client cancels it (or its own timeout fires).
    public static var stall: StubResponse {
        StubResponse(answers: false)
    }

    /// This response, cut off after `bytes` body bytes by a failure (`.networkConnectionLost` by default).
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

    /// `file` as an HTTP server serves it to `request`, with a strong `ETag` of `etag` (quotes included):
    ///
    /// - no `Range`: `200` and the whole file;
    /// - `Range: bytes=N-` (and an `If-Range` that is absent or equals `etag`): `206` with bytes `N…` and a
    ///   `Content-Range`; `416` if `N` is past the end;
    /// - an `If-Range` that does not match `etag` (the file changed): `200` and the whole file.
    ///
    /// ```swift
    /// StubServer(clock: clock) { request in
    ///     StubResponse.file(payload, etag: "\"v1\"", for: request).paced(chunkSize: 1_000, every: .seconds(1))
    /// }
    /// ```
    ///
    /// Other `Range` forms (suffixes, several ranges) are answered with the whole file, as servers may.
    public static func file(_ file: Data, etag: String = "\"stub\"", for request: URLRequest) -> StubResponse {
        var headers = ["ETag": etag, "Accept-Ranges": "bytes"]
        guard let range = request.value(forHTTPHeaderField: "Range"),
            range.hasPrefix("bytes="), range.hasSuffix("-"),
            let start = Int(range.dropFirst("bytes=".count).dropLast()),
            request.value(forHTTPHeaderField: "If-Range").map({ $0 == etag }) ?? true
        else {
            return .body(file, headers: headers)
        }
        guard start < file.count else {
            headers["Content-Range"] = "bytes */\(file.count)"
            return .status(416, headers: headers)
        }
        headers["Content-Range"] = "bytes \(start)-\(file.count - 1)/\(file.count)"
        return .body(file.subdata(in: start..<file.count), status: 206, headers: headers)
    }

    /// This response with its body sent in chunks of `chunkSize` bytes, `every` so often on the server's clock.
    public func paced(chunkSize: Int, every interval: DispatchTimeInterval?) -> StubResponse {
        var response = self
        response.chunkSize = max(1, chunkSize)
        response.interval = interval
        return response
    }
}

/// Finds the server of a request's host.
final class StubRegistry: Sendable {
    static let shared = StubRegistry()

    private struct WeakServer {
        weak var server: StubServer?
        let site: CallSite
    }

    private struct Hosts {
        var servers: [String: WeakServer] = [:]
        /// Where each server that is gone was made, to say so when a request still reaches its host.
        var gone: [String: CallSite] = [:]
    }

    private let hosts = Locked(Hosts())

    func register(_ server: StubServer, madeAt site: CallSite) {
        hosts.withLock { $0.servers[server.host] = WeakServer(server: server, site: site) }
    }

    func unregister(_ host: String) {
        hosts.withLock { $0.gone[host] = $0.servers.removeValue(forKey: host)?.site }
    }

    /// The server of `host`, or where it was made if it is gone.
    func server(for host: String?) -> (server: StubServer?, goneSince: CallSite?) {
        guard let host else { return (nil, nil) }
        return hosts.withLock { ($0.servers[host]?.server, $0.gone[host]) }
    }
}

/// The `URLProtocol` behind ``StubServer/configuration``: hands each request to its host's server.
///
/// The client is called in order — headers, each chunk, the ending — on every clock: a chunk whose timer fires
/// before an earlier chunk was sent (an `ImmediateClock` fires each timer as it is scheduled) waits for it. On Apple
/// platforms every client call is made on the thread that called `startLoading()`, through its run loop, as the URL
/// loading system requires; swift-corelibs-foundation calls `startLoading()` on a dispatch queue with no run loop,
/// and its client takes calls from any thread.
final class StubURLProtocol: URLProtocol {
    /// What a chunk's timer, firing on the thread that advances the clock, shares with URLSession's calls.
    private struct Progress {
        var timers: [PromiseTimer] = []
        /// The stub sent its ending, or the client stopped it: nothing more is sent.
        var ended = false
        /// The client stopped the transfer (`stopLoading()`): no client call is made any more.
        var stopped = false
        var transfer: (server: StubServer, index: Int)?
        /// The body's chunks and how it ends, once the headers are sent.
        var plan: (chunks: [Data], ending: StubResponse.Ending)?
        /// The chunks whose time has come and that are not sent yet.
        var due: Set<Int> = []
        /// How many chunks were sent: the index of the next one.
        var sent = 0
        /// Whether a thread is sending the due chunks; another that finds one due leaves it to that thread.
        var isSending = false
    }

    private let progress = Locked(Progress())

    #if canImport(Darwin)
    /// The run loop of the thread that called `startLoading()`: where every client call is made.
    private let clientRunLoop = Locked<UncheckedSendable<CFRunLoop>?>(nil)
    #endif

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host?.hasPrefix("stub-") == true
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        #if canImport(Darwin)
        clientRunLoop.withLock { $0 = UncheckedSendable(CFRunLoopGetCurrent()) }
        #endif
        let found = StubRegistry.shared.server(for: request.url?.host)
        guard let server = found.server, let url = request.url else {
            if let site = found.goneSince {
                reportTestFailure(
                    "a request reached the StubServer made here after it was deallocated: keep a reference to it "
                        + "for as long as its URLs are used (\(request.url?.absoluteString ?? "no URL"))",
                    at: site
                )
            }
            let error = URLError(found.goneSince == nil ? .unsupportedURL : .cannotFindHost)
            withClient { $0.urlProtocol($1, didFailWithError: error) }
            return
        }
        let response = server.respond(request)
        let index = server.begin(request, response: response)
        progress.withLock { $0.transfer = (server, index) }
        guard response.answers else {
            server.update {
                $0[index].state = .stalled
                $0[index].isStarted = true
            }
            return
        }
        var headers = response.headers
        if !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Length") == .orderedSame }) {
            headers["Content-Length"] = "\(response.body.count)"
        }
        let httpResponse = HTTPURLResponse(
            url: url,
            statusCode: response.status,
            httpVersion: "HTTP/1.1",
            headerFields: headers
        )!
        withClient { $0.urlProtocol($1, didReceive: httpResponse, cacheStoragePolicy: .notAllowed) }

        let toSend = min(response.body.count, response.limit ?? .max)
        let chunkSize = response.chunkSize ?? max(1, toSend)
        let chunks = stride(from: 0, to: toSend, by: chunkSize).map {
            response.body.subdata(in: $0..<min($0 + chunkSize, toSend))
        }
        progress.withLock { $0.plan = (chunks, response.ending) }
        guard let interval = response.interval, chunks.count > 1 else {
            chunks.indices.forEach(chunkIsDue)
            if chunks.isEmpty { end(response.ending) }
            server.update { $0[index].isStarted = true }
            return
        }
        // The k-th chunk k intervals from now, the ending with the last one; all scheduled before the first chunk
        // is sent, so that a test that saw it can advance the clock.
        let step = interval.nanosecondsOrNever ?? .max
        // URLProtocol is not Sendable; this one's own state is behind its lock and its client is thread-safe.
        let this = UncheckedSendable(self)
        var scheduled: [PromiseTimer] = []
        for k in chunks.indices.dropFirst() {
            let delay = step.multipliedReportingOverflow(by: UInt64(k))
            let after: DispatchTimeInterval =
                delay.overflow || delay.partialValue > UInt64(Int.max) ? .never : .nanoseconds(Int(delay.partialValue))
            scheduled.append(server.clock.schedule(after: after) { this.value.chunkIsDue(k) })
        }
        let alreadyEnded = progress.withLock { progress in
            if !progress.ended { progress.timers = scheduled }
            return progress.ended
        }
        if alreadyEnded { scheduled.forEach { $0.cancel() } }
        chunkIsDue(0)
        server.update { $0[index].isStarted = true }
    }

    override func stopLoading() {
        let (wasEnded, scheduled, transfer) = progress.withLock { progress in
            defer {
                progress.ended = true
                progress.stopped = true
                progress.timers = []
            }
            return (progress.ended, progress.timers, progress.transfer)
        }
        scheduled.forEach { $0.cancel() }
        if !wasEnded, let (server, index) = transfer {
            server.update { $0[index].state = .stoppedByClient }
        }
    }

    /// Marks chunk `k` due, and sends every due chunk that follows the last one sent, in order, with the ending
    /// after the last chunk — unless another thread is sending them, which then sends this one too.
    private func chunkIsDue(_ k: Int) {
        let sends = progress.withLock { progress in
            progress.due.insert(k)
            guard !progress.isSending else { return false }
            progress.isSending = true
            return true
        }
        guard sends else { return }
        while true {
            let next: (chunk: Data, ending: StubResponse.Ending?)? = progress.withLock { progress in
                guard let plan = progress.plan, progress.due.remove(progress.sent) != nil else {
                    progress.isSending = false
                    return nil
                }
                progress.sent += 1
                let k = progress.sent - 1
                return (plan.chunks[k], k == plan.chunks.count - 1 ? plan.ending : nil)
            }
            guard let next else { return }
            send(next.chunk)
            if let ending = next.ending { end(ending) }
        }
    }

    private func send(_ data: Data) {
        let (isEnded, transfer) = progress.withLock { ($0.ended, $0.transfer) }
        guard !isEnded, let (server, index) = transfer else { return }
        withClient { $0.urlProtocol($1, didLoad: data) }
        server.update { $0[index].bytesSent += data.count }
    }

    private func end(_ ending: StubResponse.Ending) {
        let (isEnded, transfer) = progress.withLock { progress in
            defer { if ending != .stall { progress.ended = true } }
            return (progress.ended, progress.transfer)
        }
        guard !isEnded, let (server, index) = transfer else { return }
        switch ending {
        case .finish:
            server.update { $0[index].state = .finished }
            withClient { $0.urlProtocolDidFinishLoading($1) }
        case .fail(let code):
            server.update { $0[index].state = .failed(code) }
            withClient { $0.urlProtocol($1, didFailWithError: URLError(code)) }
        case .stall:
            server.update { $0[index].state = .stalled }
        }
    }

    /// Calls the client with `call`, unless the client stopped the transfer: on Apple platforms from the run loop
    /// of the thread that called `startLoading()` (in order: the run loop performs blocks first in, first out);
    /// elsewhere at once.
    private func withClient(_ call: @escaping @Sendable (any URLProtocolClient, URLProtocol) -> Void) {
        // URLProtocol is not Sendable; this one's own state is behind its lock.
        let this = UncheckedSendable(self)
        let deliver: @Sendable () -> Void = {
            let stubProtocol = this.value
            guard !stubProtocol.progress.withLock(\.stopped), let client = stubProtocol.client else { return }
            call(client, stubProtocol)
        }
        #if canImport(Darwin)
        guard let runLoop = clientRunLoop.withLock({ $0?.value }) else { return deliver() }
        CFRunLoopPerformBlock(runLoop, CFRunLoopMode.commonModes.rawValue, deliver)
        CFRunLoopWakeUp(runLoop)
        #else
        deliver()
        #endif
    }
}
