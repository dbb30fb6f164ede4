public import Foundation
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
public final class MirrorServer: @unchecked Sendable {
    // @unchecked Sendable: `stats` and `released` are only touched under `lock`.
    public struct Stats: Sendable {
        /// Body bytes sent, over every request to this mirror.
        public var bytesSent = 0
        public var requests = 0
        /// Body bytes sent in the response to the latest request (not counting what an earlier response to this
        /// mirror, cancelled but not yet noticed, still wrote meanwhile).
        public var latestResponseBytes = 0
        public var finishedAt: Date?
        public var clientClosedAt: Date?
    }

    public let fileSize: Int
    public let bytesPerSecond: [Int]
    public let ignoresRanges: Bool
    public let changesFile: Bool
    /// Mirror → the byte at which its first response stops sending (and waits, connection open, until released).
    public let stallsAt: [Int: Int]
    /// Mirror → how many body bytes it sends in all before it goes down: its response then ends mid-body (the
    /// connection closes), and every later request is answered `503`.
    public let diesAfter: [Int: Int]
    private let lock = NSLock()
    private var stats: [Int: Stats] = [:]
    private var released: Set<Int> = []
    private var version = 1
    /// The file of `version`, made once.
    private var served: (version: Int, file: Data)?

    public init(
        fileSize: Int,
        bytesPerSecond: [Int],
        stallsAt: [Int: Int] = [:],
        diesAfter: [Int: Int] = [:],
        ignoresRanges: Bool = false,
        changesFile: Bool = false
    ) {
        self.fileSize = fileSize
        self.bytesPerSecond = bytesPerSecond
        self.stallsAt = stallsAt
        self.diesAfter = diesAfter
        self.ignoresRanges = ignoresRanges
        self.changesFile = changesFile
    }

    /// The file as the mirrors serve it now, and its `ETag`.
    public var current: (file: Data, entityTag: String) {
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

    public func stats(of mirror: Int) -> Stats {
        lock.lock()
        defer { lock.unlock() }
        return stats[mirror] ?? Stats()
    }

    /// Ends a stalled response: the server closes that connection. With `changesFile`, the file changes now.
    public func release(_ mirror: Int) {
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

    /// Starts the server on an ephemeral port of `host` (a loopback address) and returns it once it is listening.
    public func start(host: String = "127.0.0.1") async throws -> (port: Int, task: Task<Void, Error>) {
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
            configuration: .init(address: .hostname(host, port: 0), serverName: "MirrorRace"),
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

    /// The whole file (200), a range of it from a `Range: bytes=N-` or `bytes=N-M` whose `If-Range` matches (206),
    /// or 416 past the end; 503 once the mirror has gone down.
    private func respond(to request: Request, from mirror: Int) -> Response {
        let (file, entityTag) = current
        if isDown(mirror) { return Response(status: .serviceUnavailable) }
        var headers: HTTPFields = [.contentType: "application/octet-stream", .eTag: entityTag]
        if !ignoresRanges { headers[.acceptRanges] = "bytes" }
        var start = 0
        var end = file.count
        var status = HTTPResponse.Status.ok
        let condition = request.headers[.ifRange]
        if !ignoresRanges, let range = request.headers[.range], condition == nil || condition == entityTag,
            range.hasPrefix("bytes=")
        {
            let bounds = range.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int(bounds[0]), first >= 0,
                bounds[1].isEmpty || Int(bounds[1]).map({ $0 >= first }) == true
            else { return Response(status: .badRequest) }
            guard first < file.count else {
                headers[.contentRange] = "bytes */\(file.count)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            start = first
            end = min(file.count, Int(bounds[1]).map { $0 + 1 } ?? file.count)
            status = .partialContent
            headers[.contentRange] = "bytes \(first)-\(end - 1)/\(file.count)"
        }
        let request = countRequest(to: mirror)
        let stall = request == 1 ? stallsAt[mirror] : nil
        let (first, last) = (start, end)
        return Response(
            status: status,
            headers: headers,
            body: ResponseBody(contentLength: last - first) { writer in
                try await self.stream(
                    file,
                    mirror: mirror,
                    request: request,
                    from: first,
                    to: last,
                    stallingAt: stall,
                    to: &writer
                )
            }
        )
    }

    /// Whether `mirror` has sent all it sends before going down.
    private func isDown(_ mirror: Int) -> Bool {
        guard let limit = diesAfter[mirror] else { return false }
        return stats(of: mirror).bytesSent >= limit
    }

    private func stream(
        _ file: Data,
        mirror: Int,
        request: Int,
        from start: Int,
        to last: Int,
        stallingAt stall: Int?,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        let chunkSize = 16_384
        let rate = Double(bytesPerSecond[mirror])
        let began = ContinuousClock.now
        var offset = start
        do {
            while offset < last {
                if let stall, offset >= stall {
                    // A stalled mirror: nothing more, until the example has moved on.
                    while !isReleased(mirror) { try await Task.sleep(for: .milliseconds(20)) }
                    throw CancellationError()
                }
                // A mirror that goes down closes the connection mid-body.
                if isDown(mirror) { throw CancellationError() }
                let allowance = diesAfter[mirror].map { offset + max(1, $0 - stats(of: mirror).bytesSent) } ?? last
                let end = min(last, offset + chunkSize, stall ?? .max, allowance)
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
