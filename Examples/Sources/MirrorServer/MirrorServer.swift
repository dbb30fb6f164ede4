import Foundation
import Hummingbird
import Logging
import NIOCore

/// A real HTTP server on 127.0.0.1 that serves one file from several "mirrors", each throttled to its own
/// speed, and records — on the server side — how many bytes each connection got and when its client left.
///
/// Every mirror serves the same bytes with the same `ETag`, and honours `Range` and `If-Range` (206 with
/// `Content-Range`, 416 past the end), as real mirrors do: a download paused on one can continue on another.
/// Two switches show what a resume does when it cannot continue: `ignoresRanges` (every answer is 200 with the
/// whole file) and `changesFile` (a new version of the file, with a new `ETag`, once a stalled mirror is released).
final class MirrorServer: @unchecked Sendable {
    // @unchecked Sendable: `stats` and `released` are only touched under `lock`.
    struct Stats: Sendable {
        /// Body bytes sent, over every request to this mirror.
        var bytesSent = 0
        var requests = 0
        /// Body bytes sent in the response to the latest request (not counting what an earlier response to this
        /// mirror, cancelled but not yet noticed, still wrote meanwhile).
        var latestResponseBytes = 0
        var finishedAt: Date?
        var clientClosedAt: Date?
    }

    let fileSize: Int
    let bytesPerSecond: [Int]
    let ignoresRanges: Bool
    let changesFile: Bool
    /// Mirror → the byte at which its first response stops sending (and waits, connection open, until released).
    let stallsAt: [Int: Int]
    private let lock = NSLock()
    private var stats: [Int: Stats] = [:]
    private var released: Set<Int> = []
    private var version = 1
    /// The file of `version`, made once.
    private var served: (version: Int, file: Data)?

    init(
        fileSize: Int,
        bytesPerSecond: [Int],
        stallsAt: [Int: Int] = [:],
        ignoresRanges: Bool = false,
        changesFile: Bool = false
    ) {
        self.fileSize = fileSize
        self.bytesPerSecond = bytesPerSecond
        self.stallsAt = stallsAt
        self.ignoresRanges = ignoresRanges
        self.changesFile = changesFile
    }

    /// The file as the mirrors serve it now, and its `ETag`.
    var current: (file: Data, entityTag: String) {
        lock.lock()
        defer { lock.unlock() }
        if served?.version != version {
            let shift = UInt8(truncatingIfNeeded: version - 1)
            let block = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) &+ shift })
            var file = Data(capacity: fileSize)
            while file.count < fileSize { file.append(block.prefix(fileSize - file.count)) }
            served = (version, file)
        }
        return (served!.file, "\"mirror-race-\(fileSize)-v\(version)\"")
    }

    func stats(of mirror: Int) -> Stats {
        lock.lock()
        defer { lock.unlock() }
        return stats[mirror] ?? Stats()
    }

    /// Ends a stalled response: the server closes that connection. With `changesFile`, the file changes now.
    func release(_ mirror: Int) {
        lock.lock()
        if released.insert(mirror).inserted && changesFile { version += 1 }
        lock.unlock()
    }

    private func isReleased(_ mirror: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return released.contains(mirror)
    }

    /// Counts a request to `mirror`; returns how many it has had, this one included.
    private func countRequest(to mirror: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        stats[mirror, default: Stats()].requests += 1
        stats[mirror]!.latestResponseBytes = 0
        return stats[mirror]!.requests
    }

    private func update(_ mirror: Int, _ change: (inout Stats) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&stats[mirror, default: Stats()])
    }

    /// Starts the server on an ephemeral port and returns it once it is listening.
    func start() async throws -> (port: Int, task: Task<Void, Error>) {
        let router = Router()
        router.get("/mirror/:id/file.bin") { request, context -> Response in
            let mirror = try context.parameters.require("id", as: Int.self)
            guard self.bytesPerSecond.indices.contains(mirror) else { return Response(status: .notFound) }
            return self.respond(to: request, from: mirror)
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

    /// The whole file (200), the rest of it from a `Range: bytes=N-` whose `If-Range` matches (206), or 416 past
    /// the end.
    private func respond(to request: Request, from mirror: Int) -> Response {
        let (file, entityTag) = current
        var headers: HTTPFields = [.contentType: "application/octet-stream", .eTag: entityTag]
        if !ignoresRanges { headers[.acceptRanges] = "bytes" }
        var start = 0
        var status = HTTPResponse.Status.ok
        let condition = request.headers[.ifRange]
        if !ignoresRanges, let range = request.headers[.range], condition == nil || condition == entityTag,
            range.hasPrefix("bytes="), range.hasSuffix("-"), let first = Int(range.dropFirst(6).dropLast())
        {
            guard first < file.count else {
                headers[.contentRange] = "bytes */\(file.count)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            start = first
            status = .partialContent
            headers[.contentRange] = "bytes \(first)-\(file.count - 1)/\(file.count)"
        }
        let request = countRequest(to: mirror)
        let stall = request == 1 ? stallsAt[mirror] : nil
        let first = start
        return Response(
            status: status,
            headers: headers,
            body: ResponseBody(contentLength: file.count - first) { writer in
                try await self.stream(
                    file,
                    mirror: mirror,
                    request: request,
                    from: first,
                    stallingAt: stall,
                    to: &writer
                )
            }
        )
    }

    private func stream(
        _ file: Data,
        mirror: Int,
        request: Int,
        from start: Int,
        stallingAt stall: Int?,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        let chunkSize = 16_384
        let rate = Double(bytesPerSecond[mirror])
        let began = ContinuousClock.now
        var offset = start
        do {
            while offset < file.count {
                if let stall, offset >= stall {
                    // A stalled mirror: nothing more, until the example has moved on.
                    while !isReleased(mirror) { try await Task.sleep(for: .milliseconds(20)) }
                    throw CancellationError()
                }
                let end = min(file.count, offset + chunkSize, stall ?? .max)
                try await writer.write(ByteBuffer(bytes: file[offset..<end]))
                update(mirror) {
                    $0.bytesSent += end - offset
                    if $0.requests == request { $0.latestResponseBytes += end - offset }
                }
                offset = end
                // Throttle to this mirror's speed.
                let due = began + .seconds(Double(offset - start) / rate)
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
