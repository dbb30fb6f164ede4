import Cancellable
import CancellableURLSession
import Foundation
import LoopbackHTTPServer
import PromiseCore

/// The error `promise` rejected with, or `nil` if it fulfilled.
func failure<T>(of promise: CancellablePromise<T>) async -> Error? {
    if case .failure(let error) = await promise.asPromise().asResult().async() { return error }
    return nil
}

/// A directory of one test's own: what is in it is exactly what its downloads left, hidden partial files included.
struct DownloadDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("downloads-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Where the tests download to: `file.bin` in the directory.
    var destination: URL { url.appendingPathComponent("file.bin") }

    /// The names of the files in the directory, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a suite of tests against the loopback server needs, made afresh for each test (swift-testing makes one
/// instance a test): a download directory, a session that delivers bytes as they arrive, and the servers
/// ``serve(_:)`` starts. All of them are stopped, invalidated and removed when the test ends.
class LoopbackSuite {
    let directory: DownloadDirectory
    /// The session the tests download with, unless one says otherwise.
    let session = URLSession.withProgressReporting(configuration: .ephemeral)
    /// The servers ``serve(_:)`` started.
    private(set) var servers: [LoopbackHTTPServer] = []

    init() throws {
        directory = try DownloadDirectory()
    }

    deinit {
        for server in servers { server.stop() }
        session.invalidateAndCancel()
        directory.remove()
    }

    /// Starts a loopback server answering with `route`, stopped when the test ends.
    func serve(
        _ route: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response
    ) throws -> LoopbackHTTPServer {
        let server = try LoopbackHTTPServer(route: route)
        servers.append(server)
        return server
    }
}

/// A session with a delegate of its own, not the library's: on every platform its transfers use completion handlers,
/// so a download's bytes arrive all at once, at the end (no live delivery).
func sessionWithoutLiveDelivery(configuration: URLSessionConfiguration = .ephemeral) -> URLSession {
    URLSession(configuration: configuration, delegate: SessionDelegate(), delegateQueue: nil)
}

private final class SessionDelegate: NSObject, URLSessionDelegate, Sendable {}
