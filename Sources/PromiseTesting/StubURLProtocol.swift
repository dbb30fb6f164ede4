import Dispatch
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        #if canImport(FoundationNetworking)
        if task is URLSessionDownloadTask {
            // swift-corelibs-foundation hands a download task's completion the file its own protocols wrote, and a
            // custom protocol has none to give: the download would fail with an unexplained cannotOpenFile. The
            // error says why, and what to do (a failure reported from here would reach no test: this is not the
            // test's task).
            let message =
                "StubServer cannot serve a URLSessionDownloadTask on Linux (swift-corelibs-foundation gives a custom "
                + "URLProtocol no file to write the body to), which a session with a delegate of its own downloads "
                + "with: make the session with URLSession(configuration: server.configuration) or "
                + "URLSession.withProgressReporting(configuration: server.configuration), whose downloads stream "
                + "through data tasks (\(url.absoluteString))"
            let error = URLError(.unsupportedURL, userInfo: [NSLocalizedDescriptionKey: message])
            withClient { $0.urlProtocol($1, didFailWithError: error) }
            return
        }
        #endif
        serve(request, on: server, redirects: 0)
    }

    /// The most redirects in a row the stub follows; the next one fails the request with `.httpTooManyRedirects`.
    static let redirectLimit = 16

    /// Answers `request` — the one the client sent, or one a redirect led to, the `redirects`-th in a row — as
    /// `server` says: at once, or after the response's delay on the server's clock.
    private func serve(_ request: URLRequest, on server: StubServer, redirects: Int) {
        let response = server.respond(request)
        let index = server.begin(request, response: response)
        progress.withLock { $0.transfer = (server, index) }
        if let code = response.failureBeforeResponse {
            progress.withLock { $0.ended = true }
            server.update {
                $0[index].state = .failed(code)
                $0[index].isStarted = true
            }
            withClient { $0.urlProtocol($1, didFailWithError: URLError(code)) }
            return
        }
        guard let delay = response.delay else {
            return answer(response, to: request, server: server, index: index, redirects: redirects)
        }
        // URLProtocol is not Sendable; this one's own state is behind its lock and its client is thread-safe.
        let this = UncheckedSendable(self)
        let answer: @Sendable () -> Void = {
            this.value.answer(response, to: request, server: server, index: index, redirects: redirects)
        }
        let timer =
            (server.clock as? TestClock)?.schedule(after: delay, pacingStub: true, answer)
            ?? server.clock.schedule(after: delay, answer)
        let alreadyEnded = progress.withLock { progress in
            if !progress.ended { progress.timers = [timer] }
            return progress.ended
        }
        if alreadyEnded { timer.cancel() }
        server.update { $0[index].isStarted = true }
    }

    /// Follows the redirect `response` answers `request` with, as URLSession follows a server's: the next request
    /// goes to the `Location` (resolved against the request's URL), as a `GET` without a body after a `303`, or
    /// after a `301` or `302` answering a `POST`; with the same method and body after a `307` or `308`.
    private func follow(
        _ response: StubResponse,
        to location: URL,
        from request: URLRequest,
        server: StubServer,
        index: Int,
        redirects: Int
    ) {
        server.update {
            $0[index].state = .redirected(to: location)
            $0[index].isStarted = true
        }
        var next = request
        next.url = location
        if response.status == 303 || ([301, 302].contains(response.status) && request.httpMethod == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
        }
        let target = StubRegistry.shared.server(for: location.host).server
        guard redirects < Self.redirectLimit, let target, location.host?.hasPrefix("stub-") == true else {
            progress.withLock { $0.ended = true }
            let error =
                redirects < Self.redirectLimit
                ? URLError(
                    .unsupportedURL,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "a StubServer redirected to \(location.absoluteString), which no StubServer serves"
                    ]
                )
                : URLError(.httpTooManyRedirects)
            withClient { $0.urlProtocol($1, didFailWithError: error) }
            return
        }
        serve(next, on: target, redirects: redirects + 1)
    }

    /// Sends `response`'s status and headers, then its body as it says, for transfer `index` of `server` — or
    /// follows it, if it is a redirect.
    private func answer(
        _ response: StubResponse,
        to request: URLRequest,
        server: StubServer,
        index: Int,
        redirects: Int
    ) {
        guard !progress.withLock({ $0.stopped }), let url = request.url else { return }
        guard response.answers else {
            server.update {
                $0[index].state = .stalled
                $0[index].isStarted = true
            }
            return
        }
        if let location = response.redirectLocation(from: url) {
            return follow(response, to: location, from: request, server: server, index: index, redirects: redirects)
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
            let due: @Sendable () -> Void = { this.value.chunkIsDue(k) }
            if let clock = server.clock as? TestClock {
                scheduled.append(clock.schedule(after: after, pacingStub: true, due))
            } else {
                scheduled.append(server.clock.schedule(after: after, due))
            }
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
