import Foundation
import Hummingbird
import Logging
import NIOCore

/// A real HTTP server on 127.0.0.1 that serves one file from several "mirrors", each throttled to its own
/// speed, and records — on the server side — how many bytes each connection got and when its client left.
final class MirrorServer: @unchecked Sendable {
    // @unchecked Sendable: `stats` is only touched under `lock`.
    struct Stats: Sendable {
        var bytesSent = 0
        var finishedAt: Date?
        var clientClosedAt: Date?
    }

    let fileSize: Int
    let bytesPerSecond: [Int]
    private let lock = NSLock()
    private var stats: [Int: Stats] = [:]

    init(fileSize: Int, bytesPerSecond: [Int]) {
        self.fileSize = fileSize
        self.bytesPerSecond = bytesPerSecond
    }

    func stats(of mirror: Int) -> Stats {
        lock.lock()
        defer { lock.unlock() }
        return stats[mirror] ?? Stats()
    }

    private func update(_ mirror: Int, _ change: (inout Stats) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&stats[mirror, default: Stats()])
    }

    /// Starts the server on an ephemeral port and returns it once it is listening.
    func start() async throws -> (port: Int, task: Task<Void, Error>) {
        let router = Router()
        router.get("/mirror/:id/file.bin") { _, context -> Response in
            let mirror = try context.parameters.require("id", as: Int.self)
            guard self.bytesPerSecond.indices.contains(mirror) else { return Response(status: .notFound) }
            return Response(
                status: .ok,
                headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: self.fileSize) { writer in
                    try await self.stream(mirror: mirror, to: &writer)
                }
            )
        }
        let (port, listening) = AsyncStream<Int>.makeStream()
        // The example prints its own report; keep the server's log for real trouble.
        var logger = Logger(label: "MirrorRace.server")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "MirrorRace"),
            onServerRunning: { channel in listening.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        // No signal handling here: Ctrl-C belongs to the race (see `onInterrupt`), not to the server.
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = port.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0 else {
            task.cancel()
            throw CocoaError(.fileReadUnknown)
        }
        return (bound, task)
    }

    private func stream(mirror: Int, to writer: inout any ResponseBodyWriter) async throws {
        let chunkSize = 16_384
        let chunk = ByteBuffer(repeating: UInt8(ascii: "a") + UInt8(mirror % 26), count: chunkSize)
        let rate = Double(bytesPerSecond[mirror])
        let start = ContinuousClock.now
        var sent = 0
        do {
            while sent < fileSize {
                var piece = chunk
                let size = min(chunkSize, fileSize - sent)
                piece.moveWriterIndex(to: size)
                try await writer.write(piece)
                sent += size
                update(mirror) { $0.bytesSent = sent }
                // Throttle to this mirror's speed.
                let due = start + .seconds(Double(sent) / rate)
                try await Task.sleep(until: due, clock: .continuous)
            }
            try await writer.finish(nil)
            update(mirror) { $0.finishedAt = Date() }
        } catch {
            // A write to a connection the client closed fails: that is when the server saw it go.
            update(mirror) { $0.clientClosedAt = Date() }
            throw error
        }
    }
}
