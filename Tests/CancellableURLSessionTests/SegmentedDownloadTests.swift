import Cancellable
import Foundation
import LoopbackHTTPServer
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Segmented downloads from several mirrors of a real loopback server (each mirror a path, each with its own speed
/// and faults). Every test checks the file on disk byte for byte — the payload never repeats, so a segment written at
/// the wrong offset shows — and that the download's folder holds nothing else.
@Suite(.serialized) final class SegmentedDownloadTests: LoopbackSuite {
    static let size = 1_048_576 + 12_345
    /// Every 4 bytes are their own offset: no two segments look alike. Made afresh on each use (cheap): a `Data`
    /// held in a static is reported as a leak by LeakSanitizer, which cannot see a pointer Swift stores with tag bits.
    static var body: Data {
        let words = (0..<UInt32((size + 3) / 4)).map(\.littleEndian)
        return words.withUnsafeBytes { Data($0.prefix(size)) }
    }

    typealias Route = @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response

    /// A server whose path `/m<i>` is mirror `i`, answering with `mirrors[i]`.
    func serve(_ mirrors: [Route]) throws -> [URL] {
        let server = try serve { request in
            guard let index = Int(request.path.dropFirst(2)), request.path.hasPrefix("/m"),
                mirrors.indices.contains(index)
            else { return .status(404, body: Data()) }
            return mirrors[index](request)
        }
        return mirrors.indices.map { server.url("/m\($0)") }
    }

    static func resource(
        _ body: Data = body,
        tag: String? = "\"v1\"",
        bytesPerSecond: Int? = 2 * 1_048_576,
        interruption: LoopbackHTTPServer.Interruption? = nil
    ) -> Route {
        let resource = LoopbackHTTPServer.Resource(
            body: body,
            entityTag: tag,
            lastModified: nil,
            chunkSize: 8_192,
            bytesPerSecond: bytesPerSecond,
            interruption: interruption
        )
        return { _ in .resource(resource) }
    }

    /// Whether the client is done with `connection`: it read the whole response, or closed the connection (before
    /// or during the response; FoundationNetworking may open one it then closes without a request).
    static func isOver(_ connection: LoopbackHTTPServer.Connection) -> Bool {
        connection.completed || connection.clientClosedAt != nil || connection.unanswered != nil
    }

    static func options(stallTimeout: TimeInterval = 10) -> SegmentedDownloadOptions {
        var options = SegmentedDownloadOptions()
        options.segmentSize = 128 * 1_024
        options.minimumSplitSize = 32 * 1_024
        options.stallTimeout = stallTimeout
        return options
    }

    func download(
        _ mirrors: [URL],
        options: SegmentedDownloadOptions = options(),
        verifying integrity: DownloadIntegrity? = nil
    ) async -> Swift.Result<SegmentedDownloadResult, Error> {
        await session.segmentedDownload(
            from: mirrors,
            to: directory.destination,
            verifying: integrity,
            options: options
        )
        .asPromise().asResult().async()
    }

    /// The file is the body, byte for byte, and nothing else is in the folder.
    func expectIntact(_ outcome: Swift.Result<SegmentedDownloadResult, Error>) throws -> SegmentedDownloadResult? {
        guard case .success(let result) = outcome else {
            Issue.record("the download failed: \(outcome)")
            return nil
        }
        #expect(result.url == directory.destination.standardizedFileURL)
        #expect(result.totalBytes == Int64(Self.size))
        #expect(try Data(contentsOf: directory.destination) == Self.body)
        #expect(try directory.contents() == ["file.bin"])
        return result
    }

    @Test func everyMirrorSendsItsShareAndNoByteIsLost() async throws {
        let mirrors = try serve([
            Self.resource(bytesPerSecond: 4 * 1_048_576),
            Self.resource(bytesPerSecond: 2 * 1_048_576),
            Self.resource(bytesPerSecond: 1_048_576),
        ])
        let reports = Locked<[SegmentedDownloadProgress]>([])
        let outcome = await session.segmentedDownload(
            from: mirrors,
            to: directory.destination,
            options: Self.options()
        ) { progress in
            reports.withLock { $0.append(progress) }
        }
        .asPromise().asResult().async()
        let result = try #require(try expectIntact(outcome))
        #expect(result.mirrors.map(\.url) == mirrors)
        #expect(result.mirrors.allSatisfy { $0.dropped == nil && $0.bytesWritten > 0 })
        #expect(result.mirrors.map(\.bytesWritten).reduce(0, +) == Int64(Self.size))
        // The fastest mirror wrote the most.
        #expect(result.mirrors[0].bytesWritten > result.mirrors[2].bytesWritten)
        let written = reports.withLock { $0.map(\.bytesWritten) }
        #expect(written == written.sorted())
        #expect(written.last == Int64(Self.size))
    }

    @Test func aMirrorThatIsDownOrAnswersAnErrorIsDroppedAndTheOthersFinish() async throws {
        let down = try LoopbackHTTPServer { _ in .status(500, body: Data()) }
        let refused = down.url("/file")
        down.stop()
        let mirrors = try serve([Self.resource(), { _ in .status(503, body: Data()) }, Self.resource()])
        let result = try #require(try expectIntact(await download([refused] + mirrors)))
        guard case .transferFailed(.cannotConnectToHost, let cause) = result.mirrors[0].dropped else {
            Issue.record("dropped for \(String(describing: result.mirrors[0].dropped))")
            return
        }
        // The underlying error's own words, not only its code.
        #expect(!cause.isEmpty && result.mirrors[0].dropped?.description.contains(cause) == true, "\(cause)")
        #expect(result.mirrors[2].dropped == .status(503))
        #expect(result.mirrors[0].bytesWritten == 0 && result.mirrors[2].bytesWritten == 0)
        #expect(result.mirrors[1].dropped == nil && result.mirrors[3].dropped == nil)
    }

    @Test(arguments: [
        LoopbackHTTPServer.Interruption.reset(after: 40_000),
        .close(after: 40_000),
    ])
    func aMirrorThatFailsMidBodyLosesItsSegmentAndKeepsProvenBytes(
        _ fault: LoopbackHTTPServer.Interruption
    ) async throws {
        let mirrors = try serve([Self.resource(interruption: fault), Self.resource()])
        let result = try #require(try expectIntact(await download(mirrors)))
        let dropped = try #require(result.mirrors[0].dropped)
        switch dropped {
        case .transferFailed(_, let cause):
            #if canImport(FoundationNetworking)
            // libcurl's words for a body cut short, or a reset.
            #expect(cause.contains("transfer closed") || cause.contains("reset") || cause.contains("Recv"), "\(cause)")
            #endif
            print("dropped: \(dropped)")
        case .endedEarly: break
        default: Issue.record("dropped for \(dropped)")
        }
        // Its response repeated the reference's ETag: the bytes it wrote stayed, and were not fetched again.
        #expect(result.mirrors[0].bytesWritten == 40_000)
    }

    @Test func aMirrorWithoutAValidatorThatFailsHasItsBytesFetchedAgain() async throws {
        let mirrors = try serve([
            Self.resource(tag: nil, interruption: .reset(after: 40_000)), Self.resource(tag: nil),
        ])
        let result = try #require(try expectIntact(await download(mirrors)))
        #expect(result.mirrors[0].dropped != nil)
        #expect(result.mirrors[1].bytesWritten == Int64(Self.size))
    }

    @Test func mirrorsThatServeAnotherFileAreDroppedBeforeTheirBytesAreMixed() async throws {
        // The honest mirror answers first: the others wait until the length is known. The honest mirrors' later
        // requests wait until the three that disagree have been dropped, so that the download cannot end first.
        let known = Latch()
        let threeDropped = Latch()
        func after(_ gate: Latch, _ route: @escaping Route) -> Route {
            { request in
                _ = gate.wait(timeout: .seconds(30))
                return route(request)
            }
        }
        func laterRequests(_ route: @escaping Route) -> Route {
            let requests = Locked(0)
            return { request in
                let first = requests.withLock { count in
                    count += 1
                    return count == 1
                }
                if !first { _ = threeDropped.wait(timeout: .seconds(30)) }
                return route(request)
            }
        }
        var other = Self.body
        other[10] ^= 0xFF
        let mirrors = try serve([
            laterRequests(Self.resource()),
            after(known, Self.resource(Self.body + Data([1]))),  // another length
            after(known, Self.resource(other, tag: "\"v2\"")),  // another version
            after(known, laterRequests(Self.resource(tag: nil))),
            after(known) { _ in .resource(LoopbackHTTPServer.Resource(body: Self.body, ignoresRanges: true)) },
        ])
        let outcome = await session.segmentedDownload(from: mirrors, to: directory.destination, options: Self.options())
        { progress in
            if progress.totalBytes != nil { known.open() }
            if progress.mirrors.filter({ $0.dropped != nil }).count == 3 { threeDropped.open() }
        }
        .asPromise().asResult().async()
        let result = try #require(try expectIntact(outcome))
        #expect(
            result.mirrors[1].dropped == .lengthDisagrees(expected: Int64(Self.size), announced: Int64(Self.size + 1))
        )
        #expect(result.mirrors[2].dropped == .validatorDisagrees(expected: "\"v1\"", announced: "\"v2\""))
        #expect(result.mirrors[3].dropped == nil)  // no validator to contradict: same length, same bytes
        #expect(result.mirrors[4].dropped == .ignoresRanges)
        #expect(result.mirrors[1].bytesWritten == 0 && result.mirrors[2].bytesWritten == 0)
    }

    /// A lone mirror whose first answer is cut off and whose second is `503`: forgiven twice, it finishes the file,
    /// asking again from the bytes its first answer proved, after resting. Without retries, it is dropped.
    @Test func aMirrorForgivenItsFaultsFinishesTheFileAlone() async throws {
        let answered = Shared(0)
        let mirrors = try serve([
            { request in
                let index = answered.withLock { count in
                    defer { count += 1 }
                    return count
                }
                switch index {
                case 0: return Self.resource(interruption: .reset(after: 40_000))(request)
                case 1: return .status(503, body: Data())
                default: return Self.resource()(request)
                }
            }
        ])
        // The rest is counted on the stall watch, every second here: long enough for no stall to be seen on a loaded
        // machine under ThreadSanitizer.
        var options = Self.options(stallTimeout: 4)
        options.retriesPerMirror = 2
        options.retryDelay = 0.2
        let result = try #require(try expectIntact(await download(mirrors, options: options)))
        #expect(result.mirrors[0].dropped == nil)
        #expect(result.mirrors[0].retries == 2)
        #expect(result.mirrors[0].lastRetriedFault == .status(503))
        let connections = try #require(servers.first).connections.filter { $0.unanswered == nil }
        #expect(
            connections.prefix(3).map(\.range) == [
                "bytes=0-131071", "bytes=40000-131071", "bytes=40000-131071",
            ]
        )

        answered.withLock { $0 = 0 }
        try FileManager.default.removeItem(at: directory.destination)
        let outcome = await download(mirrors)
        guard case .failure(SegmentedDownloadError.everyMirrorDropped(let statuses)) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(statuses[0].dropped?.isTransient == true && statuses[0].retries == 0)
        #expect(try directory.contents().isEmpty)
    }

    /// A mirror that answers `503` with `Retry-After: 1` is asked again only once a second has passed on the
    /// download's clock: a `TestClock` the test moves, so that neither the rest nor the stall watch depends on how
    /// loaded the machine is.
    @Test func aMirrorIsLeftAloneForAsLongAsItsRetryAfterSays() async throws {
        let asked = Locked(0)
        let mirrors = try serve([
            { request in
                let count = asked.withLock { count in
                    count += 1
                    return count
                }
                return count == 1 ? .statusWithFields(503, fields: ["Retry-After: 1"]) : Self.resource()(request)
            }
        ])
        var options = Self.options(stallTimeout: 2)  // the watch looks every 0.5 s
        options.retriesPerMirror = 1
        options.retryDelay = 0
        let clock = TestClock()
        let latest = Watched<SegmentedDownloadProgress?>(nil)
        let download = withPromiseClock(clock) {
            session.segmentedDownload(from: mirrors, to: directory.destination, options: options) { progress in
                latest.update { $0 = progress }
            }
        }
        // The 503 was answered and forgiven: the mirror rests.
        #expect(await latest.wait(until: { $0?.mirrors[0].retries == 1 }, timeout: 40))
        /// Moves the clock one watch period on, and waits for the watch to have looked.
        func tick() async {
            await clock.advance(by: .milliseconds(500))
            await withCheckedContinuation { done in session.delegateQueue.addOperation { done.resume() } }
        }
        await tick()
        // Not asked again after half a second: no request runs, none reached the server.
        #expect(latest.read { $0?.mirrors[0].activeRequests } == 0)
        #expect(asked.withLock { $0 } == 1, "asked again after half a second")
        await tick()
        #expect(asked.withLock { $0 } == 1, "asked again after a second")
        // The rest is counted down as the watch looks, every half second: over at its next look. From then on the
        // clock stands still, so the transfer that follows is never idle on it, however slow the machine.
        await tick()
        #expect(await servers[0].waitUntil { $0.count >= 2 })
        let result = try #require(try expectIntact(await download.asPromise().asResult().async()))
        #expect(result.mirrors[0].retries == 1 && result.mirrors[0].lastRetriedFault == .status(503))
    }

    /// A mirror that stops sending is dropped once its transfer has been idle for the stall timeout on the download's
    /// clock — a `TestClock` the test moves once the other mirror has nothing left to do, so that the healthy one is
    /// never idle while the watch counts, however loaded the machine — and its segment is finished elsewhere.
    @Test func aStalledMirrorIsDroppedAndItsSegmentFinishedElsewhere() async throws {
        let mirrors = try serve([Self.resource(interruption: .stall(after: 20_000)), Self.resource()])
        // Without the end game, which would race the stalled segment's rest and stop it before it counts as stalled.
        var options = Self.options(stallTimeout: 2)  // the watch looks every 0.5 s
        options.endGame = false
        let clock = TestClock()
        let latest = Watched<SegmentedDownloadProgress?>(nil)
        let download = withPromiseClock(clock) {
            session.segmentedDownload(from: mirrors, to: directory.destination, options: options) { progress in
                latest.update { $0 = progress }
            }
        }
        // Mirror 1 has fetched all it can: only mirror 0's stalled segment is left, too short to split.
        let idle = await latest.wait(
            until: { progress in
                guard let progress, progress.mirrors[1].bytesWritten > 0 else { return false }
                return progress.mirrors[1].activeRequests == 0 && progress.mirrors[0].activeRequests == 1
            },
            timeout: 40
        )
        #expect(idle)
        // Four looks of the watch, half a second apart: the stalled transfer has been idle for the two seconds of the
        // stall timeout at the fourth. Then the clock stands still: the transfer that takes its segment over is
        // never idle on it.
        for _ in 0..<4 {
            await clock.advance(by: .milliseconds(500))
            await withCheckedContinuation { done in session.delegateQueue.addOperation { done.resume() } }
        }
        let result = try #require(try expectIntact(await download.asPromise().asResult().async()))
        guard case .stalled = result.mirrors[0].dropped else {
            Issue.record("mirror 0: \(String(describing: result.mirrors[0].dropped))")
            return
        }
        #expect(result.mirrors[1].dropped == nil)
    }

    @Test func whenEveryMirrorIsDroppedTheDownloadFailsAndLeavesNoFile() async throws {
        let mirrors = try serve([
            { _ in .status(404, body: Data()) }, Self.resource(interruption: .reset(after: 1_000)),
        ])
        let outcome = await download(mirrors)
        guard case .failure(SegmentedDownloadError.everyMirrorDropped(let statuses)) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(statuses.map(\.url) == mirrors)
        #expect(statuses[0].dropped == .status(404))
        #expect(statuses[1].dropped != nil)
        #expect(try directory.contents().isEmpty)
    }

    @Test func aFileThatFailsItsDigestIsNotMovedIntoPlace() async throws {
        var other = Self.body
        other[Self.size - 1] ^= 0xFF
        let mirrors = try serve([Self.resource(tag: nil), Self.resource(other, tag: nil)])
        var hasher = SHA256()
        hasher.update(Self.body)
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        let outcome = await download(mirrors, verifying: DownloadIntegrity(sha256: digest))
        // Which mirror fetched the last byte depends on timing; the digest is checked either way.
        switch outcome {
        case .success: _ = try expectIntact(outcome)
        case .failure(let error):
            guard case .sha256Mismatch = error as? DownloadIntegrityError else {
                Issue.record("\(error)")
                return
            }
            #expect(try directory.contents().isEmpty)
        }
        let good = await download([mirrors[0]], verifying: DownloadIntegrity(sha256: digest))
        _ = try expectIntact(good)
    }

    @Test func cancellingStopsEveryRequestAndLeavesNoFile() async throws {
        let started = Latch()
        let mirrors = try serve([Self.resource(bytesPerSecond: 100_000), Self.resource(bytesPerSecond: 100_000)])
        let download = session.segmentedDownload(from: mirrors, to: directory.destination, options: Self.options()) {
            if $0.bytesWritten > 0 { started.open() }
        }
        #expect(await started.opened(within: .seconds(30)))
        download.cancel()
        let outcome = await download.asPromise().asResult().async()
        guard case .failure(let error) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(error.isCancelled)
        #expect(try directory.contents() == [], "removed before the promise rejected")
        let server = try #require(servers.first)
        #expect(await server.waitUntil(timeout: 10) { $0.allSatisfy(Self.isOver) })
    }

    /// A cancel at every point of a download's life — before any answer, at each tenth of the file, as the last byte
    /// is written (racing the ending) — leaves either the whole file (the ending won: the promise fulfilled) or no
    /// file at all (the cancel won: rejected as cancelled), and every request stopped.
    @Test func aCancelAtAnyPointLeavesTheWholeFileOrNothing() async throws {
        let small = Self.body.prefix(96 * 1_024)
        let mirrors = try serve([Self.resource(Data(small)), Self.resource(Data(small), bytesPerSecond: 1_048_576)])
        var options = Self.options()
        options.segmentSize = 16 * 1_024
        options.minimumSplitSize = 4 * 1_024
        var endings: [String: Int] = [:]
        for tenth in [-1] + Array(0...10) {
            for _ in 0..<3 {
                let directory = try DownloadDirectory()
                defer { directory.remove() }
                let threshold = tenth < 0 ? nil : Int64(small.count * tenth / 10)
                let cancelled = Locked(false)
                let download = Locked<CancellablePromise<SegmentedDownloadResult>?>(nil)
                let promise = session.segmentedDownload(
                    from: mirrors,
                    to: directory.destination,
                    options: options
                ) { progress in
                    guard let threshold, progress.bytesWritten >= threshold else { return }
                    if cancelled.withLock({ was in
                        defer { was = true }; return !was
                    }) {
                        download.withLock { $0 }?.cancel()
                    }
                }
                download.withLock { $0 = promise }
                if threshold == nil { promise.cancel() }
                let outcome = await promise.asPromise().asResult().async()
                switch outcome {
                case .success:
                    #expect(try Data(contentsOf: directory.destination) == small)
                    #expect(try directory.contents() == ["file.bin"])
                    endings["fulfilled", default: 0] += 1
                case .failure(let error):
                    #expect(error.isCancelled, "\(error)")
                    // Removed by the cancel handler, or by the ending, before the promise rejected.
                    #expect(try directory.contents() == [], "cancelled at \(String(describing: threshold))")
                    endings["cancelled", default: 0] += 1
                }
            }
        }
        // Every run ended one way or the other. The last byte's cancel comes as the ending is under way: the
        // ending sees it, and removes the file.
        #expect(endings["cancelled", default: 0] > 0)
        #expect(endings["fulfilled", default: 0] + endings["cancelled", default: 0] == 36)
        let server = try #require(servers.first)
        #expect(await server.waitUntil(timeout: 10) { $0.allSatisfy(Self.isOver) })
    }

    @Test func anEmptyFileIsDownloaded() async throws {
        let mirrors = try serve([Self.resource(Data()), Self.resource(Data())])
        let outcome = await download(mirrors)
        guard case .success(let result) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(result.totalBytes == 0)
        #expect(try PartialFile.size(of: directory.destination) == 0)
    }

    @Test func badInputIsRefusedBeforeAnyRequest() async throws {
        var ranged = URLRequest(url: URL(string: "http://127.0.0.1:1/f")!)
        ranged.setValue("bytes=0-1", forHTTPHeaderField: "Range")
        let cases: [([URLRequest], URLSession, SegmentedDownloadError)] = [
            ([], session, .noMirrors),
            (
                [URLRequest(url: URL(string: "file:///etc/passwd")!)], session,
                .invalidMirror(URL(string: "file:///etc/passwd"))
            ),
            ([ranged], session, .invalidMirror(ranged.url)),
            ([URLRequest(url: URL(string: "http://127.0.0.1:1/f")!)], sessionWithoutLiveDelivery(), .needsLiveDelivery),
        ]
        for (requests, session, expected) in cases {
            let outcome = await session.segmentedDownload(from: requests, to: directory.destination)
                .asPromise().asResult().async()
            guard case .failure(let error) = outcome else {
                Issue.record("\(outcome)")
                continue
            }
            #expect(error as? SegmentedDownloadError == expected)
        }
        let mirror = [URLRequest(url: URL(string: "http://127.0.0.1:1/f")!)]
        let invalid: [(WritableKeyPath<SegmentedDownloadOptions, Int64>, Int64, String)] = [
            (\.segmentSize, 0, "segmentSize 0 is not 1...1125899906842624"),
            (\.minimumSplitSize, -1, "minimumSplitSize -1 is not 1...1125899906842624"),
        ]
        for (option, value, reason) in invalid {
            var options = SegmentedDownloadOptions()
            options[keyPath: option] = value
            let error = await failure(
                of: session.segmentedDownload(from: mirror, to: directory.destination, options: options)
            )
            #expect(error as? SegmentedDownloadError == .invalidOptions(reason))
        }
        for (retries, delay, backoff, reason) in [
            (-1, 1.0, 1.0, "retrying: retries -1 is not 0...1000"),
            (1, -1, 1, "retrying: delay -1.0 is not 0...86400 seconds"),
            (1, .nan, 1, "retrying: delay nan is not 0...86400 seconds"),
            (1, 1, 0.5, "retrying: backoff 0.5 is not 1...10"),
        ] {
            var options = SegmentedDownloadOptions()
            options.retrying = DownloadRetryPolicy(retries: retries, delay: delay, backoff: backoff)
            let error = await failure(
                of: session.segmentedDownload(from: mirror, to: directory.destination, options: options)
            )
            #expect(error as? SegmentedDownloadError == .invalidOptions(reason))
        }
        var options = SegmentedDownloadOptions()
        options.connectionsPerMirror = 0
        options.stallTimeout = .infinity
        let error = await failure(
            of: session.segmentedDownload(from: mirror, to: directory.destination, options: options)
        )
        #expect(error as? SegmentedDownloadError == .invalidOptions("connectionsPerMirror 0 is not 1...64"))
        #expect(try directory.contents().isEmpty)
    }
}
