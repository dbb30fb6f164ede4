import Cancellable
import Foundation
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

    /// Whether the directory is empty within `timeout` seconds: for what a cancellation removes on the cancelling
    /// thread, just after the promise has rejected.
    func waitUntilEmpty(timeout: TimeInterval = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while (try? contents())?.isEmpty != true {
            guard Date() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session with a delegate of its own, not the library's: on every platform its transfers use completion handlers,
/// so a download's bytes arrive all at once, at the end (no live delivery).
func sessionWithoutLiveDelivery() -> URLSession {
    URLSession(configuration: .ephemeral, delegate: SessionDelegate(), delegateQueue: nil)
}

private final class SessionDelegate: NSObject, URLSessionDelegate, Sendable {}
