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

/// Pausing and resuming segmented downloads against the real loopback server: what a pause keeps is on disk, byte
/// for byte; a resume asks for no byte it kept; and resume data is untrusted input.
extension SegmentedDownloadTests {
    /// Starts a resumable download of `mirrors` and pauses it once `threshold` bytes are written (at once if `nil`).
    ///
    /// - Returns: the resume data, and whether the download finished before the pause took hold.
    func pause(
        _ mirrors: [URL],
        at threshold: Int64?,
        options: SegmentedDownloadOptions = options(),
        verifying integrity: DownloadIntegrity? = nil
    ) async -> (SegmentedDownloadResumeData?, finished: Bool) {
        let paused = Locked(false)
        let handle = Locked<SegmentedDownload?>(nil)
        let download = session.resumableSegmentedDownload(
            from: mirrors,
            to: directory.destination,
            verifying: integrity,
            options: options
        ) { progress in
            guard let threshold, progress.bytesWritten >= threshold else { return }
            let first = paused.withLock { was in
                defer { was = true }
                return !was
            }
            if first { handle.withLock { $0 }?.pause() }
        }
        handle.withLock { $0 = download }
        if threshold == nil { download.pause() }
        let outcome = await download.promise.asPromise().asResult().async()
        let data = await download.resumeData.async()
        if case .success = outcome { return (data, true) }
        return (data, false)
    }

    /// The bytes of every kept range are the body's, on disk, and the partial file is the only file in the folder.
    func expectKept(_ data: SegmentedDownloadResumeData, body: Data = body) throws {
        let partial = try PartialFile.contents(of: data.partialFile)
        for range in data.keptRanges {
            #expect(
                partial[Int(range.lowerBound)..<Int(range.upperBound)]
                    == body[Int(range.lowerBound)..<Int(range.upperBound)]
            )
        }
        #expect(try directory.contents() == [data.partialFile.lastPathComponent])
    }

    /// The `Range` headers the server saw, as byte ranges, from connection `index` on.
    func askedRanges(from index: Int) -> [Range<Int64>] {
        let connections = servers.first?.connections ?? []
        return connections.dropFirst(index).compactMap { connection in
            guard let header = connection.range, header.hasPrefix("bytes=") else { return nil }
            let bounds = header.dropFirst(6).split(separator: "-").compactMap { Int64($0) }
            return bounds.count == 2 ? bounds[0]..<(bounds[1] + 1) : nil
        }
    }

    @Test func aPausedDownloadResumesAndAsksForNoByteItKept() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576), Self.resource(bytesPerSecond: 512 * 1_024)])
        let (saved, finished) = await pause(mirrors, at: Int64(Self.size * 4 / 10))
        #expect(!finished)
        let paused = try #require(saved)
        #expect(paused.totalBytes == Int64(Self.size))
        #expect(paused.validator == .entityTag("\"v1\""))
        #expect(paused.bytesKept >= Int64(Self.size * 4 / 10) && paused.bytesKept < Int64(Self.size))
        try expectKept(paused)
        // Through JSON, as an app keeps it across launches.
        let data = try JSONDecoder().decode(
            SegmentedDownloadResumeData.self,
            from: JSONEncoder().encode(paused)
        )
        #expect(data == paused)
        let server = try #require(servers.first)
        #expect(await server.waitUntil(timeout: 10) { $0.allSatisfy(Self.isOver) })
        let before = server.connections.count
        let written = Locked<[Int64]>([])
        let resumed = session.resumeSegmentedDownload(data, options: Self.options()) { progress in
            written.withLock { $0.append(progress.bytesWritten) }
        }
        let outcome = await resumed.promise.asPromise().asResult().async()
        _ = try expectIntact(outcome)
        #expect(await resumed.resumeData.async() == nil)
        let asked = askedRanges(from: before)
        #expect(!asked.isEmpty)
        for range in asked {
            #expect(!data.keptRanges.contains { $0.overlaps(range) }, "asked for \(range), kept \(data.keptRanges)")
        }
        // Progress counts on from the bytes kept.
        #expect(try #require(written.withLock { $0.first }) >= paused.bytesKept)
    }

    /// A pause at every point of a download — before any answer, at each fifth of the file, as the last byte is
    /// written — keeps exactly what is on disk, and its resume finishes the file byte for byte.
    @Test func aPauseAtAnyPointResumesToTheWholeFile() async throws {
        let small = Data(Self.body.prefix(96 * 1_024))
        let mirrors = try serve([Self.resource(small), Self.resource(small, bytesPerSecond: 1_048_576)])
        var options = Self.options()
        options.segmentSize = 16 * 1_024
        options.minimumSplitSize = 4 * 1_024
        for fifth in [-1] + Array(0...5) {
            let threshold = fifth < 0 ? nil : Int64(small.count * fifth / 5)
            let (saved, finished) = await pause(mirrors, at: threshold, options: options)
            if finished {
                #expect(saved == nil)
                #expect(try Data(contentsOf: directory.destination) == small)
                try FileManager.default.removeItem(at: directory.destination)
                continue
            }
            let data = try #require(saved, "paused at \(String(describing: threshold))")
            try expectKept(data, body: small)
            let resumed = session.resumeSegmentedDownload(data, options: options)
            let outcome = await resumed.promise.asPromise().asResult().async()
            guard case .success(let result) = outcome else {
                Issue.record("resumed from \(data.keptRanges): \(outcome)")
                continue
            }
            #expect(result.totalBytes == Int64(small.count))
            #expect(try Data(contentsOf: directory.destination) == small)
            #expect(try directory.contents() == ["file.bin"])
            try FileManager.default.removeItem(at: directory.destination)
        }
    }

    /// A checkpoint taken while the download runs names only bytes on disk, and stays true as the download goes on:
    /// resuming from it after the download was stopped later (as a crash would stop it) finishes the file and asks
    /// for no byte it names.
    @Test func aCheckpointStaysTrueAsTheDownloadGoesOnAndResumesAfterACrash() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576), Self.resource(bytesPerSecond: 512 * 1_024)])
        let handle = Locked<SegmentedDownload?>(nil)
        let checkpoints = Locked<[SegmentedDownloadResumeData]>([])
        let download = session.resumableSegmentedDownload(
            from: mirrors,
            to: directory.destination,
            options: Self.options()
        ) { progress in
            let taken = checkpoints.withLock { $0.count }
            let next = Int64(Self.size) * Int64(taken + 1) * 3 / 10  // at 30% and 60%
            guard taken < 2, progress.bytesWritten >= next, let checkpoint = handle.withLock({ $0 })?.checkpoint()
            else { return }
            checkpoints.withLock { $0.append(checkpoint) }
            if taken == 1 { handle.withLock { $0 }?.pause() }  // stopped at 60%: what a crash leaves, and more
        }
        handle.withLock { $0 = download }
        _ = await download.promise.asPromise().asResult().async()
        let paused = try #require(await download.resumeData.async())
        let taken = checkpoints.withLock { $0 }
        try #require(taken.count == 2)
        let checkpoint = taken[0]
        #expect(download.checkpoint() == nil)  // it has ended
        #expect(checkpoint.bytesKept >= Int64(Self.size) * 3 / 10 && checkpoint.bytesKept < paused.bytesKept)
        #expect(checkpoint.partialFile == paused.partialFile && checkpoint.totalBytes == paused.totalBytes)
        // Every range the first checkpoint names is still on disk, unchanged, inside what the pause kept.
        for range in checkpoint.keptRanges {
            #expect(
                paused.keptRanges.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
            )
        }
        try expectKept(checkpoint)
        let before = try #require(servers.first).connections.count
        let resumed = session.resumeSegmentedDownload(checkpoint, options: Self.options())
        _ = try expectIntact(await resumed.promise.asPromise().asResult().async())
        for range in askedRanges(from: before) {
            #expect(!checkpoint.keptRanges.contains { $0.overlaps(range) }, "asked for \(range)")
        }
    }

    @Test func aCheckpointCannotBeResumedWhileItsDownloadRuns() async throws {
        let started = Latch()
        let mirrors = try serve([Self.resource(bytesPerSecond: 200_000)])
        let download = session.resumableSegmentedDownload(from: mirrors, to: directory.destination) {
            if $0.bytesWritten > 0 { started.open() }
        }
        #expect(await started.opened(within: .seconds(30)))
        let checkpoint = try #require(download.checkpoint())
        let second = session.resumeSegmentedDownload(checkpoint)
        #expect(await failure(of: second.promise) as? DownloadError == .partialFileInUse(checkpoint.partialFile))
        download.cancel()
        #expect(try directory.contents() == [], "removed before the promise rejected")
        #expect(download.checkpoint() == nil)
    }

    @Test func aPauseBeforeAnyAnswerKeepsNothingAndItsResumeStartsAfresh() async throws {
        let answer = Latch()
        let route = Self.resource()
        let mirrors = try serve([
            { request in
                _ = answer.wait(timeout: .seconds(30))
                return route(request)
            }
        ])
        let download = session.resumableSegmentedDownload(from: mirrors, to: directory.destination)
        let data = try #require(await download.pause().async())
        answer.open()
        #expect(data.totalBytes == nil && data.keptRanges.isEmpty && data.validator == nil)
        #expect(try directory.contents() == [data.partialFile.lastPathComponent])
        let resumed = session.resumeSegmentedDownload(data, options: Self.options())
        _ = try expectIntact(await resumed.promise.asPromise().asResult().async())
    }

    @Test func aResumeFromMirrorsThatServeAnotherVersionDropsThemAndKeepsTheBytes() async throws {
        var changed = Self.body
        changed[0] ^= 0xFF
        let mirrors = try serve([
            Self.resource(bytesPerSecond: 1_048_576), Self.resource(changed, tag: "\"v2\""), Self.resource(tag: nil),
        ])
        let (saved, _) = await pause([mirrors[0]], at: 200_000)
        let data = try #require(saved)
        let resumed = session.resumeSegmentedDownload(
            data,
            from: [URLRequest(url: mirrors[1]), URLRequest(url: mirrors[2])]
        )
        let error = await failure(of: resumed.promise)
        guard case SegmentedDownloadError.everyMirrorDropped(let statuses)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(statuses[0].dropped == .validatorDisagrees(expected: "\"v1\"", announced: "\"v2\""))
        #expect(statuses[1].dropped == .validatorDisagrees(expected: "\"v1\"", announced: nil))
        #expect(statuses.allSatisfy { $0.bytesWritten == 0 })
        // Nothing of theirs was written: the bytes kept are as they were, for a resume from a mirror that has them.
        let again = try #require(await resumed.resumeData.async())
        #expect(again.keptRanges == data.keptRanges)
        try expectKept(again)
        again.discard()
        #expect(try directory.contents().isEmpty)
    }

    @Test func aPartialFileCutShortIsFetchedAgainFromWhereItEnds() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576)])
        let (saved, _) = await pause(mirrors, at: 300_000)
        let data = try #require(saved)
        let end = try #require(data.keptRanges.last?.upperBound)
        let handle = try FileHandle(forWritingTo: data.partialFile)
        try handle.truncate(atOffset: UInt64(end / 2))
        try handle.close()
        let before = try #require(servers.first).connections.count
        let resumed = session.resumeSegmentedDownload(data, options: Self.options())
        _ = try expectIntact(await resumed.promise.asPromise().asResult().async())
        // Only what the disk held was kept: the bytes cut off were asked for again.
        #expect(askedRanges(from: before).contains { $0.contains(end / 2) })
    }

    @Test func withoutAValidatorAResumeStartsOverUnlessAskedToContinue() async throws {
        let mirrors = try serve([Self.resource(tag: nil, bytesPerSecond: 1_048_576)])
        for withoutValidator in [DownloadResumeData.WithoutValidator.startOver, .continueIfLengthMatches] {
            let (saved, _) = await pause(mirrors, at: 300_000)
            let data = try #require(saved)
            #expect(data.validator == nil && data.bytesKept >= 300_000)
            let before = try #require(servers.first).connections.count
            let resumed = session.resumeSegmentedDownload(data, withoutValidator: withoutValidator)
            _ = try expectIntact(await resumed.promise.asPromise().asResult().async())
            let asksForByteZero = askedRanges(from: before).contains { $0.contains(0) }
            #expect(asksForByteZero == (withoutValidator == .startOver))
            try FileManager.default.removeItem(at: directory.destination)
        }
    }

    @Test func cancellingAResumableDownloadForGoodLeavesNoFileAndNoResumeData() async throws {
        let started = Latch()
        let mirrors = try serve([Self.resource(bytesPerSecond: 100_000)])
        let download = session.resumableSegmentedDownload(from: mirrors, to: directory.destination) {
            if $0.bytesWritten > 0 { started.open() }
        }
        #expect(await started.opened(within: .seconds(30)))
        download.cancel()
        #expect(await download.resumeData.async() == nil)
        #expect(try directory.contents() == [], "removed before the promise rejected")
        // A download that cannot pause removes its bytes on a pause too: nothing could resume them.
        let plain = session.segmentedDownload(from: mirrors, to: directory.destination)
        plain.cancel(reason: .paused)
        _ = await plain.asPromise().asResult().async()
        #expect(try directory.contents() == [], "removed before the promise rejected")
    }

    @Test func aResumeDoesNotOpenALinkOrAFileInUse() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576)])
        let (saved, _) = await pause(mirrors, at: 100_000)
        let data = try #require(saved)
        // Two resumes of the same data: the second is refused before any request and leaves the first's file.
        let first = session.resumeSegmentedDownload(data)
        let second = session.resumeSegmentedDownload(data)
        #expect(await failure(of: second.promise) as? DownloadError == .partialFileInUse(data.partialFile))
        #expect(await second.resumeData.async() == nil)
        _ = await first.pause().async()
        // A symbolic link where the partial file was: refused, and what it points to is untouched.
        let target = directory.url.appendingPathComponent("elsewhere")
        try Data("keep me".utf8).write(to: target)
        try FileManager.default.removeItem(at: data.partialFile)
        try FileManager.default.createSymbolicLink(at: data.partialFile, withDestinationURL: target)
        let linked = session.resumeSegmentedDownload(data)
        #expect(await failure(of: linked.promise) as? DownloadError == .partialFileNotOwned(data.partialFile))
        #expect(try Data(contentsOf: target) == Data("keep me".utf8))
    }

    @Test func resumeDataThatNoDownloadCouldHaveMadeIsRefusedWhenDecoded() throws {
        let destination = directory.destination
        let partial = PartialFile.newURL(for: destination)
        let valid: [String: Any] = [
            "mirrors": ["https://a.example/f"],
            "destination": destination.absoluteString,
            "partialFile": partial.absoluteString,
            "totalBytes": 1_000,
            "validator": ["entityTag": ["_0": "\"v1\""]],
            "keptRanges": [[0, 100], [200, 300]],
        ]
        func decode(_ change: (inout [String: Any]) -> Void) throws -> SegmentedDownloadResumeData {
            var object = valid
            change(&object)
            let json = try JSONSerialization.data(withJSONObject: object)
            return try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: json)
        }
        let decoded = try decode { _ in }
        #expect(decoded.keptRanges == [0..<100, 200..<300] && decoded.bytesKept == 200)
        let refused: [(String, (inout [String: Any]) -> Void)] = [
            ("mirrors", { $0["mirrors"] = [String]() }),
            ("mirrors", { $0["mirrors"] = ["file:///etc/passwd"] }),
            ("mirrors", { $0["mirrors"] = Array(repeating: "https://a.example/f", count: 257) }),
            ("destination", { $0["destination"] = "file:///tmp/../etc/passwd" }),
            ("partialFile", { $0["partialFile"] = "file:///etc/passwd" }),
            ("partialFile", { $0["partialFile"] = destination.absoluteString }),
            ("totalBytes", { $0["totalBytes"] = -1 }),
            ("totalBytes", { $0["integrity"] = ["length": 999] }),
            ("keptRanges", { $0["keptRanges"] = [[0, 100], [50, 150]] }),  // overlapping
            ("keptRanges", { $0["keptRanges"] = [[200, 300], [0, 100]] }),  // out of order
            ("keptRanges", { $0["keptRanges"] = [[0, 100], [100, 200]] }),  // touching: never made so
            ("keptRanges", { $0["keptRanges"] = [[-5, 10]] }),
            ("keptRanges", { $0["keptRanges"] = [[900, 1_001]] }),
            ("keptRanges", { $0["keptRanges"] = [[10, 10]] }),
            ("keptRanges", { $0.removeValue(forKey: "totalBytes") }),
            ("validator", { $0["validator"] = ["entityTag": ["_0": "\"v1\"\r\nX-Evil: 1"]] }),
            ("integrity", { $0["integrity"] = ["sha256": "not hex"] }),
        ]
        for (field, change) in refused {
            #expect(throws: DecodingError.self, "\(field)") { try decode(change) }
            do {
                _ = try decode(change)
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.codingPath.last?.stringValue == field)
            } catch {
                Issue.record("\(field): \(error)")
            }
        }
        // A range whose start is above its end: `Range` itself refuses it.
        #expect(throws: DecodingError.self) { try decode { $0["keptRanges"] = [[100, 0]] } }
        // The initializer holds to the same rules, and names the field.
        #expect(
            throws: DownloadError.invalidResumeData(
                field: "keptRanges",
                reason: "there are kept ranges but no totalBytes"
            )
        ) {
            try SegmentedDownloadResumeData(
                mirrors: [URL(string: "https://a.example/f")!],
                destination: destination,
                partialFile: partial,
                totalBytes: nil,
                validator: nil,
                keptRanges: [0..<1]
            )
        }
    }
}
