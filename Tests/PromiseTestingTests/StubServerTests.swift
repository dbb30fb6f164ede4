import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import PromiseCore
import TestSupport
import Testing

@testable import PromiseTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Watched {
    /// The value now.
    var current: Value { read { $0 } }
}

/// StubServer serves URLSession transfers — data and resumable downloads — with no socket.
@Suite(timeLimit(minutes: 1))
struct StubServerTests {
    @Test func servesAFixedBodyWithItsStatusAndHeaders() async throws {
        let body = payload(5_000)
        let server = StubServer { _ in .body(body, headers: ["Content-Type": "application/octet-stream"]) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }

        let (data, response) = try await session.cancellableData(from: server.url("/file")).async()
        #expect(data == body)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
        #expect(server.transfers.map(\.state) == [.finished])
        #expect(server.transfers[0].request.url?.path == "/file")
    }

    @Test func anErrorStatusRejectsWithHTTPStatusError() async throws {
        let server = StubServer { _ in .status(503, body: Data("busy".utf8)) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let error = await #expect(throws: HTTPStatusError.self) {
            try await session.cancellableData(from: server.url("/busy")).async()
        }
        #expect(error?.statusCode == 503)
        #expect(error?.body == Data("busy".utf8))
    }

    @Test func aFailureAfterNBytesRejectsWithTheURLErrorAndSendsOnlyThoseBytes() async throws {
        let server = StubServer { _ in StubResponse.body(payload(10_000), chunkSize: 1_000).failing(after: 2_500) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }

        let error = await #expect(throws: URLError.self) {
            try await session.cancellableData(from: server.url("/drops")).async()
        }
        #expect(error?.code == .networkConnectionLost)
        #expect(server.transfers[0].bytesSent == 2_500)
        #expect(server.transfers[0].state == .failed(.networkConnectionLost))
    }

    @Test func chunksArriveOnlyAsTheClockAdvancesAndStopEndsTheTransfer() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in .body(payload(10_000), chunkSize: 1_000, every: .seconds(1)) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let received = Watched<Int64>(0)

        let transfer = session.cancellableData(for: URLRequest(url: server.url("/slow"))) { progress in
            received.update { $0 = progress.bytesTransferred }
        }
        await server.waitForRequests(1)
        #expect(server.transfers[0].bytesSent == 1_000, "the first chunk at once")
        await clock.advance(by: .seconds(3))
        #expect(server.transfers[0].bytesSent == 4_000)
        await received.wait { $0 == 4_000 }
        #expect(clock.pendingTimers == 6)

        transfer.cancel()
        await server.waitUntil { $0[0].state == .stoppedByClient }
        #expect(clock.pendingTimers == 0, "stopping releases the chunks' timers")
        #expect(server.transfers[0].bytesSent == 4_000)
        await #expect(throws: CancellablePromiseError.self) { try await transfer.async() }
    }

    @Test func aPacedBodyOnAClockThatFiresAtOnceArrivesWholeAndInOrder() async throws {
        // An ImmediateClock fires each chunk's timer as it is scheduled, before the first chunk is sent.
        let body = payload(10_000)
        let clock = ImmediateClock()
        let server = StubServer(clock: clock) { _ in .body(body, chunkSize: 1_000, every: .seconds(1)) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }

        let (data, _) = try await session.cancellableData(from: server.url("/paced")).async()
        #expect(data == body)
        #expect(server.transfers.map(\.bytesSent) == [10_000])
        #expect(server.transfers.map(\.state) == [.finished])
        #expect(clock.elapsed == 45, "nine chunks after the first, 1 s apart from the start: 1 + 2 + … + 9 s")
    }

    @Test func rangeAndIfRangeAreAnsweredAsAnHTTPServerDoes() {
        let file = payload(1_000)
        func request(range: String?, ifRange: String?) -> URLRequest {
            var request = URLRequest(url: URL(string: "http://stub-x.invalid/f")!)
            request.setValue(range, forHTTPHeaderField: "Range")
            request.setValue(ifRange, forHTTPHeaderField: "If-Range")
            return request
        }
        let whole = StubResponse.file(file, etag: "\"v1\"", for: request(range: nil, ifRange: nil))
        #expect(whole.status == 200 && whole.body == file && whole.headers["ETag"] == "\"v1\"")

        let rest = StubResponse.file(file, etag: "\"v1\"", for: request(range: "bytes=400-", ifRange: "\"v1\""))
        #expect(rest.status == 206 && rest.body == file.subdata(in: 400..<1_000))
        #expect(rest.headers["Content-Range"] == "bytes 400-999/1000")

        let changed = StubResponse.file(file, etag: "\"v2\"", for: request(range: "bytes=400-", ifRange: "\"v1\""))
        #expect(changed.status == 200 && changed.body == file, "If-Range does not match: the whole file")

        let past = StubResponse.file(file, etag: "\"v1\"", for: request(range: "bytes=1000-", ifRange: nil))
        #expect(past.status == 416 && past.headers["Content-Range"] == "bytes */1000")

        let part = StubResponse.file(file, for: request(range: "bytes=10-19", ifRange: nil))
        #expect(part.status == 206 && part.body == file.subdata(in: 10..<20))
        #expect(part.headers["Content-Range"] == "bytes 10-19/1000")
        let pastTheEnd = StubResponse.file(file, for: request(range: "bytes=990-\(Int.max)", ifRange: nil))
        #expect(pastTheEnd.status == 206 && pastTheEnd.body == file.subdata(in: 990..<1_000), "no overflow")

        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        let sameDate = StubResponse.file(
            file,
            etag: nil,
            lastModified: date,
            for: request(range: "bytes=5-", ifRange: date)
        )
        #expect(sameDate.status == 206 && sameDate.headers["Last-Modified"] == date && sameDate.headers["ETag"] == nil)
        let weak = StubResponse.file(file, etag: "W/\"v1\"", for: request(range: "bytes=5-", ifRange: "W/\"v1\""))
        #expect(weak.status == 200, "If-Range compares entity-tags strongly: a weak one never matches")
        for nonsense in ["bytes=-5", "bytes=5-4", "bytes=0-1,5-6", "items=0-", "bytes=x-"] {
            let answer = StubResponse.file(file, for: request(range: nonsense, ifRange: nil))
            #expect(answer.status == 200 && answer.body == file, "\(nonsense): the whole file")
        }
    }

    @Test func aStalledRequestIsEndedByItsClientOnly() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in .stall }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }

        let reply = session.cancellableData(from: server.url("/never")).timeout(seconds: 30, clock: clock)
        await server.waitForRequests(1)
        #expect(server.transfers[0].state == .stalled)
        await clock.advance(by: .seconds(29))
        #expect(reply.isPending)
        await clock.advance(by: .seconds(1))
        #expect(reply.error is TimeoutError)
        await server.waitUntil { $0[0].state == .stoppedByClient }
    }

    @Test func requestsToAnotherHostFailAsUnsupported() async throws {
        let server = StubServer { _ in .body(Data()) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let other = StubServer { _ in .body(Data("other".utf8)) }
        let (data, _) = try await session.cancellableData(from: other.url("/x")).async()
        #expect(data == Data("other".utf8), "any stub server is reachable through any stub configuration")
        let gone = URL(string: "http://stub-gone.invalid/x")!
        await #expect(throws: URLError.self) { try await session.cancellableData(from: gone).async() }
    }

    /// A session without a delegate streams its downloads, on Linux through the library's stand-in session: the stub
    /// serves them there too.
    @Test func aDownloadOnASessionWithoutADelegate() async throws {
        let server = StubServer { _ in .body(payload(5_000)) }
        let session = URLSession(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let (url, _) = try await session.cancellableDownload(from: server.url("/file"), to: file).async()
        #expect(try Data(contentsOf: url) == payload(5_000))
    }

    /// A session with a delegate of the app's own downloads with a download task, which a stub cannot serve on Linux:
    /// the error says why, and what to do, instead of an unexplained cannotOpenFile (-3001).
    @Test func aDownloadOnASessionWithADelegateOfItsOwn() async throws {
        let server = StubServer { _ in .body(payload(5_000)) }
        let session = URLSession(configuration: server.configuration, delegate: AppDelegate(), delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let download = session.cancellableDownload(from: server.url("/file"), to: file)
        #if canImport(FoundationNetworking)
        let error = await #expect(throws: URLError.self) { try await download.async() }
        #expect(error?.code == .unsupportedURL)
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("cannot serve a URLSessionDownloadTask on Linux"), "\(message)")
        #expect(message.contains("URLSession(configuration: server.configuration)"), "\(message)")
        #else
        let (url, _) = try await download.async()
        #expect(try Data(contentsOf: url) == payload(5_000))
        #endif
    }

    /// A stub's configuration has no URL cache, so every request reaches it; one given a cache still serves data
    /// transfers on a plain session: on Linux the library does not turn them into download tasks (its way round
    /// swift-corelibs-foundation's cache lookup) for an app's own `URLProtocol`, which cannot serve those.
    @Test func everyRequestReachesTheStubWithOrWithoutAURLCache() async throws {
        let server = StubServer { _ in .body(payload(1_000)) }
        #expect(server.configuration.urlCache == nil)
        let configuration = server.configuration
        configuration.urlCache = URLCache(memoryCapacity: 1_048_576, diskCapacity: 0, diskPath: nil)
        for session in [URLSession(configuration: server.configuration), URLSession(configuration: configuration)] {
            defer { session.invalidateAndCancel() }
            let (data, _) = try await session.cancellableData(from: server.url("/file")).async()
            #expect(data == payload(1_000))
        }
        #expect(server.transfers.count == 2)
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func aTransferLeftPendingIsReportedAtTheCallersLine() async throws {
        let server = StubServer { _ in .stall }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let file = temporaryFile()
        let keep = Shared<[CancellablePromise<Void>]>([])
        let first = #line + 5
        await withKnownIssue {
            // Each method that makes a promise for its caller records the caller's line, not the library's.
            await withNoPromisesLeftPending {
                keep.withLock {
                    $0.append(session.cancellableData(from: server.url("/a")).asVoid())
                    $0.append(session.cancellableUpload(for: URLRequest(url: server.url("/b")), from: Data()).asVoid())
                    $0.append(session.cancellableDownload(from: server.url("/c"), to: file).asVoid())
                    $0.append(session.resumableDownload(from: server.url("/d"), to: file).promise.asVoid())
                }
            }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return (first..<first + 4).allSatisfy { text.contains("PromiseTestingTests/StubServerTests.swift:\($0)") }
        }
        for promise in keep.current { promise.cancel() }
    }

    @Test func aRefusedConnectionFailsBeforeAnyResponse() async throws {
        let server = StubServer { request in
            request.url?.path == "/down" ? .refused : .refused(with: .timedOut)
        }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let refused = await #expect(throws: URLError.self) {
            try await session.cancellableData(from: server.url("/down")).async()
        }
        #expect(refused?.code == .cannotConnectToHost)
        let timedOut = await #expect(throws: URLError.self) {
            try await session.cancellableData(from: server.url("/slow")).async()
        }
        #expect(timedOut?.code == .timedOut)
        #expect(server.transfers.map(\.state) == [.failed(.cannotConnectToHost), .failed(.timedOut)])
        #expect(server.transfers.allSatisfy { $0.bytesSent == 0 })
    }

    @Test func aRedirectIsFollowedToTheAnswerOfTheRequestItLeadsTo() async throws {
        let mirror = StubServer { _ in .body(payload(300)) }
        let server = StubServer { request in
            switch request.url?.path {
            case "/latest": .redirect(to: "/v2/file")
            case "/elsewhere": .redirect(to: mirror.url("/file").absoluteString, status: 301)
            default: .body(payload(200))
            }
        }
        for mode in ["withProgressReporting", "plain"] {
            let session =
                mode == "plain"
                ? URLSession(configuration: server.configuration)
                : .withProgressReporting(configuration: server.configuration)
            defer { session.invalidateAndCancel() }
            let (data, response) = try await session.cancellableData(from: server.url("/latest")).async()
            #expect(data == payload(200), "\(mode)")
            #expect(response.url == server.url("/v2/file"), "\(mode)")
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(mode)")
            let (other, _) = try await session.cancellableData(from: server.url("/elsewhere")).async()
            #expect(other == payload(300), "\(mode): another server's answer")
        }
        #expect(server.transfers.map(\.status) == [302, 200, 301, 302, 200, 301])
        #expect(server.transfers[0].state == .redirected(to: server.url("/v2/file")))
        #expect(server.transfers[1].request.url == server.url("/v2/file"))
        #expect(server.transfers[2].state == .redirected(to: mirror.url("/file")))
        #expect(mirror.transfers.map(\.state) == [.finished, .finished])
    }

    @Test func aRedirectKeepsOrDropsThePostAsURLSessionDoes() async throws {
        let server = StubServer { request in
            switch request.url?.path {
            case "/see-other": .redirect(to: "/result", status: 303)
            case "/found": .redirect(to: "/result", status: 302)
            case "/temporary": .redirect(to: "/result", status: 307)
            case "/permanent": .redirect(to: "/result", status: 308)
            default: .status(200)
            }
        }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let form = Data("name=ada".utf8)
        for path in ["/see-other", "/found", "/temporary", "/permanent"] {
            var request = URLRequest(url: server.url(path))
            request.httpMethod = "POST"
            request.httpBody = form
            _ = try await session.cancellableData(for: request).async()
        }
        let followed = server.transfers.filter { $0.request.url?.path == "/result" }
        #expect(followed.map { $0.request.httpMethod ?? "GET" } == ["GET", "GET", "POST", "POST"])
        #expect(followed.map(\.requestBody) == [Data(), Data(), form, form])
    }

    @Test func aRedirectLoopOrARedirectToNoStubFails() async throws {
        let server = StubServer { request in
            request.url?.path == "/loop" ? .redirect(to: "/loop") : .redirect(to: "http://stub-nobody.invalid/x")
        }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let loop = await #expect(throws: URLError.self) {
            try await session.cancellableData(from: server.url("/loop")).async()
        }
        #expect(loop?.code == .httpTooManyRedirects)
        #expect(server.transfers.count == 17, "the first request and 16 redirects followed")
        let nowhere = await #expect(throws: URLError.self) {
            try await session.cancellableData(from: server.url("/away")).async()
        }
        #expect(nowhere?.code == .unsupportedURL)
        #expect(nowhere?.localizedDescription.contains("which no StubServer serves") == true, "\(nowhere as Any)")
    }

    @Test func aDelayedResponseSendsItsHeadersWhenTheClockSaysSo() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in StubResponse.body(payload(100)).delayed(by: .seconds(5)) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let data = session.cancellableData(from: server.url("/slow"))
        await server.waitForRequests(1)
        await clock.advance(by: .seconds(4))
        #expect(data.isPending && server.transfers[0].bytesSent == 0)
        await clock.advance(by: .seconds(1))
        #expect(try await data.async().data == payload(100))

        // Cancelled while waiting for its headers: the stub's timer goes with it.
        let stopped = session.cancellableData(from: server.url("/stopped"))
        await server.waitForRequests(2)
        stopped.cancel()
        await server.waitUntil { $0[1].state == .stoppedByClient }
        #expect(clock.pendingTimers == 0)
    }

    @Test func aRequestsBodyAndHeadersAreRecorded() async throws {
        let server = StubServer { _ in .status(201) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: server.url("/photos"))
        request.setValue("Bearer t0ken", forHTTPHeaderField: "Authorization")
        request.httpMethod = "POST"
        let form = Data("name=ada&lang=swift".utf8)
        request.httpBody = form
        let started = Date()
        _ = try await session.cancellableData(for: request).async()
        print("a stubbed POST took \(Int(Date().timeIntervalSince(started) * 1_000)) ms")
        let post = try #require(server.transfers.first)
        #expect(post.request.httpMethod == "POST")
        #expect(post.request.value(forHTTPHeaderField: "Authorization") == "Bearer t0ken")
        #expect(post.requestBody == form)
        #if !canImport(FoundationNetworking)
        // An upload's body reaches a URLProtocol as a stream on Apple platforms; swift-corelibs-foundation does not
        // pass it to a custom protocol at all.
        let photo = payload(40_000)
        _ = try await session.cancellableUpload(for: request, from: photo).async()
        #expect(server.transfers.last?.requestBody == photo)
        #endif
    }

    @Test func aConditionMayReadTheServerItWaitsOn() async throws {
        // The condition runs outside the server's lock: reading `server.transfers` in it deadlocked (Linux) or
        // trapped (Darwin), both when it was first checked and on each update.
        let server = StubServer { _ in .body(payload(4_000), chunkSize: 1_000) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        await server.waitUntil { _ in server.transfers.isEmpty }
        let data = session.cancellableData(from: server.url("/file"))
        await server.waitUntil { _ in server.transfers.first?.state == .finished }
        #expect(try await data.async().data.count == 4_000)
    }
}

/// The waiting that `StubServer` and `TestClock` are built on.
@Suite(timeLimit(minutes: 1))
struct WatchedTests {
    @Test func everyWaiterResumesOnceItsConditionHoldsWhileUpdatesComeFromManyThreads() async {
        // Waiters wait for every count from 1 to 2,000 while four threads each add 500: a waiter checked against a
        // value that an update outdates before it is back on the list must be checked again, not missed.
        let counter = Watched(0)
        let resumed = Shared(0)
        await withTaskGroup(of: Void.self) { group in
            for target in 1...2_000 {
                group.addTask {
                    await counter.wait { $0 >= target }
                    resumed.increment()
                }
            }
            group.addTask {
                runConcurrently(threads: 4) { _ in
                    for _ in 0..<500 { counter.update { $0 += 1 } }
                }
            }
        }
        #expect(resumed.current == 2_000)
        #expect(counter.current == 2_000)
    }

    @Test func aConditionMayUpdateTheValueItWaitsOn() async {
        let value = Watched(0)
        let task = Task {
            await value.wait { current in
                // A condition that changes what it watches (a test recording what it saw, say) runs outside the lock.
                if current == 1 { value.update { $0 = 2 } }
                return current == 2
            }
        }
        value.update { $0 = 1 }
        #expect(await task.value)
        #expect(value.current == 2)
    }
}

/// A wait for something that never comes fails the test within its timeout, saying what it waited for and what it saw
/// (they hung the whole test run), and a cancelled wait returns at once.
@Suite(timeLimit(minutes: 1))
struct WaitTimeoutTests {
    @Test func waitForRequestsThatNeverComeFailsNamingWhatItSaw() async throws {
        let server = StubServer { _ in .body(payload(10)) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        await withKnownIssue {
            let arrived = await server.waitForRequests(1, timeout: 0.2)
            #expect(!arrived)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("waited 0.2 s for 1 request in vain; it saw: no request") }
        }

        _ = try await session.cancellableData(from: server.url("/file")).async()
        await withKnownIssue {
            await server.waitUntil(timeout: 0.2) { $0.count == 2 }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("the condition in vain; it saw: GET /file → 200, 10 bytes") }
        }
        #expect(await server.waitForRequests(1, timeout: 0.2), "what has happened is seen at once")
    }

    @Test func waitForTimersThatNeverComeFailsSayingHowManyArePending() async {
        let clock = TestClock()
        let timer = clock.schedule(after: .seconds(1)) {}
        defer { timer.cancel() }
        await withKnownIssue {
            await clock.waitForTimers(count: 2, timeout: 0.2)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("waited 0.2 s for 2 pending timers in vain; 1 is pending") }
        }
    }

    @Test func waitForTimersCountsTheCodesTimersNotTheStubsPacing() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in .body(payload(3_000), chunkSize: 1_000, every: .seconds(1)) }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let download = session.cancellableData(from: server.url("/paced"))
        await server.waitForRequests(1)
        #expect(clock.pendingTimers == 2, "the stub paces the two chunks after the first")
        // The article's pattern — wait for the app's timer, then advance — must not be satisfied by the stub's.
        await withKnownIssue {
            await clock.waitForTimers(count: 1, timeout: 0.2)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("for 1 pending timer in vain; 0 are pending") }
        }
        let delay: Guarantee<Void> = after(seconds: 5, clock: clock)
        #expect(await clock.waitForTimers(count: 1, timeout: 5))
        #expect(clock.pendingTimers == 3)
        download.cancel()
        await clock.run()
        #expect(delay.isResolved)
    }

    @Test func aCancelledWaitReturnsAtOnceWithoutFailing() async {
        let server = StubServer { _ in .body(Data()) }
        let clock = TestClock()
        // Timeouts far beyond the suite's 1-minute limit: only the cancellation can end these waits in time.
        let waits = Task {
            let requests = await server.waitForRequests(1, timeout: 600)
            let timers = await clock.waitForTimers(count: 1, timeout: 600)
            return (requests, timers)
        }
        waits.cancel()
        let (requests, timers) = await waits.value
        #expect(!requests && !timers)
    }
}

/// A session delegate of an app's own, which answers nothing the library asks.
private final class AppDelegate: NSObject, URLSessionDelegate, Sendable {}
