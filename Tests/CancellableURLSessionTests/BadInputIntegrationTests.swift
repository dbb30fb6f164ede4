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

/// Bad input and failing servers give clear errors, never a crash, a hang or a half-written file.
@Suite(.serialized) struct BadInputIntegrationTests {
    typealias Mode = DownloadIntegrationTests.Mode

    @Test(arguments: Mode.allCases)
    func anUnreachablePortRejectsWithAURLError(mode: Mode) async throws {
        // Bind a port, then close the server so that nothing listens there.
        let server = try LoopbackHTTPServer { _ in .stall }
        let url = server.url("/gone")
        server.stop()
        let error = await failure(of: DownloadIntegrationTests().makeSession(mode).cancellableData(from: url))
        let urlError = try #require(error as? URLError, "got \(String(describing: error))")
        #expect([.cannotConnectToHost, .networkConnectionLost, .cannotFindHost].contains(urlError.code))
    }

    @Test(arguments: Mode.allCases, [404, 500])
    func errorStatusesRejectWithATypedErrorCarryingStatusAndBody(mode: Mode, status: Int) async throws {
        let server = try LoopbackHTTPServer { _ in .status(status, body: Data("nope \(status)".utf8)) }
        defer { server.stop() }
        let error = await failure(
            of: DownloadIntegrationTests().makeSession(mode).cancellableData(from: server.url("/x"))
        )
        let statusError = try #require(error as? HTTPStatusError, "got \(String(describing: error))")
        #expect(statusError.statusCode == status)
        #expect(String(decoding: statusError.body, as: UTF8.self) == "nope \(status)")
        #expect(!error!.isCancelled)
    }

    /// With an empty error body too: reading an empty file leaks on Linux's Foundation, which the AddressSanitizer
    /// run reports if the library reads it as `Data(contentsOf:)` does.
    @Test(arguments: Mode.allCases, ["missing", ""])
    func aDownloadWithAnErrorStatusLeavesNoFile(mode: Mode, body: String) async throws {
        let server = try LoopbackHTTPServer { _ in .status(404, body: Data(body.utf8)) }
        defer { server.stop() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID()).bin")
        let request = URLRequest(url: server.url("/missing"))
        let reports = Locked<[TransferProgress]>([])
        let download = DownloadIntegrationTests().makeSession(mode).cancellableDownload(for: request, to: destination) {
            progress in reports.withLock { $0.append(progress) }
        }
        let error = await failure(of: download)
        #expect((error as? HTTPStatusError)?.statusCode == 404)
        #expect((error as? HTTPStatusError)?.body == Data(body.utf8))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // The error's body is not the file: no byte of it counts as the download's progress. (With live delivery the
        // download reports — that it is connecting — so the check is not vacuous there.)
        let seen = reports.withLock { $0 }
        #expect(seen.allSatisfy { $0.bytesTransferred == 0 }, "\(seen)")
        if mode != .ownDelegate { #expect(!seen.isEmpty, "a live download reports at least that it is connecting") }
    }

    @Test(arguments: Mode.allCases)
    func aServerThatClosesMidBodyRejects(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .closeMidBody(contentLength: 100_000, sending: 10_000) }
        defer { server.stop() }
        let error = await failure(
            of: DownloadIntegrationTests().makeSession(mode).cancellableData(from: server.url("/cut"))
        )
        #expect(error != nil, "a truncated body must not fulfill")
        #expect(error?.isCancelled == false)
    }

    @Test(arguments: Mode.allCases, ["ftp://127.0.0.1/file", "http:///no-host", "relative/path"])
    func anInvalidURLRejects(mode: Mode, text: String) async throws {
        let url = try #require(URL(string: text))
        let error = await failure(of: DownloadIntegrationTests().makeSession(mode).cancellableData(from: url))
        #expect(error is URLError, "got \(String(describing: error))")
    }

    @Test(arguments: Mode.allCases)
    func aDestinationThatCannotBeWrittenRejectsBeforeAnyRequest(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .body(Data(count: 10)) }
        defer { server.stop() }
        let destination = URL(fileURLWithPath: "/nonexistent-directory-\(UUID())/file.bin")
        let download = DownloadIntegrationTests().makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/x")), to: destination)
        #expect(download.isRejected, "rejected at once")
        let error = await failure(of: download)
        #expect(error != nil && error?.isCancelled == false)
        #expect(server.connections.isEmpty, "nothing was sent")
    }

    @Test(arguments: Mode.allCases)
    func aCancelledDownloadLeavesNoFile(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in
            .body(DownloadIntegrationTests.payload(4_000_000), chunkSize: 16_384, bytesPerSecond: 1_000_000)
        }
        defer { server.stop() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("cancelled-\(UUID()).bin")
        let download = DownloadIntegrationTests().makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/big")), to: destination)
        #expect(await server.waitUntil { ($0.first?.bytesSent ?? 0) > 50_000 })
        download.cancel()
        #expect(await server.waitUntil(timeout: 5) { $0.first?.clientClosedAt != nil })
        // The file is removed when the task reports its cancellation; wait for that on the server's clock.
        #expect(await server.waitUntil(timeout: 5) { _ in !FileManager.default.fileExists(atPath: destination.path) })
    }

    @Test(arguments: Mode.allCases)
    func aFileAtTheDestinationSurvivesAFailedDownload(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .status(404, body: Data("not here".utf8)) }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("report.pdf")
        try Data("the old report".utf8).write(to: destination)
        let download = DownloadIntegrationTests().makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/report.pdf")), to: destination)
        #expect(await failure(of: download) is HTTPStatusError)
        #expect(try fileContents(destination) == Data("the old report".utf8))
        #expect(try directory.contents() == ["report.pdf"], "no partial file is left")
    }

    @Test(arguments: Mode.allCases)
    func aFileAtTheDestinationSurvivesACancelledDownload(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in
            .body(DownloadIntegrationTests.payload(4_000_000), chunkSize: 16_384, bytesPerSecond: 1_000_000)
        }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("big.bin")
        try Data("the old file".utf8).write(to: destination)
        let download = DownloadIntegrationTests().makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/big")), to: destination)
        #expect(await server.waitUntil { ($0.first?.bytesSent ?? 0) > 50_000 })
        download.cancel()
        // The partial file is removed when the task reports its cancellation; wait for that.
        let cleanedUp = await server.waitUntil(timeout: 5) { _ in
            (try? directory.contents()) == ["big.bin"]
        }
        #expect(cleanedUp)
        #expect(try fileContents(destination) == Data("the old file".utf8))
    }

    @Test(arguments: Mode.allCases)
    func aSuccessfulDownloadReplacesTheFileAtTheDestination(mode: Mode) async throws {
        let body = DownloadIntegrationTests.payload(200_000)
        let server = try LoopbackHTTPServer { _ in .body(body) }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("data.bin")
        try Data("the old file, longer than nothing".utf8).write(to: destination)
        let (url, _) = try await DownloadIntegrationTests().makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/data.bin")), to: destination)
            .async()
        #expect(url == destination)
        #expect(try fileContents(destination) == body)
        #expect(try directory.contents() == ["data.bin"], "no partial file is left")
    }

    @Test(arguments: Mode.allCases)
    func aDirectoryAsTheDestinationRejectsBeforeAnyRequest(mode: Mode) async throws {
        let server = try LoopbackHTTPServer { _ in .body(Data(count: 10)) }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let download = DownloadIntegrationTests().makeSession(mode)
            .cancellableDownload(for: URLRequest(url: server.url("/x")), to: directory.url)
        #expect(download.isRejected, "rejected at once")
        #expect(server.connections.isEmpty, "nothing was sent")
        let entries = try directory.contents()
        #expect(entries.isEmpty, "no partial file was made")
    }
}
