import Cancellable
import CancellableURLSession
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Real transfers against a real HTTP server on 127.0.0.1, started and stopped by each test. No mocks:
/// what cancellation does to the connection is measured on the server side.
@Suite(.serialized) struct DownloadIntegrationTests {
    static let megabyte = 1_048_576

    /// `size` bytes of a non-repeating-looking pattern, built cheaply (a 64 KiB block, repeated), so that even
    /// large payloads cost nothing under the sanitizers.
    static func payload(_ size: Int) -> Data {
        let block = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7 &+ $0 >> 8) })
        var data = Data(capacity: size)
        while data.count < size {
            data.append(block.prefix(size - data.count))
        }
        return data
    }

    /// Both ways a session can be set up: any session (completion handlers), or one made for live progress.
    /// The three kinds of session a transfer can run on (the library's `Transport`).
    enum Mode: String, CaseIterable, Sendable {
        /// A session without a delegate: bytes as they arrive, through a per-task delegate (Apple platforms from
        /// macOS 12 and iOS 15) or the library's stand-in session (Linux).
        case anySession
        /// A session made by `withProgressReporting`.
        case progressReporting
        /// A session with a delegate of the app's own: completion handlers, the body at the end.
        case ownDelegate
    }

    func makeSession(_ mode: Mode) -> URLSession {
        switch mode {
        case .anySession: return URLSession(configuration: .ephemeral)
        case .progressReporting: return .withProgressReporting(configuration: .ephemeral)
        case .ownDelegate: return sessionWithoutLiveDelivery()
        }
    }

    @Test(arguments: Mode.allCases)
    func dataFulfillsWithTheBodyAndReportsProgress(mode: Mode) async throws {
        let body = Self.payload(300_000)
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 50_000) }
        defer { server.stop() }
        let reports = Shared<[TransferProgress]>([])
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await makeSession(mode)
                .cancellableData(from: server.url("/file")) { reports.append($0) }
                .async()
        } catch {
            // Once in many runs this failed with "Empty reply from server" (-1011), which is a connection the server
            // closed without answering (pinned by the test below): say what the server saw, connection by
            // connection, so that the next occurrence names its cause.
            Issue.record("\(error); the server saw \(server.connections)")
            throw error
        }
        #expect(data == body)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let seen = reports.current
        #expect(mode == .ownDelegate ? seen.count == 1 : seen.count > 1, "\(seen.count) reports")
        #expect(seen.last?.bytesTransferred == Int64(body.count))
        #expect(seen.last?.totalBytesExpected == Int64(body.count))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesTransferred <= $1.bytesTransferred })
    }

    /// "Empty reply from server" (URLError -1011 on Linux), the error an old flake of the test above failed with, is
    /// exactly a connection the server closed without a byte of answer; the server records every such connection
    /// and why it could not read a request on it.
    @Test(arguments: Mode.allCases)
    func aConnectionClosedBeforeAnyAnswerIsAnEmptyReply(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .closeBeforeHeaders }
        defer { server.stop() }
        let error = try #require(await failure(of: makeSession(mode).cancellableData(from: server.url("/file"))))
        let code = try #require(error as? URLError, "\(error)").code
        #if canImport(FoundationNetworking)
        #expect(code == .badServerResponse, "libcurl's \"Empty reply from server\"")
        #else
        // Unverified on Apple platforms: which of the two URLSession gives there.
        #expect([.badServerResponse, .networkConnectionLost].contains(code), "\(error)")
        #endif
        let connection = try #require(server.connections.first)
        #expect(connection.status == 0 && !connection.completed, "no answer was sent")
        #expect(connection.unanswered == nil, "the request was read; closing was the route's choice")
    }

    @Test(arguments: Mode.allCases)
    func cancellingARunningDownloadClosesTheConnectionWithin250Milliseconds(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in
            .body(Self.payload(20 * Self.megabyte), chunkSize: 16_384, bytesPerSecond: 2 * Self.megabyte)
        }
        defer { server.stop() }
        let received = Shared<Int64>(0)
        let download = makeSession(mode).cancellableData(from: server.url("/big")) { progress in
            received.withLock { $0 = progress.bytesTransferred }
        }
        // Wait, on the server's own records, until the transfer is well under way.
        #expect(await server.waitUntil { ($0.first?.bytesSent ?? 0) > 200_000 })
        let cancelledAt = Date()
        #expect(download.cancel())
        #expect(download.isRejected, "the outcome is decided when cancel() returns")
        #expect(await server.waitUntil(timeout: 5) { $0.first?.clientClosedAt != nil })
        let connection = try #require(server.connections.first)
        let latency = try #require(connection.clientClosedAt).timeIntervalSince(cancelledAt)
        print(
            "[\(mode)] cancel → server saw the connection close after \(Int(latency * 1_000)) ms; "
                + "\(connection.bytesSent) bytes sent"
        )
        // 250 ms is the bound; under ThreadSanitizer the run checks for races, and its 5-15x slowdown is allowed for.
        #expect(latency < (underThreadSanitizer ? 1 : 0.25))
        #expect(!connection.completed)
        #expect(connection.bytesSent < 20 * Self.megabyte / 2, "the server stopped sending")
        // The client's count stops too: whatever it reports, it never exceeds what the server sent.
        #expect(received.current <= Int64(connection.bytesSent))
        let result = await download.asPromise().asResult().async()
        guard case .failure(let error) = result else {
            Issue.record("a cancelled download must not fulfill")
            return
        }
        #expect(error as? CancellablePromiseError == .cancelled)
    }

    @Test(arguments: Mode.allCases)
    func raceOfThreeMirrorsClosesTheLosersWithin250MillisecondsOfTheWinner(mode: Mode) async throws {
        let size = 2 * Self.megabyte
        // The losers are far slower than the winner (2 MiB takes 0.25 s, 2 s and 4 s), and stop sending at a
        // quarter of the file until they are closed: URLSession may deliver the winner's completion late on a loaded
        // machine (0.8-0.9 s seen with two test processes on 2 cores), and a loser must still be mid-transfer when
        // the race is decided, however late that is.
        let speeds = ["/fast": 8 * Self.megabyte, "/medium": Self.megabyte, "/slow": Self.megabyte / 2]
        let server = try LoopbackHTTPServer { request in
            .resource(
                LoopbackHTTPServer.Resource(
                    body: Self.payload(size),
                    bytesPerSecond: speeds[request.path] ?? Self.megabyte,
                    interruption: request.path == "/fast" ? nil : .stall(after: size / 4)
                )
            )
        }
        defer { server.stop() }
        let session = makeSession(mode)
        let mirrors = ["/slow", "/fast", "/medium"].map { session.cancellableData(from: server.url($0)) }
        let fastest = race(mirrors, autoCancel: true)
        // The moment the race is decided, timestamped where it happens (an `await` may resume late).
        let decidedAt = Shared<Date?>(nil)
        fastest.pipe { _ in decidedAt.withLock { $0 = Date() } }
        let winner = try await fastest.async()
        #expect(winner.data.count == size)
        #expect(
            await server.waitUntil(timeout: 5) { connections in
                // Finished with every connection: the server records `completed` (or the close) a moment
                // before `finishedAt`, and this test reads both.
                connections.count == 3 && connections.allSatisfy { $0.finishedAt != nil }
            }
        )
        let connections = server.connections
        let fast = try #require(connections.first { $0.path == "/fast" })
        #expect(fast.completed)
        let finishedAt = try #require(fast.finishedAt)
        let decided = try #require(decidedAt.current)
        var loserBytes = 0
        for loser in connections where loser.path != "/fast" {
            let closedAt = try #require(loser.clientClosedAt, "\(loser.path) was not closed")
            let sinceDecision = closedAt.timeIntervalSince(decided)
            let sinceFinish = closedAt.timeIntervalSince(finishedAt)
            print(
                "[\(mode)] loser \(loser.path): \(loser.bytesSent) bytes, closed \(Int(sinceFinish * 1_000)) ms "
                    + "after the winner finished (\(Int(sinceDecision * 1_000)) ms after the race was decided)"
            )
            // What the library controls: from the decision to the closed connection. (From the winner's last
            // byte, URLSession's own delivery of the completion adds to it, more so on a loaded machine.) Under
            // ThreadSanitizer the run checks for races; its 5-15x slowdown is allowed for (292 ms was seen there once,
            // for a loser the server had not started sending to).
            #expect(sinceDecision < (underThreadSanitizer ? 1 : 0.25))
            #expect(!loser.completed)
            loserBytes += loser.bytesSent
        }
        print("[\(mode)] losers transferred \(loserBytes) bytes in total")
        #expect(mirrors.filter(\.isCancelled).count == 2)
    }

    /// The README's race, with one mirror cut mid-body: `race(fulfilled:autoCancel:)` goes on without it, a
    /// healthy mirror wins with the whole file, and the other healthy one is cancelled for losing.
    @Test(arguments: Mode.allCases)
    func aMirrorCutMidBodyDoesNotEndARaceOfTheFirstSuccess(mode: Mode) async throws {
        let size = Self.megabyte
        let server = try LoopbackHTTPServer { request in
            var resource = LoopbackHTTPServer.Resource(body: Self.payload(size), entityTag: "\"v1\"")
            switch request.path {
            case "/cut": resource.interruption = .reset(after: size / 8)
            case "/slow": resource.interruption = .stall(after: size / 4)  // held until it is cancelled
            default: resource.bytesPerSecond = Self.megabyte  // a second: the cut mirror fails well before
            }
            return .resource(resource)
        }
        defer { server.stop() }
        let session = makeSession(mode)
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let downloads = ["/cut", "/healthy", "/slow"].map { path in
            session.cancellableDownload(
                from: server.url(path),
                to: directory.url.appendingPathComponent(String(path.dropFirst()))
            )
        }
        let (url, _) = try await race(fulfilled: downloads, autoCancel: true).async()
        #expect(url.lastPathComponent == "healthy")
        #expect(try Data(contentsOf: url) == Self.payload(size))
        #expect(
            downloads[0].error is URLError,
            "the cut mirror failed on its own: \(String(describing: downloads[0].error))"
        )
        #expect(downloads[2].cancellationReason == .lostRace)
        #expect(try directory.contents() == ["healthy"], "the losers' files are gone")
    }

    @Test(arguments: Mode.allCases)
    func timeoutOnAStalledServerRejectsOnTimeAndClosesTheConnection(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .stall }
        defer { server.stop() }
        let started = Date()
        let rejectedAt = Shared<Date?>(nil)
        let limited = makeSession(mode).cancellableData(from: server.url("/stalled")).timeout(seconds: 0.3)
        // Timestamp the rejection where it happens, not after an `await`: a busy cooperative pool may resume
        // the test late, and that is not what this test measures.
        limited.pipe { _ in rejectedAt.withLock { $0 = Date() } }
        let result = await limited.asPromise().asResult().async()
        let rejected = try #require(rejectedAt.current)
        let elapsed = rejected.timeIntervalSince(started)
        guard case .failure(let error) = result else {
            Issue.record("a stalled transfer must time out")
            return
        }
        #expect(error is TimeoutError)
        #expect(elapsed >= 0.3 && elapsed < 1.0, "timed out after \(elapsed) s")
        #expect(await server.waitUntil(timeout: 5) { $0.first?.clientClosedAt != nil })
        let closedAt = try #require(server.connections.first?.clientClosedAt)
        // The cancellation reaches the socket: without it the connection would stay open until the request's own
        // 60-second timeout. (The server's thread timestamps the close; on a loaded machine it may run late, so the
        // bound is generous.)
        #expect(closedAt.timeIntervalSince(rejected) < 2, "closed \(closedAt.timeIntervalSince(rejected)) s after")
    }

    @Test(arguments: Mode.allCases)
    func downloadWritesTheFileAndReportsProgress(mode: Mode) async throws {
        let body = Self.payload(500_000)
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 65_536) }
        defer { server.stop() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let reports = Shared(0)
        let (url, response) = try await makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/file")), to: destination) { _ in reports.increment()
            }
            .async()
        #expect(url == destination)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try fileContents(destination) == body)
        #expect(reports.current > 0)
    }

    /// A session keeps its delegate until it is invalidated: one made per transfer is invalidated right after the
    /// transfer starts, which lets the transfer finish and then frees the session.
    @Test(arguments: Mode.allCases)
    func aSessionInvalidatedRightAfterTheTransferStartsStillCompletesIt(mode: Mode) async throws {
        let body = Self.payload(300_000)
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 30_000, bytesPerSecond: 3_000_000) }
        defer { server.stop() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let session = makeSession(mode)
        let reports = Shared<[TransferPhase]>([])
        let download = session.cancellableDownload(for: URLRequest(url: server.url("/file")), to: destination) {
            reports.append($0.phase)
        }
        session.finishTasksAndInvalidate()
        let (url, _) = try await download.async()
        #expect(try fileContents(url) == body)
        let transferring = reports.current.count { $0 == .transferring }
        #expect(mode == .ownDelegate ? transferring == 1 : transferring > 1, "\(reports.current)")
        #expect(reports.current.last == .movingIntoPlace, "the last report says the file is moved into place")
    }

    /// `URLRequest.timeoutInterval` bounds a stall — the wait for the next bytes — not the whole transfer; that is
    /// what `timeout(seconds:)` is for.
    @Test(arguments: Mode.allCases)
    func aRequestsTimeoutIntervalBoundsAStallNotTheWholeTransfer(mode: Mode) async throws {
        let body = Self.payload(30_000)
        // 1.5 s in all, a chunk every 100 ms: longer than the interval, but never silent for as long.
        let slow = try LoopbackHTTPServer { _ in .body(body, chunkSize: 2_000, bytesPerSecond: 20_000) }
        defer { slow.stop() }
        var request = URLRequest(url: slow.url("/slow"))
        request.timeoutInterval = 1  // whole seconds: FoundationNetworking fails at once under one second
        var started = Date()
        let (data, _) = try await makeSession(mode).cancellableData(for: request).async()
        #expect(data == body)
        #expect(Date().timeIntervalSince(started) > 1.2, "the transfer outlasted the interval")

        let stalled = try LoopbackHTTPServer { _ in .stall }
        defer { stalled.stop() }
        request.url = stalled.url("/stalled")
        started = Date()
        let result = await makeSession(mode).cancellableData(for: request).asPromise().asResult().async()
        let elapsed = Date().timeIntervalSince(started)
        guard case .failure(let error) = result else {
            Issue.record("a stalled transfer must fail")
            return
        }
        #expect((error as? URLError)?.code == .timedOut, "\(error)")
        #expect(elapsed > 0.9 && elapsed < 5, "failed after \(elapsed) s")
    }

    @Test(arguments: Mode.allCases)
    func uploadSendsTheBodyAndReportsProgress(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .echo }
        defer { server.stop() }
        let body = Self.payload(200_000)
        let sent = Shared<Int64>(0)
        let (echoed, _) = try await makeSession(mode)
            .cancellableUpload(for: URLRequest(url: server.url("/upload")), from: body) { progress in
                sent.withLock { $0 = max($0, progress.bytesTransferred) }
            }
            .async()
        #expect(echoed == body)
        #expect(sent.current == Int64(body.count))
    }

    /// A transfer's callbacks must come one at a time: a concurrent delegate queue is not used as it is, but through
    /// a serial queue on its dispatch queue; a serial one is used as it is. A download of many pieces over a
    /// concurrent queue is intact.
    @Test func aConcurrentDelegateQueueIsUsedOneOperationAtATime() async throws {
        let appQueue = DispatchQueue(label: "app", attributes: .concurrent)
        let concurrent = OperationQueue()
        concurrent.maxConcurrentOperationCount = 8
        concurrent.underlyingQueue = appQueue
        let session = URLSession.withProgressReporting(configuration: .ephemeral, delegateQueue: concurrent)
        defer { session.finishTasksAndInvalidate() }
        #expect(session.delegateQueue !== concurrent)
        #expect(session.delegateQueue.maxConcurrentOperationCount == 1)

        let serial = OperationQueue()
        serial.maxConcurrentOperationCount = 1
        let serialSession = URLSession.withProgressReporting(configuration: .ephemeral, delegateQueue: serial)
        defer { serialSession.finishTasksAndInvalidate() }
        #expect(serialSession.delegateQueue === serial)

        let body = Self.payload(2 * Self.megabyte)
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 16_384) }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let reports = Shared(0)
        _ = try await session.cancellableDownload(from: server.url("/file"), to: directory.destination) { _ in
            reports.increment()
        }.async()
        #expect(try Data(contentsOf: directory.destination) == body)
        #expect(reports.current > 1, "progress arrived as the bytes did")
        withExtendedLifetime(appQueue) {}  // corelibs' underlyingQueue does not hold it
    }

    /// On Linux a data transfer on a session with a URL cache is a download task whose file is read into memory
    /// (swift-corelibs-foundation crashes when a data task looking in the cache is cancelled): that file is removed
    /// before the promise fulfills, as Apple's Foundation removes it. Found by its size, which no other test uses
    /// (files of that size there before the transfer do not count).
    @Test func aDataTransferLeavesNoFileInTheTemporaryDirectory() async throws {
        let size = 4_099
        let body = Self.payload(size)
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 1_024) }
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        #if canImport(FoundationNetworking)
        #expect(session.configuration.urlCache != nil, "the case this covers: a session with a cache")
        #endif
        let temporary = FileManager.default.temporaryDirectory
        func filesOfItsSize() throws -> Set<URL> {
            // Names first, sizes one by one: other tests running beside this one create and remove folders here, and
            // asking for the sizes with the listing fails if an entry goes in between (NSFileReadNoSuchFileError).
            Set(
                try FileManager.default.contentsOfDirectory(atPath: temporary.path)
                    .map { temporary.appendingPathComponent($0) }
                    .filter { (try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) == size }
            )
        }
        let before = try filesOfItsSize()
        let (data, _) = try await session.cancellableData(from: server.url("/file")).async()
        #expect(data == body)
        let left = try filesOfItsSize().subtracting(before)
        #expect(left.isEmpty, "left behind: \(left.map(\.lastPathComponent))")
    }
}
