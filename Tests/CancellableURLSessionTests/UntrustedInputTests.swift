import Cancellable
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resume data read back from disk, and the answers of servers, are hostile until validated: a download creates,
/// changes or deletes no file but its own partial file and its destination, whatever they say. Each test tampers
/// with one thing, as a broken disk, another program or an attacker would, and checks on disk that every other file
/// is as it was.
@Suite(.serialized) struct UntrustedInputTests {
    /// A folder holding the download's folder and files the download does not own; removed when the test lets go of
    /// it.
    final class Sandbox: Sendable {
        let root: URL

        deinit {
            try? FileManager.default.removeItem(at: root)
        }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("untrusted-\(UUID())")
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("someone else's".utf8).write(to: victim)
            try Data("inside a folder".utf8).write(to: folder.appendingPathComponent("child.txt"))
        }

        var downloads: URL { root.appendingPathComponent("downloads") }
        var destination: URL { downloads.appendingPathComponent("file.bin") }
        /// A file the download does not own.
        var victim: URL { root.appendingPathComponent("victim.txt") }
        /// A folder with a file in it, which the download does not own either.
        var folder: URL { root.appendingPathComponent("folder") }

        /// What is on disk under the root: each path, with a file's bytes, a link's target, or that it is a folder.
        func snapshot() throws -> [String: String] {
            var entries: [String: String] = [:]
            func visit(_ url: URL, _ relative: String) throws {
                let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
                switch attributes[.type] as? FileAttributeType {
                case .typeDirectory?:
                    entries[relative + "/"] = "folder"
                    for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
                        try visit(url.appendingPathComponent(name), relative + "/" + name)
                    }
                case .typeSymbolicLink?:
                    entries[relative] =
                        "link to " + (try FileManager.default.destinationOfSymbolicLink(atPath: url.path))
                case .typeRegular?:
                    entries[relative] = try fileContents(url).base64EncodedString()
                default:
                    entries[relative] = "\(attributes[.type] ?? "?")"
                }
            }
            try visit(root, "")
            return entries
        }

        func remove() {
            try? FileManager.default.removeItem(at: root)
        }
    }

    let sandbox: Sandbox
    let server: LoopbackHTTPServer
    let session = URLSession.withProgressReporting(configuration: .ephemeral)

    init() throws {
        sandbox = try Sandbox()
        server = try LoopbackHTTPServer { _ in
            .resource(.init(body: DownloadIntegrationTests.payload(1_000), entityTag: "\"v1\""))
        }
    }

    func cleanUp() {
        session.finishTasksAndInvalidate()
        server.stop()
        sandbox.remove()
    }

    /// Resume data as a paused download leaves it: 100 of 1,000 bytes in its partial file.
    func pausedDownload() throws -> DownloadResumeData {
        let partial = PartialFile.newURL(for: sandbox.destination)
        try DownloadIntegrationTests.payload(1_000).prefix(100).write(to: partial)
        return try DownloadResumeData(
            url: server.url("/file"),
            destination: sandbox.destination,
            partialFile: partial,
            bytesKept: 100,
            validator: .entityTag("\"v1\""),
            totalBytes: 1_000
        )
    }

    /// `data` encoded as JSON, with `field` replaced by `value` (`nil` removes it), decoded again.
    static func tampered(_ data: DownloadResumeData, _ field: String, _ value: Any?) throws -> DownloadResumeData {
        var object = try #require(
            JSONSerialization.jsonObject(with: JSONEncoder().encode(data)) as? [String: Any]
        )
        object[field] = value
        return try JSONDecoder().decode(
            DownloadResumeData.self,
            from: JSONSerialization.data(withJSONObject: object)
        )
    }

    /// `data` as JSON in the format from before resume data had a version (what 0eb7b5f wrote): `file:` URLs and the
    /// validator as Swift synthesized its coding; without integrity.
    static func unversionedObject(_ data: DownloadResumeData) -> [String: Any] {
        var object: [String: Any] = [
            "url": data.url.absoluteString,
            "destination": data.destination.absoluteString,
            "partialFile": data.partialFile.absoluteString,
            "bytesKept": data.bytesKept,
        ]
        object["totalBytes"] = data.totalBytes
        switch data.validator {
        case .entityTag(let tag)?: object["validator"] = ["entityTag": ["_0": tag]]
        case .lastModified(let date)?: object["validator"] = ["lastModified": ["_0": date]]
        case nil: break
        }
        return object
    }

    // MARK: Decoding refuses what no download produces

    /// A field of resume data and a value for it that no download produces.
    struct Tampering: Sendable, CustomTestStringConvertible {
        let field: String
        let value: @Sendable (Sandbox) -> Any
        let what: String
        var testDescription: String { "\(field): \(what)" }
    }

    static let tamperings: [Tampering] = [
        Tampering(field: "partialFile", value: { $0.victim.absoluteString }, what: "another file"),
        Tampering(field: "partialFile", value: { $0.folder.absoluteString }, what: "a folder"),
        Tampering(
            field: "partialFile",
            value: { $0.downloads.appendingPathComponent("../victim.txt").absoluteString },
            what: "a path with .. out of the destination's folder"
        ),
        Tampering(
            field: "partialFile",
            value: { $0.downloads.appendingPathComponent(".file.bin.not-a-uuid.partial").absoluteString },
            what: "a name the library does not give"
        ),
        Tampering(
            field: "partialFile",
            value: { $0.root.appendingPathComponent(".file.bin.\(UUID().uuidString).partial").absoluteString },
            what: "the right name in another folder"
        ),
        Tampering(field: "destination", value: { $0.folder.appendingPathComponent("..").absoluteString }, what: ".."),
        Tampering(field: "destination", value: { _ in "https://example.com/file.bin" }, what: "not a file URL"),
        Tampering(field: "url", value: { $0.victim.absoluteString }, what: "a file: URL"),
        Tampering(field: "url", value: { _ in "ftp://example.com/file.bin" }, what: "not HTTP"),
        Tampering(field: "bytesKept", value: { _ in Int64.min }, what: "Int64.min"),
        Tampering(field: "bytesKept", value: { _ in -1 }, what: "negative"),
        Tampering(field: "bytesKept", value: { _ in 1_001 }, what: "more than the file"),
        Tampering(field: "totalBytes", value: { _ in -5 }, what: "negative"),
        Tampering(field: "validator", value: { _ in ["entityTag": ["_0": ""]] }, what: "empty"),
        Tampering(
            field: "validator",
            value: { _ in ["entityTag": ["_0": "\"v1\"\r\nX-Injected: 1"]] },
            what: "CR LF and a header"
        ),
        Tampering(field: "validator", value: { _ in ["entityTag": ["_0": "v1"]] }, what: "an unquoted tag"),
        Tampering(field: "validator", value: { _ in ["entityTag": ["_0": "W/\"v1\""]] }, what: "a weak tag"),
        Tampering(field: "validator", value: { _ in ["entityTag": ["_0": "\"v\u{0}1\""]] }, what: "a NUL"),
        Tampering(field: "validator", value: { _ in ["lastModified": ["_0": "yesterday"]] }, what: "not a date"),
        Tampering(
            field: "validator",
            value: { _ in ["lastModified": ["_0": "Sun, 06 Nov 1994 08:49:37 GMT\n"]] },
            what: "a date and LF"
        ),
        Tampering(field: "integrity", value: { _ in ["length": -1] }, what: "a negative length"),
        Tampering(
            field: "integrity",
            value: { _ in ["sha256": String(repeating: "a", count: 61) + "Ａ"] },
            what: "a fullwidth hex digit"
        ),
    ]

    @Test(arguments: tamperings)
    func resumeDataNoDownloadProducesIsRefusedWhenDecodedNamingTheField(_ tampering: Tampering) async throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        let before = try sandbox.snapshot()
        do {
            let decoded = try Self.tampered(saved, tampering.field, tampering.value(sandbox))
            Issue.record("decoded: \(decoded)")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.codingPath.last?.stringValue == tampering.field, "\(context)")
        }
        #expect(try sandbox.snapshot() == before)
        #expect(server.connections.isEmpty)
    }

    @Test(arguments: tamperings)
    func unversionedResumeDataNoDownloadProducesIsRefusedAlikeNamingTheField(_ tampering: Tampering) throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        var object = Self.unversionedObject(saved)
        let untouched = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(DownloadResumeData.self, from: untouched) == saved)
        object[tampering.field] = tampering.value(sandbox)
        do {
            let json = try JSONSerialization.data(withJSONObject: object)
            let decoded = try JSONDecoder().decode(DownloadResumeData.self, from: json)
            Issue.record("decoded: \(decoded)")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.codingPath.last?.stringValue == tampering.field, "\(context)")
        }
    }

    @Test func thePublicInitializerRefusesWhatDecodingRefuses() throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        func make(
            partialFile: URL? = nil,
            bytesKept: Int64 = 100,
            validator: DownloadResumeData.Validator? = .entityTag("\"v1\""),
            totalBytes: Int64? = 1_000
        ) throws -> DownloadResumeData {
            try DownloadResumeData(
                url: saved.url,
                destination: saved.destination,
                partialFile: partialFile ?? saved.partialFile,
                bytesKept: bytesKept,
                validator: validator,
                totalBytes: totalBytes
            )
        }
        func field(of attempt: () throws -> DownloadResumeData) -> String? {
            do {
                _ = try attempt()
                return nil
            } catch DownloadError.invalidResumeData(let field, _) {
                return field
            } catch {
                return "\(error)"
            }
        }
        #expect(field { try make(partialFile: sandbox.victim) } == "partialFile")
        #expect(field { try make(bytesKept: -1) } == "bytesKept")
        #expect(field { try make(bytesKept: 2_000) } == "bytesKept")
        #expect(field { try make(totalBytes: -1) } == "totalBytes")
        #expect(field { try make(validator: .entityTag("\"a\"\r\nX: y")) } == "validator")
        #expect(field { try make(validator: .lastModified("")) } == "validator")
        #expect(field { try make() } == nil, "the untouched values are accepted")
    }

    @Test func resumeDataEncodesAndDecodesToItself() throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        let dated = try DownloadResumeData(
            url: saved.url,
            destination: saved.destination,
            partialFile: saved.partialFile,
            bytesKept: 0,
            validator: .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"),
            totalBytes: nil,
            integrity: DownloadIntegrity(length: 1_000, sha256: String(repeating: "aB", count: 32))
        )
        for data in [saved, dated] {
            #expect(try JSONDecoder().decode(DownloadResumeData.self, from: JSONEncoder().encode(data)) == data)
        }
    }

    // MARK: The partial file's path names something else

    /// What is at the partial file's own path instead of the library's file.
    enum Impostor: String, CaseIterable, Sendable {
        case symbolicLinkToAnotherFile, folderWithAFileInIt, hardLinkToAnotherFile, fifo

        func plant(at path: URL, in sandbox: Sandbox) throws {
            try? FileManager.default.removeItem(at: path)
            switch self {
            case .symbolicLinkToAnotherFile:
                try FileManager.default.createSymbolicLink(at: path, withDestinationURL: sandbox.victim)
            case .folderWithAFileInIt:
                try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
                try Data("mine".utf8).write(to: path.appendingPathComponent("inside.txt"))
            case .hardLinkToAnotherFile:
                try FileManager.default.linkItem(at: sandbox.victim, to: path)
            case .fifo:
                guard mkfifo(path.path, 0o644) == 0 else { throw POSIXError(.EIO) }
            }
        }
    }

    @Test(arguments: Impostor.allCases, [Int64(1), 100])
    func somethingElseAtThePartialFilesPathIsRefusedAndLeftAsItIs(_ impostor: Impostor, bytesKept: Int64) async throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        let resumable = try DownloadResumeData(
            url: saved.url,
            destination: saved.destination,
            partialFile: saved.partialFile,
            bytesKept: bytesKept,
            validator: saved.validator,
            totalBytes: saved.totalBytes
        )
        try impostor.plant(at: saved.partialFile, in: sandbox)
        let before = try sandbox.snapshot()

        let resumed = session.resumeDownload(resumable)
        let error = await failure(of: resumed.promise)
        #expect(error as? DownloadError == .partialFileNotOwned(saved.partialFile), "\(error as Any)")
        #expect(await resumed.resumeData.async() == nil)
        #expect(try sandbox.snapshot() == before, "nothing was opened for writing, truncated, moved or removed")
        #expect(server.connections.isEmpty, "refused before any request")

        // discard() removes only a file at that path — a link itself, never what it points to — and never a folder.
        resumable.discard()
        var expected = before
        if impostor != .folderWithAFileInIt {
            expected.removeValue(forKey: "/downloads/" + saved.partialFile.lastPathComponent)
        }
        #expect(try sandbox.snapshot() == expected)
        #expect(try fileContents(sandbox.victim) == Data("someone else's".utf8))
    }

    @Test func discardRemovesThePartialFileAndNothingElse() throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        var expected = try sandbox.snapshot()
        expected.removeValue(forKey: "/downloads/" + saved.partialFile.lastPathComponent)
        saved.discard()
        #expect(try sandbox.snapshot() == expected)
    }

    // MARK: The app says where the download goes

    /// iOS moves an app's container when the app is updated: resume data saved before names a folder that is gone.
    /// Resumed to the destination's new place, the download finds its partial file there and continues it.
    @Test func resumeDataWhoseFolderMovedContinuesInTheNewPlace() async throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        let moved = sandbox.root.appendingPathComponent("moved")
        try FileManager.default.moveItem(at: sandbox.downloads, to: moved)
        let destination = moved.appendingPathComponent("file.bin")

        let stale = await failure(of: session.resumeDownload(saved).promise)
        #expect((stale as? CocoaError)?.code == .fileNoSuchFile, "\(stale as Any)")

        let resumed = session.resumeDownload(saved, to: destination)
        let (url, _) = try await resumed.promise.async()
        #expect(url.standardizedFileURL.path == destination.standardizedFileURL.path)
        #expect(try fileContents(destination) == DownloadIntegrationTests.payload(1_000))
        #expect(server.connections.last?.range == "bytes=100-", "the bytes kept were continued, not fetched again")
        #expect(try FileManager.default.contentsOfDirectory(atPath: moved.path) == ["file.bin"])
    }

    /// Resume data that names another destination (planted by another program) writes only where the app says: the
    /// partial file is looked for next to the app's destination, and nothing else is touched.
    @Test func resumeDataNamingAnotherDestinationWritesOnlyWhereTheAppSays() async throws {
        defer { cleanUp() }
        _ = try pausedDownload()
        let planted = try DownloadResumeData(
            url: server.url("/file"),
            destination: sandbox.victim,
            partialFile: PartialFile.newURL(for: sandbox.victim),
            bytesKept: 0,
            validator: nil,
            totalBytes: nil
        )
        var expected = try sandbox.snapshot()

        let (url, _) = try await session.resumeDownload(planted, to: sandbox.destination).promise.async()
        #expect(url.standardizedFileURL.path == sandbox.destination.standardizedFileURL.path)
        expected["/downloads/file.bin"] = DownloadIntegrationTests.payload(1_000).base64EncodedString()
        #expect(try sandbox.snapshot() == expected, "only the app's destination was written")
        #expect(try fileContents(sandbox.victim) == Data("someone else's".utf8))
    }

    @Test func relocatedKeepsThePartialFilesIdAndRefusesADestinationThatIsNotAPlainPath() throws {
        defer { cleanUp() }
        let saved = try pausedDownload()
        let elsewhere = sandbox.folder.appendingPathComponent("other.bin")
        let relocated = try saved.relocated(to: elsewhere)
        #expect(relocated.destination == elsewhere)
        #expect(relocated.partialFile.deletingLastPathComponent().path == sandbox.folder.path)
        let id = saved.partialFile.lastPathComponent.dropFirst(".file.bin.".count)
        #expect(relocated.partialFile.lastPathComponent == ".other.bin." + id)
        #expect(relocated.bytesKept == saved.bytesKept && relocated.validator == saved.validator)
        for bad in [sandbox.folder.appendingPathComponent("../x.bin"), URL(string: "https://example.com/x.bin")!] {
            do {
                _ = try saved.relocated(to: bad)
                Issue.record("relocated to \(bad)")
            } catch DownloadError.invalidResumeData(let field, _) {
                #expect(field == "destination")
            }
        }
    }

    // MARK: Destinations and integrity refused before any request

    @Test func aDestinationInAFolderThatDoesNotExistSaysSo() async throws {
        defer { cleanUp() }
        let destination = sandbox.root.appendingPathComponent("missing/file.bin")
        let error = await failure(
            of: session.cancellableDownload(for: URLRequest(url: server.url("/file")), to: destination)
        )
        let cocoa = try #require(error as? CocoaError, "\(error as Any)")
        #expect(cocoa.code == .fileNoSuchFile)
        #expect(cocoa.userInfo[NSFilePathErrorKey] as? String == sandbox.root.appendingPathComponent("missing").path)
        #expect(server.connections.isEmpty)
    }

    @Test func aDestinationWithDotDotIsRefused() async throws {
        defer { cleanUp() }
        let destination = sandbox.downloads.appendingPathComponent("../file.bin")
        let error = await failure(
            of: session.cancellableDownload(for: URLRequest(url: server.url("/file")), to: destination)
        )
        #expect((error as? CocoaError)?.code == .fileWriteInvalidFileName, "\(error as Any)")
        #expect(server.connections.isEmpty)
    }

    @Test func aDigestWithANonASCIIHexDigitIsRefusedBeforeTheRequest() async throws {
        defer { cleanUp() }
        let digest = String(repeating: "a", count: 61) + "Ａ"  // 64 UTF-8 bytes; Character.isHexDigit is true for Ａ
        #expect(digest.utf8.count == 64)
        let download = session.cancellableDownload(
            for: URLRequest(url: server.url("/file")),
            to: sandbox.destination,
            verifying: DownloadIntegrity(sha256: digest)
        )
        let error = await failure(of: download)
        guard case .invalidExpectation? = error as? DownloadIntegrityError else {
            Issue.record("expected invalidExpectation, got \(error as Any)")
            return
        }
        #expect(server.connections.isEmpty)
    }

    // MARK: Validators from servers

    @Test(arguments: [
        ("\"v1\"", DownloadResumeData.Validator?.some(.entityTag("\"v1\""))),
        ("\"\"", .some(.entityTag("\"\""))),
        ("v1", nil),
        ("W/\"v1\"", nil),
        ("\"v\"1\"", nil),
        ("\"v\u{7F}1\"", nil),
        ("\"v\u{1}1\"", nil),
    ])
    func onlyAWellFormedStrongEntityTagIsTakenAsAValidator(tag: String, validator: DownloadResumeData.Validator?) {
        let response = HTTPURLResponse(
            url: URL(string: "http://mirror.test/file")!,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: ["ETag": tag]
        )!
        #expect(response.strongValidator == validator, "\(tag.debugDescription)")
    }

    // MARK: Lying servers

    @Test(timeLimit(minutes: 1))
    func aLengthClaimedAndNotKeptDoesNotStopTheNextHonestResume() async throws {
        defer { cleanUp() }
        let body = DownloadIntegrationTests.payload(300_000)
        let lying = Shared(true)
        let server = try LoopbackHTTPServer { _ in
            var resource = LoopbackHTTPServer.Resource(body: body, entityTag: "\"v1\"")
            if lying.current {
                resource.claimedLength = 1_000_000_000_000_000  // 10^15 bytes
                resource.interruption = .close(after: 65_536)
            }
            return .resource(resource)
        }
        defer { server.stop() }
        let first = session.resumableDownload(from: server.url("/file"), to: sandbox.destination)
        #expect(await failure(of: first.promise) is URLError)
        let saved = try #require(await first.resumeData.async())
        #expect(saved.bytesKept == 65_536)
        #expect(saved.totalBytes == nil, "the claim the body did not keep is not recorded")

        lying.withLock { $0 = false }
        let (url, _) = try await session.resumeDownload(saved).promise.async()
        #expect(try fileContents(url) == body)
        #expect(server.connections.last?.range == "bytes=65536-", "the bytes kept were continued")
    }

    @Test(timeLimit(minutes: 1))
    func aRangeWhoseBodyRunsPastItStopsThereKeepingTheBytesFromBefore() async throws {
        defer { cleanUp() }
        let body = DownloadIntegrationTests.payload(300_000)
        let overrunning = Shared(true)
        let server = try LoopbackHTTPServer { _ in
            var resource = LoopbackHTTPServer.Resource(body: body, entityTag: "\"v1\"")
            resource.overrun = overrunning.current ? 200_000 : 0
            return .resource(resource)
        }
        defer { server.stop() }
        let partial = PartialFile.newURL(for: sandbox.destination)
        try body.prefix(100_000).write(to: partial)
        let saved = try DownloadResumeData(
            url: server.url("/file"),
            destination: sandbox.destination,
            partialFile: partial,
            bytesKept: 100_000,
            validator: .entityTag("\"v1\""),
            totalBytes: 300_000
        )

        let broken = session.resumeDownload(saved)
        let error = await failure(of: broken.promise)
        #expect(error as? DownloadError == .bodyLongerThanAnnounced(totalBytes: 300_000), "\(error as Any)")
        let kept = try #require(await broken.resumeData.async(), "the bytes from before the answer are kept")
        #expect(kept.bytesKept == 100_000)
        #expect(try PartialFile.size(of: partial) <= 300_000, "nothing was written past the file's length")
        #expect(!FileManager.default.fileExists(atPath: sandbox.destination.path))

        overrunning.withLock { $0 = false }
        let (url, _) = try await session.resumeDownload(kept).promise.async()
        #expect(try fileContents(url) == body)
    }
}
