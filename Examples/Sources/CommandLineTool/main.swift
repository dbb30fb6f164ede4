import Cancellable
import CancellableURLSession
import Foundation
import MirrorServer
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A command-line tool in Swift 6, as the article "Using PromiseCore in Swift 6 apps" shows it ("Command-line
// tools"): its top-level code runs on the main actor, so every handler written here without `on:` runs on the main
// queue. It awaits its promises — never `wait()` here, which would block the main queue those handlers need — and
// exits 0 once the download is in place. CI runs it.

// A local server, so that the tool has something to download: one 4 MiB file at 8 MiB/s.
let server = MirrorServer(fileSize: 4 * 1_048_576, bytesPerSecond: [8 * 1_048_576])
let (port, serverTask) = try await server.start()
defer { serverTask.cancel() }
let url = URL(string: "http://127.0.0.1:\(port)/mirror/0/file.bin")!
let destination = FileManager.default.temporaryDirectory.appendingPathComponent("command-line-tool-\(UUID()).bin")
defer { try? FileManager.default.removeItem(at: destination) }

// The article's recipe, as printed there.
let session = URLSession.withProgressReporting()
let bytes = try await session.cancellableDownload(from: url, to: destination)
    .map { file, _ in try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0 }
    .timeout(seconds: 60)
    .async()
print("Downloaded \(bytes) bytes to \(destination.lastPathComponent)")
session.finishTasksAndInvalidate()
