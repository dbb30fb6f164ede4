import Cancellable
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Pause and resume against the real loopback server, which honours `Range` and `If-Range`. What went over the
/// wire is measured on the server side: the bytes each connection sent, its `Range`, its status.
///
/// Each test gets a fresh fixture (swift-testing makes one instance a test): a download directory, a session that
/// delivers bytes as they arrive, and the servers it starts with ``serve(_:)``; all of them are stopped, invalidated
/// and removed when the test ends.
@Suite(.serialized) final class ResumableDownloadTests: LoopbackSuite {
    typealias Mode = DownloadIntegrationTests.Mode
    static let size = 2 * 1_048_576
    /// Made afresh on each use (cheap): a `Data` held in a static is reported as a leak by LeakSanitizer, which
    /// cannot see a pointer Swift stores with tag bits.
    static var body: Data { DownloadIntegrationTests.payload(size) }
    /// The most a paused connection may have sent that the client never wrote: what sat in socket buffers.
    static let overhead = 512 * 1_024

    var destination: URL { directory.destination }

    /// The files in the test's directory, hidden partial files included.
    func contents() throws -> [String] {
        try directory.contents()
    }

    static func resource(
        _ body: Data = body,
        tag: String? = "\"v1\"",
        bytesPerSecond: Int? = 4 * 1_048_576
    )
        -> LoopbackHTTPServer.Resource
    {
        LoopbackHTTPServer.Resource(body: body, entityTag: tag, bytesPerSecond: bytesPerSecond)
    }

    /// A server that answers every request with `resource(request)`, except that its first `holds.count` answers
    /// stop once they have sent `holds[i]` of the file's size, and send nothing more until the client goes away:
    /// where ``pause(_:on:path:after:)`` pauses them. A download paused there cannot have finished first, however
    /// slowly a loaded machine runs the test. (Throttled alone, one did, on CI.)
    func serve(
        holdingAt holds: [Double],
        _ resource: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Resource = { _ in
            ResumableDownloadTests.resource()
        }
    ) throws -> LoopbackHTTPServer {
        let answered = Shared(0)
        return try serve { request in
            var answer = resource(request)
            let index = answered.withLock { count in
                defer { count += 1 }
                return count
            }
            if index < holds.count { answer.interruption = .stall(after: Int(Double(Self.size) * holds[index])) }
            return .resource(answer)
        }
    }

    /// Starts a resumable download of `path` and pauses it once the server has sent `fraction` of the file (on
    /// the path's latest connection).
    func pause(
        _ download: ResumableDownload,
        on server: LoopbackHTTPServer,
        path: String,
        after fraction: Double = 0.5
    ) async throws -> DownloadResumeData {
        #expect(
            await server.waitUntil { connections in
                (connections.last { $0.path == path }?.bytesSent ?? 0) >= Int(Double(Self.size) * fraction)
            }
        )
        let resumeData = download.pause()
        #expect(download.promise.isRejected, "a pause decides the outcome before pause() returns")
        let saved = try #require(await resumeData.async())
        #expect(await failure(of: download.promise)?.cancellationReason == .paused)
        return saved
    }

    /// Starts a resumable download of `path` to ``destination`` and pauses it once the server has sent `fraction` of
    /// the file.
    func pausedDownload(
        of path: String = "/file",
        on server: LoopbackHTTPServer,
        session: URLSession,
        verifying integrity: DownloadIntegrity? = nil,
        after fraction: Double = 0.5
    ) async throws -> DownloadResumeData {
        let download = session.resumableDownload(from: server.url(path), to: destination, verifying: integrity)
        return try await pause(download, on: server, path: path, after: fraction)
    }

    // MARK: Pause and resume

    @Test(timeLimit(minutes: 1))
    func pausedAtHalfAndResumedTheServerSendsTheFileOnce() async throws {
        let server = try serve(holdingAt: [0.5])
        let download = session.resumableDownload(from: server.url("/file"), to: destination)
        let saved = try await pause(download, on: server, path: "/file")

        #expect(await server.waitUntil { $0.first?.clientClosedAt != nil }, "pausing closes the connection")
        let first = try #require(server.connections.first)
        #expect(saved.bytesKept > 0 && saved.bytesKept <= Int64(first.bytesSent))
        #expect(saved.validator == .entityTag("\"v1\""))
        #expect(saved.totalBytes == Int64(Self.size))
        #expect(saved.url == server.url("/file"))
        #expect(saved.destination == destination)
        let partialSize = try FileManager.default.attributesOfItem(atPath: saved.partialFile.path)[.size] as? NSNumber
        #expect(partialSize?.int64Value == saved.bytesKept, "the partial file holds exactly the bytes kept")
        #expect(try contents() == [saved.partialFile.lastPathComponent], "no file at the destination yet")
        #expect(try fileContents(saved.partialFile) == Self.body.prefix(Int(saved.bytesKept)))

        let reports = Shared<[TransferProgress]>([])
        let resumed = session.resumeDownload(saved) { reports.append($0) }
        let (url, response) = try await resumed.promise.async()
        #expect(url == destination)
        #expect((response as? HTTPURLResponse)?.statusCode == 206)
        #expect(try fileContents(destination) == Self.body, "byte-identical to the source")
        #expect(try contents() == ["file.bin"], "the partial file became the destination")
        #expect(await resumed.resumeData.async() == nil)

        // Server side: the second request asked for the rest, and got only the rest.
        #expect(await server.waitUntil { $0.count == 2 && $0.allSatisfy { $0.finishedAt != nil } })
        let second = server.connections[1]
        #expect(second.range == "bytes=\(saved.bytesKept)-")
        #expect(second.status == 206)
        #expect(second.bytesSent == Self.size - Int(saved.bytesKept))
        let total = server.connections.map(\.bytesSent).reduce(0, +)
        print("pause at half, resume: the server sent \(total) bytes for a \(Self.size)-byte file")
        #expect(total <= Self.size + Self.overhead, "\(total) bytes sent in all")

        // Progress continued from the bytes kept, towards the whole file: first, before the request, the bytes kept.
        let connecting = reports.current.first
        #expect(connecting?.phase == .connecting && connecting?.bytesTransferred == saved.bytesKept)
        let seen = reports.current.dropFirst()
        #expect(seen.first.map { $0.bytesTransferred > saved.bytesKept } == true, "\(seen.first as Any)")
        #expect(seen.allSatisfy { $0.totalBytesExpected == Int64(Self.size) })
        #expect(seen.last?.bytesTransferred == Int64(Self.size))
    }

    @Test(timeLimit(minutes: 1))
    func pausingTwiceAndResumingTwiceStillSendsTheFileOnce() async throws {
        let server = try serve(holdingAt: [0.3, 0.3])
        let session = self.session
        let first = try await pausedDownload(on: server, session: session, after: 0.3)
        let secondDownload = session.resumeDownload(first)
        #expect(await server.waitUntil { $0.count == 2 })
        let second = try await pause(secondDownload, on: server, path: "/file", after: 0.3)
        #expect(second.bytesKept > first.bytesKept)
        #expect(second.partialFile == first.partialFile)
        _ = try await session.resumeDownload(second).promise.async()
        #expect(try fileContents(destination) == Self.body)
        #expect(try contents() == ["file.bin"])
        #expect(await server.waitUntil { $0.count == 3 && $0.allSatisfy { $0.finishedAt != nil } })
        #expect(
            server.connections.map(\.range) == [nil, "bytes=\(first.bytesKept)-", "bytes=\(second.bytesKept)-"]
        )
        let total = server.connections.map(\.bytesSent).reduce(0, +)
        print("paused twice: the server sent \(total) bytes for a \(Self.size)-byte file")
        #expect(total <= Self.size + 2 * Self.overhead)
    }

    @Test(timeLimit(minutes: 1))
    func aResumeStartedTheMomentTheResumeDataArrivesFindsThePartialFileFree() async throws {
        // The resume data is published from inside the paused download's completion. A resume started right there,
        // inline, must not find the partial file still held by the download that has just let go of it.
        let server = try serve(holdingAt: [0.3, 0.6])
        let session = self.session
        let first = try await pausedDownload(on: server, session: session, after: 0.3)
        let second = session.resumeDownload(first)
        let third = second.resumeData.map(on: nil) { data in data.map { session.resumeDownload($0) } }
        let saved = try await pause(second, on: server, path: "/file", after: 0.6)
        let resumed = try #require(await third.async(), "a pause publishes resume data")
        let (url, _) = try await resumed.promise.async()
        #expect(url == destination)
        #expect(try fileContents(destination) == Self.body)
        #expect(await server.waitUntil { $0.count == 3 && $0.allSatisfy { $0.finishedAt != nil } })
        #expect(server.connections.last?.range == "bytes=\(saved.bytesKept)-")
    }

    @Test(timeLimit(minutes: 1))
    func aPauseThatReachesTheDownloadThroughAChainPausesIt() async throws {
        let server = try serve(holdingAt: [0.25])
        let download = session.resumableDownload(from: server.url("/file"), to: destination)
        let opened = download.promise.map { url, _ in url.lastPathComponent }
        #expect(await server.waitUntil { ($0.first?.bytesSent ?? 0) > 100_000 })
        #expect(opened.cancel(reason: .paused))
        let saved = try #require(await download.resumeData.async())
        #expect(download.promise.cancellationReason == .paused)
        #expect(try contents() == [saved.partialFile.lastPathComponent])
        saved.discard()
        #expect(try contents().isEmpty, "discard() removes the partial file")
    }

    @Test(timeLimit(minutes: 1))
    func pausedThenCancelledForGoodLeavesNoFile() async throws {
        // The resumed answer is held too, half-way through the rest: it cannot finish before it is cancelled, however
        // slowly a loaded machine runs the test (under ThreadSanitizer on CI, it did).
        let server = try serve(holdingAt: [0.25, 0.25])
        let saved = try await pausedDownload(on: server, session: session, after: 0.25)
        let resumed = session.resumeDownload(saved)
        #expect(await server.waitUntil { $0.count == 2 && $0[1].bytesSent > 100_000 })
        #expect(resumed.cancel())
        #expect(resumed.promise.isRejected, "rejected before cancel() returns")
        #expect(await resumed.resumeData.async() == nil)
        #expect(try contents().isEmpty, "cancelling for good removes the partial file")
        #expect(await failure(of: resumed.promise)?.cancellationReason == .user)
        #expect(await server.waitUntil { $0[1].clientClosedAt != nil })
    }

    /// Resume data names only bytes flushed to disk. A partial file removed under the running download cannot be
    /// flushed: the pause keeps nothing rather than hand out resume data for bytes that are not there.
    @Test(timeLimit(minutes: 1))
    func aPauseKeepsNothingItCannotFlushToDisk() async throws {
        let server = try serve(holdingAt: [0.25])
        let written = Latch()
        let download = session.resumableDownload(from: server.url("/file"), to: destination) { progress in
            if progress.bytesTransferred > 100_000 { written.open() }
        }
        #expect(await written.opened())
        let partial = try #require(try contents().first)
        #expect(unlink(directory.url.appendingPathComponent(partial).path) == 0)
        #expect(await download.pause().async() == nil, "no resume data for bytes that are not on disk")
        #expect(await failure(of: download.promise)?.cancellationReason == .paused)
        #expect(try contents().isEmpty)
    }

    // MARK: Partial files nothing names

    /// What a process killed mid-download leaves: partial files no resume data names. `discardPartialFiles` removes
    /// those of the destination, and nothing else — not the ones asked to be kept, not those of downloads running in
    /// this process, not another destination's, not a name the library would not give, not a directory, and not what
    /// a symbolic link points to.
    @Test(timeLimit(minutes: 1))
    func discardingPartialFilesRemovesOnlyTheAbandonedOnesOfTheDestination() async throws {
        func partial(of destination: URL = destination, id: String = UUID().uuidString) -> URL {
            PartialFile.url(for: destination, id: id)
        }
        func write(_ url: URL) throws { try Data(repeating: 7, count: 1_000).write(to: url) }
        let abandoned = [partial(), partial()]
        let kept = partial()
        let strangers = [
            partial(of: directory.url.appendingPathComponent("other.bin")),
            partial(id: "not-a-uuid"),
            partial(id: UUID().uuidString.lowercased()),
            directory.url.appendingPathComponent(".file.bin.partial"),
            destination,
        ]
        for url in abandoned + strangers + [kept] { try write(url) }
        let folder = partial()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let outside = try DownloadDirectory()
        defer { outside.remove() }
        let target = outside.url.appendingPathComponent("target.bin")
        try write(target)
        let link = partial()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)

        // Two downloads to the same destination run meanwhile, each holding a partial file of it: the server holds
        // both at a quarter of the file until the cleanup is over, so neither can finish before it, however slowly
        // the machine runs the test.
        let gate = LoopbackHTTPServer.Gate()
        let server = try serve { _ in
            var resource = Self.resource()
            resource.interruption = .hold(after: Self.size / 4, until: gate)
            return .resource(resource)
        }
        let started = (plain: Latch(), resumable: Latch())
        let plain = session.cancellableDownload(from: server.url("/file"), to: destination) { _ in
            started.plain.open()
        }
        let resumable = session.resumableDownload(from: server.url("/file"), to: destination) { _ in
            started.resumable.open()
        }
        #expect(await started.plain.opened())
        #expect(await started.resumable.opened())
        let before = Set(try contents())
        let planted = Set((abandoned + strangers + [kept, folder, link]).map(\.lastPathComponent))
        let running = before.subtracting(planted)
        let owned = running.filter { PartialFile.isOwned(directory.url.appendingPathComponent($0), by: destination) }
        #expect(running.count == 2 && owned == running, "the running downloads' files")

        let removed = try DownloadResumeData.discardPartialFiles(for: destination, except: [kept])

        let expected = (abandoned + [link]).map(\.standardizedFileURL).sorted { $0.path < $1.path }
        #expect(removed.map(\.standardizedFileURL) == expected)
        let after = Set(try contents())
        #expect(before.subtracting(after) == Set(expected.map(\.lastPathComponent)), "nothing else was removed")
        #expect(after.isSuperset(of: running))
        #expect(FileManager.default.fileExists(atPath: target.path), "a link is removed, not what it points to")
        #expect(try fileContents(target).count == 1_000)
        gate.open()
        _ = try await plain.async()
        _ = try await resumable.promise.async()
        #expect(try fileContents(destination) == Self.body, "the running downloads finished their files")
        #expect(try DownloadResumeData.discardPartialFiles(for: destination, except: [kept]).isEmpty)
    }

    /// One folder, two spellings — a symbolic link to it here; `/var` and `/private/var` on Apple platforms: a partial
    /// file is the same file under both. A second resume through the link is refused while the first runs, and the
    /// cleanup through the link leaves the running download's file alone.
    @Test(timeLimit(minutes: 1))
    func aFolderSpelledThroughALinkHoldsTheSameClaimedFiles() async throws {
        let server = try serve(holdingAt: [0.25])
        let outside = try DownloadDirectory()
        defer { outside.remove() }
        let link = outside.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory.url)
        let throughLink = link.appendingPathComponent("file.bin")

        let saved = try await pausedDownload(on: server, session: session, after: 0.25)
        let first = session.resumeDownload(saved)
        let second = session.resumeDownload(saved, to: throughLink)
        let refused = await failure(of: second.promise) as? DownloadError
        #expect(refused == .partialFileInUse(try saved.relocated(to: throughLink).partialFile))
        #expect(try DownloadResumeData.discardPartialFiles(for: throughLink).isEmpty, "the running resume's file")
        _ = try await first.promise.async()
        #expect(try fileContents(destination) == Self.body)
        #expect(try contents() == ["file.bin"])
    }

    /// Resume data discarded while a resume of it runs: the file is the running download's, which finishes it.
    @Test(timeLimit(minutes: 1))
    func discardingResumeDataWhileItsResumeRunsLeavesTheFileToTheDownload() async throws {
        let server = try serve(holdingAt: [0.25])
        let saved = try await pausedDownload(on: server, session: session, after: 0.25)
        let resumed = session.resumeDownload(saved)
        saved.discard()
        #expect(FileManager.default.fileExists(atPath: saved.partialFile.path), "still the running download's")
        _ = try await resumed.promise.async()
        #expect(try fileContents(destination) == Self.body)
        #expect(try contents() == ["file.bin"])
    }

    @Test(timeLimit(minutes: 1))
    func discardingPartialFilesRefusesAPathItCannotTrustAndFindsNothingInAMissingFolder() throws {
        #expect(throws: CocoaError.self) {
            try DownloadResumeData.discardPartialFiles(for: URL(fileURLWithPath: "/tmp/../etc/passwd"))
        }
        #expect(throws: CocoaError.self) {
            try DownloadResumeData.discardPartialFiles(for: URL(string: "https://example.com/file.bin")!)
        }
        let missing = directory.url.appendingPathComponent("missing/file.bin")
        #expect(try DownloadResumeData.discardPartialFiles(for: missing).isEmpty)
    }

    // MARK: Servers that cannot continue

    @Test(timeLimit(minutes: 1))
    func aServerThatIgnoresRangesRestartsTheFileCleanly() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let saved = try await pausedDownload(on: server, session: session)
        file.change { $0.ignoresRanges = true }
        let reports = Shared<[TransferProgress]>([])
        let (_, response) = try await session.resumeDownload(saved) { reports.append($0) }.promise.async()
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try fileContents(destination) == Self.body, "the stale half was not kept")
        #expect(try contents() == ["file.bin"])
        #expect(await server.waitUntil { $0.count == 2 && $0[1].completed })
        #expect(server.connections[1].status == 200)
        #expect(server.connections[1].bytesSent == Self.size)
        let transferring = reports.current.filter { $0.phase == .transferring }
        #expect(transferring.first.map { $0.bytesTransferred < saved.bytesKept } == true, "progress restarted")
    }

    @Test(timeLimit(minutes: 1))
    func aFileThatChangedBetweenPauseAndResumeRestartsWithTheNewFile() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let saved = try await pausedDownload(on: server, session: session)
        let newBody = Data(Self.body.reversed())
        file.change {
            $0.body = newBody
            $0.entityTag = "\"v2\""
        }
        let (_, response) = try await session.resumeDownload(saved).promise.async()
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "If-Range did not match: the whole new file")
        #expect(try fileContents(destination) == newBody, "never the old half followed by the new one")
        #expect(await server.waitUntil { $0.count == 2 && $0[1].completed })
        #expect(server.connections[1].range == "bytes=\(saved.bytesKept)-")
    }

    @Test(timeLimit(minutes: 1))
    func aFileThatShrankUnderTheSameValidatorRejectsWith416AndRemovesTheBytes() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let saved = try await pausedDownload(on: server, session: session)
        file.change { $0.body = Self.body.prefix(1_000) }  // a misbehaving server: same ETag, another file
        let resumed = session.resumeDownload(saved)
        let failure = await failure(of: resumed.promise)
        #expect(failure as? DownloadError == .rangeNotSatisfiable(serverLength: 1_000), "\(failure as Any)")
        #expect(await resumed.resumeData.async() == nil)
        #expect(try contents().isEmpty)
        #expect(server.connections.last?.status == 416)
    }

    @Test(timeLimit(minutes: 1))
    func aFileThatGrewUnderTheSameValidatorRejectsOnItsContentRange() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let saved = try await pausedDownload(on: server, session: session)
        file.change { $0.body = Self.body + Data(count: 10) }
        let failure = await failure(of: session.resumeDownload(saved).promise)
        let expected = "bytes \(saved.bytesKept)-\(Self.size + 9)/\(Self.size + 10)"
        #expect(failure as? DownloadError == .unexpectedContentRange(expected), "\(failure as Any)")
        #expect(try contents().isEmpty)
    }

    @Test(timeLimit(minutes: 1))
    func aRefused206IsNotReadAnyFurther() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let saved = try await pausedDownload(on: server, session: session)
        // The same ETag for another, far longer file: its 206 names another total, and is refused. Unstopped, the
        // rest of it (about 14 MiB at 4 MiB/s) would take 3.5 s to cross.
        file.change { $0.body = Self.body + Data(count: 14 * 1_048_576) }
        let failure = await failure(of: session.resumeDownload(saved).promise)
        #expect(failure is DownloadError, "\(failure as Any)")
        #expect(await server.waitUntil(timeout: 5) { $0.count == 2 && $0[1].finishedAt != nil })
        let refused = server.connections[1]
        #expect(refused.status == 206)
        #expect(!refused.completed)
        print("a refused 206: the server sent \(refused.bytesSent) bytes of its body before the connection closed")
        #expect(refused.bytesSent <= Self.overhead, "at most what socket buffers hold, not the body")
    }

    // MARK: A caller's own Range

    @Test(timeLimit(minutes: 1))
    func aDownloadWithTheCallersRangeWritesThatPart() async throws {
        let server = try serve { _ in .resource(Self.resource(bytesPerSecond: nil)) }
        var request = URLRequest(url: server.url("/file"))
        request.setValue("bytes=1000-1999", forHTTPHeaderField: "Range")
        let (url, response) = try await session.cancellableDownload(for: request, to: destination).async()
        #expect((response as? HTTPURLResponse)?.statusCode == 206)
        #expect(try fileContents(url) == Self.body[1_000..<2_000], "the part asked for, and nothing else")
        #expect(try contents() == ["file.bin"])
        #expect(server.connections.first?.range == "bytes=1000-1999")

        // Without a Range of the caller's, a 206 is not the file.
        let unasked = try serve { _ in .status(206, body: Data(count: 10)) }
        let failure = await failure(of: session.cancellableDownload(from: unasked.url("/part"), to: destination))
        #expect(failure is DownloadError, "\(failure as Any)")
        #expect(try fileContents(destination) == Self.body[1_000..<2_000], "the earlier file stays")
    }

    @Test(timeLimit(minutes: 1))
    func aResumableDownloadWithTheCallersRangeIsRefusedBeforeAnyRequest() async throws {
        let server = try serve { _ in .resource(Self.resource()) }
        var request = URLRequest(url: server.url("/file"))
        request.setValue("bytes=0-99", forHTTPHeaderField: "Range")
        let download = URLSession.withProgressReporting(configuration: .ephemeral)
            .resumableDownload(for: request, to: destination)
        #expect(await failure(of: download.promise) as? DownloadError == .rangeRequested("bytes=0-99"))
        #expect(await download.resumeData.async() == nil)
        #expect(try contents().isEmpty, "no partial file was made")
        #expect(server.connections.isEmpty, "nothing was sent")
    }

    @Test(timeLimit(minutes: 1))
    func aPartialFileThatAlreadyHoldsEveryByteFinishesOnThe416() async throws {
        let server = try serve { _ in .resource(Self.resource(bytesPerSecond: nil)) }
        let partial = PartialFile.newURL(for: destination)
        try Self.body.write(to: partial)
        let saved = try DownloadResumeData(
            url: server.url("/file"),
            destination: destination,
            partialFile: partial,
            bytesKept: Int64(Self.size),
            validator: .entityTag("\"v1\""),
            totalBytes: Int64(Self.size)
        )
        let (url, response) = try await session.resumeDownload(saved).promise.async()
        #expect((response as? HTTPURLResponse)?.statusCode == 416)
        #expect(try fileContents(url) == Self.body)
        #expect(try contents() == ["file.bin"])
        #expect(server.connections.map(\.bytesSent) == [0])
    }

    @Test(timeLimit(minutes: 1))
    func resumeDataWhosePartialFileIsGoneStartsOver() async throws {
        let server = try serve(holdingAt: [0.5])
        let saved = try await pausedDownload(on: server, session: session)
        try FileManager.default.removeItem(at: saved.partialFile)
        let (_, response) = try await session.resumeDownload(saved).promise.async()
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try fileContents(destination) == Self.body)
        #expect(server.connections.last?.range == nil, "no Range for bytes that are not there")
    }

    @Test(timeLimit(minutes: 1))
    func resumeDataWithoutAValidatorOrALengthStartsOver() async throws {
        let server = try serve { _ in .resource(Self.resource(bytesPerSecond: nil)) }
        let partial = PartialFile.newURL(for: destination)
        try Data(repeating: 0xEE, count: 100_000).write(to: partial)
        let saved = try DownloadResumeData(
            url: server.url("/file"),
            destination: destination,
            partialFile: partial,
            bytesKept: 100_000,
            validator: nil,
            totalBytes: nil
        )
        _ = try await session.resumeDownload(saved).promise.async()
        #expect(try fileContents(destination) == Self.body, "none of the unverifiable bytes were kept")
        #expect(server.connections.map(\.range) == [nil])
        #expect(try contents() == ["file.bin"])
    }

    @Test(timeLimit(minutes: 1))
    func aConnectionLostMidBodyKeepsItsBytesForAResume() async throws {
        let file = ServedFile(Self.resource(bytesPerSecond: nil))
        file.change { $0.interruption = .stall(after: 700_000) }
        let server = try serve { _ in .resource(file.current) }
        var request = URLRequest(url: server.url("/file"))
        request.timeoutInterval = 1  // the stall becomes a URLError
        let download = session.resumableDownload(for: request, to: destination)
        let failure = await failure(of: download.promise)
        #expect((failure as? URLError)?.code == .timedOut, "\(failure as Any)")
        let saved = try #require(await download.resumeData.async(), "a transport failure keeps the bytes")
        #expect(saved.bytesKept == 700_000)
        file.change { $0.interruption = nil }
        _ = try await session.resumeDownload(saved).promise.async()
        #expect(try fileContents(destination) == Self.body)
        #expect(server.connections.last?.bytesSent == Self.size - 700_000)
    }

    // MARK: Mirrors, races, timeouts

    @Test(timeLimit(minutes: 1))
    func aDownloadPausedOnOneMirrorContinuesFromAnother() async throws {
        let server = try serve(holdingAt: [0.5])
        let saved = try await pausedDownload(of: "/mirror-a/file", on: server, session: session)
        let resumed = session.resumeDownload(saved, from: URLRequest(url: server.url("/mirror-b/file")))
        _ = try await resumed.promise.async()
        #expect(try fileContents(destination) == Self.body)
        #expect(await server.waitUntil { $0.count == 2 && $0.allSatisfy { $0.finishedAt != nil } })
        let fromB = try #require(server.connections.first { $0.path == "/mirror-b/file" })
        #expect(fromB.status == 206)
        #expect(fromB.bytesSent == Self.size - Int(saved.bytesKept))
        let total = server.connections.map(\.bytesSent).reduce(0, +)
        print("resumed from a second mirror: \(total) bytes in all for a \(Self.size)-byte file")
        #expect(total <= Self.size + Self.overhead)
    }

    @Test(timeLimit(minutes: 1))
    func aTimeoutDuringAResumeCancelsForGoodAndClosesTheConnection() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let saved = try await pausedDownload(on: server, session: session)
        file.change { $0.interruption = .stall(after: 10_000) }
        let resumed = session.resumeDownload(saved)
        let limited = resumed.promise.timeout(seconds: 0.3)
        #expect(await failure(of: limited) is TimeoutError)
        #expect(resumed.promise.cancellationReason == .timeout)
        #expect(await resumed.resumeData.async() == nil, "a timeout cancels for good")
        #expect(try contents().isEmpty)
        #expect(await server.waitUntil { $0.count == 2 && $0[1].clientClosedAt != nil })
    }

    @Test(timeLimit(minutes: 1))
    func aRaceOfResumedDownloadsKeepsTheWinnerAndRemovesTheLosersBytes() async throws {
        let speeds = ["/fast": 8 * 1_048_576, "/slow": 1_048_576]
        // Each file is held at a quarter until its download pauses: paused one after the other, neither can finish
        // first, however slowly the machine runs the test.
        let server = try serve(holdingAt: [0.25, 0.25]) { request in
            Self.resource(bytesPerSecond: speeds[request.path])
        }
        let other = directory.url.appendingPathComponent("other.bin")
        // Each is paused once it has written the quarter it was sent, so each resume asks for a range.
        let quarter = (fast: Latch(), slow: Latch())
        let fastDownload = session.resumableDownload(from: server.url("/fast"), to: destination) { progress in
            if progress.bytesTransferred == Int64(Self.size / 4) { quarter.fast.open() }
        }
        let slowDownload = session.resumableDownload(from: server.url("/slow"), to: other) { progress in
            if progress.bytesTransferred == Int64(Self.size / 4) { quarter.slow.open() }
        }
        #expect(await quarter.fast.opened())
        let savedFast = try await pause(fastDownload, on: server, path: "/fast", after: 0.25)
        #expect(await quarter.slow.opened())
        let savedSlow = try await pause(slowDownload, on: server, path: "/slow", after: 0.25)
        #expect([savedFast.bytesKept, savedSlow.bytesKept] == [Int64(Self.size / 4), Int64(Self.size / 4)])
        let fast = session.resumeDownload(savedFast)
        let slow = session.resumeDownload(savedSlow)
        let winner = try await race([fast.promise, slow.promise], autoCancel: true).async()
        #expect(winner.url == destination)
        #expect(try fileContents(destination) == Self.body)
        #expect(await slow.resumeData.async() == nil, "the loser is cancelled for good")
        #expect(slow.promise.cancellationReason == .lostRace)
        #expect(try contents() == ["file.bin"])
        #expect(
            await server.waitUntil { connections in
                connections.first { $0.path == "/slow" && $0.range != nil }?.clientClosedAt != nil
            },
            "the loser's connection closed"
        )
    }

    @Test(timeLimit(minutes: 1))
    func twoResumesOfTheSameDataCannotWriteOneFile() async throws {
        let server = try serve(holdingAt: [0.5])
        let saved = try await pausedDownload(on: server, session: session)
        let first = session.resumeDownload(saved)
        let second = session.resumeDownload(saved)
        #expect(await failure(of: second.promise) as? DownloadError == .partialFileInUse(saved.partialFile))
        _ = try await first.promise.async()
        #expect(try fileContents(destination) == Self.body)
    }

    /// Without live delivery (a session with a delegate of its own, on every platform), nothing is written until the
    /// end: a pause keeps 0 bytes, and a resume starts over — correctly, and without a `Range`.
    @Test(timeLimit(minutes: 1))
    func onASessionWithoutLiveDeliveryAResumeStartsOver() async throws {
        let server = try serve(holdingAt: [0.25])
        let session = sessionWithoutLiveDelivery()
        let download = session.resumableDownload(from: server.url("/file"), to: destination)
        #expect(await server.waitUntil { ($0.first?.bytesSent ?? 0) > 100_000 })
        let saved = try #require(await download.pause().async())
        #expect(saved.bytesKept == 0)
        _ = try await session.resumeDownload(saved).promise.async()
        #expect(try fileContents(destination) == Self.body)
        #expect(try contents() == ["file.bin"])
        #expect(server.connections.count == 2)
        #expect(server.connections.last?.range == nil, "the resume started over: no Range")
        #expect(server.connections.last?.status == 200)
    }

    // MARK: Integrity

    /// One million "a": a NIST test vector, served as a file.
    static var millionA: Data { Data(repeating: UInt8(ascii: "a"), count: 1_000_000) }
    static let millionADigest = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

    @Test(arguments: Mode.allCases)
    func aDownloadWithTheExpectedLengthAndDigestSucceeds(mode: Mode) async throws {
        let server = try serve { _ in .resource(Self.resource(Self.millionA, bytesPerSecond: nil)) }
        let expected = DownloadIntegrity(length: 1_000_000, sha256: Self.millionADigest.uppercased())
        let request = URLRequest(url: server.url("/a"))
        let session = DownloadIntegrationTests().makeSession(mode)
        _ = try await session.cancellableDownload(for: request, to: destination, verifying: expected).async()
        #expect(try fileContents(destination) == Self.millionA)
    }

    @Test(arguments: Mode.allCases)
    func aMismatchRejectsWithATypedErrorAndLeavesTheDestinationAsItWas(mode: Mode) async throws {
        let server = try serve { _ in .resource(Self.resource(Self.millionA, bytesPerSecond: nil)) }
        try Data("previous".utf8).write(to: destination)
        let session = DownloadIntegrationTests().makeSession(mode)
        let request = URLRequest(url: server.url("/a"))
        let wrongDigest = String(repeating: "0", count: 64)
        let digestFailure = await failure(
            of: session.cancellableDownload(for: request, to: destination, verifying: .init(sha256: wrongDigest))
        )
        #expect(
            digestFailure as? DownloadIntegrityError
                == .sha256Mismatch(expected: wrongDigest, actual: Self.millionADigest)
        )
        let lengthFailure = await failure(
            of: session.cancellableDownload(for: request, to: destination, verifying: .init(length: 999))
        )
        #expect(lengthFailure as? DownloadIntegrityError == .lengthMismatch(expected: 999, actual: 1_000_000))
        #expect(try contents() == ["file.bin"], "nothing left behind")
        #expect(try fileContents(destination) == Data("previous".utf8))
    }

    @Test(arguments: [
        DownloadIntegrity(length: -1), DownloadIntegrity(sha256: "abc"),
        DownloadIntegrity(sha256: String(repeating: "g", count: 64)),
    ])
    func anExpectationThatCannotBeCheckedRejectsBeforeAnyRequest(integrity: DownloadIntegrity) async throws {
        let server = try serve { _ in .resource(Self.resource()) }
        let download = session.resumableDownload(from: server.url("/a"), to: destination, verifying: integrity)
        guard case .invalidExpectation = await failure(of: download.promise) as? DownloadIntegrityError else {
            Issue.record("expected invalidExpectation")
            return
        }
        #expect(await download.resumeData.async() == nil)
        #expect(server.connections.isEmpty)
        #expect(try contents().isEmpty)
    }

    @Test(timeLimit(minutes: 1))
    func aResumedDownloadIsCheckedAgainstTheIntegrityItStartedWith() async throws {
        let file = ServedFile(Self.resource())
        let server = try serve(holdingAt: [0.5]) { _ in file.current }
        let expected = DownloadIntegrity(sha256: String(repeating: "1", count: 64))
        let saved = try await pausedDownload(on: server, session: session, verifying: expected)
        #expect(saved.integrity == expected)
        let failure = await failure(of: session.resumeDownload(saved).promise)
        guard case .sha256Mismatch = failure as? DownloadIntegrityError else {
            Issue.record("expected a digest mismatch, got \(failure as Any)")
            return
        }
        #expect(try contents().isEmpty)
    }
}
