package import Foundation
import PromiseTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Darwin)
import Darwin

private func makeStreamSocket() -> Int32 { Darwin.socket(AF_INET, SOCK_STREAM, 0) }
private let sendFlags: Int32 = 0
#elseif canImport(Glibc)
import Glibc

private func makeStreamSocket() -> Int32 { Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
private let sendFlags = Int32(MSG_NOSIGNAL)
#endif

/// The IPv4 address of `port` on 127.0.0.1; port 0 lets `bind` pick a free one.
private func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// A small HTTP/1.1 server on 127.0.0.1 for integration tests: real sockets, no mocks.
///
/// Each connection is served on its own thread. The server records, per connection, how many body bytes it
/// sent and when it saw the client go away — measured on the server side, so a test can prove that
/// cancelling a download closes the connection and stops the transfer.
package final class LoopbackHTTPServer: @unchecked Sendable {
    // @unchecked Sendable: mutable state is behind `lock`; the listening socket is used by the accept loop only,
    // and closed by `stop()` once that loop has returned.

    /// What the server does with a request.
    package enum Response: Sendable {
        /// 200 with `body`, sent in `chunkSize` pieces at most `bytesPerSecond` (unthrottled if `nil`).
        case body(Data, chunkSize: Int = 16_384, bytesPerSecond: Int? = nil)
        /// Any status with a small body.
        case status(Int, body: Data)
        /// Any status with these header fields (`Name: value` lines) and no body.
        case statusWithFields(Int, fields: [String])
        /// Announces `contentLength` bytes, sends `sending` of them, then closes the connection.
        case closeMidBody(contentLength: Int, sending: Int)
        /// Reads the request and never answers, until the client goes away.
        case stall
        /// Reads the request and closes the connection without answering.
        case closeBeforeHeaders
        /// Reads the request and resets the connection (a TCP RST) without answering.
        case resetBeforeHeaders
        /// `302 Found` to `path` on this server.
        case redirect(to: String)
        /// Echoes the request body back with 200.
        case echo
        /// A file with validators, answering `Range` and `If-Range` as an HTTP server does (see ``Resource``).
        case resource(Resource)
    }

    /// A file served with an `ETag`, a `Last-Modified` and a `Date`, which honours single byte ranges (`206` with
    /// `Content-Range`, `416` past the end) unless told to ignore them, and honours `If-Range`.
    package struct Resource: Sendable {
        package var body: Data
        package var entityTag: String?
        /// Strong as a validator: every response's `Date` is now, long after it.
        package var lastModified: String?
        /// Answer every request with `200` and the whole file, as servers without range support do.
        package var ignoresRanges = false
        package var chunkSize = 16_384
        package var bytesPerSecond: Int?
        /// What goes wrong part-way through the response's body, if anything.
        package var interruption: Interruption?
        /// A lying server: the `Content-Length` a `200` announces instead of the body's length.
        package var claimedLength: Int?
        /// A broken server: how many bytes a `206` sends past the end of its `Content-Range` (counted in its
        /// `Content-Length`).
        package var overrun = 0
        /// Whether a response names its length (`Content-Length`); if not, its body ends as the server closes the
        /// connection, as HTTP/1.1 allows.
        package var sendsLength = true

        package init(
            body: Data,
            entityTag: String? = nil,
            lastModified: String? = "Sun, 06 Nov 1994 08:49:37 GMT",
            ignoresRanges: Bool = false,
            chunkSize: Int = 16_384,
            bytesPerSecond: Int? = nil,
            interruption: Interruption? = nil
        ) {
            self.body = body
            self.entityTag = entityTag
            self.lastModified = lastModified
            self.ignoresRanges = ignoresRanges
            self.chunkSize = chunkSize
            self.bytesPerSecond = bytesPerSecond
            self.interruption = interruption
        }
    }

    /// A fault part-way through a body: after sending `after` bytes of it (of this response, not of the file), the
    /// server stops.
    package enum Interruption: Sendable, Equatable {
        /// Holds the connection open, sending nothing more, until the client goes away: a stalled mirror.
        case stall(after: Int)
        /// Closes the connection: fewer bytes than `Content-Length`.
        case close(after: Int)
        /// Resets the connection (a TCP RST).
        case reset(after: Int)
        /// Sends nothing more until `gate` opens, then the rest of the body: a download the test holds where it
        /// wants, for as long as it wants, and then lets finish.
        case hold(after: Int, until: Gate)

        /// How many bytes of the body are sent first.
        package var after: Int {
            switch self {
            case .stall(let after), .close(let after), .reset(let after), .hold(let after, _): after
            }
        }
    }

    /// What a ``Interruption/hold(after:until:)`` waits for: closed until ``open()``, then open for good.
    package final class Gate: @unchecked Sendable, Equatable {
        private let lock = NSLock()
        private var opened = false

        package init() {}

        package var isOpen: Bool { lock.withLock { opened } }

        package func open() { lock.withLock { opened = true } }

        package static func == (lhs: Gate, rhs: Gate) -> Bool { lhs === rhs }
    }

    package struct Request: Sendable {
        package let method: String
        package let path: String
        /// Header fields, names lowercased.
        package let headers: [String: String]
        package let body: Data
    }

    /// What happened on one connection.
    package struct Connection: Sendable {
        package let path: String
        /// Body bytes written to the socket.
        package var bytesSent = 0
        /// When the server noticed the client had closed the connection; `nil` if it did not (yet).
        package var clientClosedAt: Date?
        /// When the server finished with the connection, for whatever reason.
        package var finishedAt: Date?
        /// Whether the whole response was sent.
        package var completed = false
        /// The response's status.
        package var status = 0
        /// The request's `Range` header, if it had one.
        package var range: String?
        /// The request's headers, names lowercased.
        package var headers: [String: String] = [:]
        /// Why the server closed the connection without answering — it could not read a request — or `nil` if it
        /// read one.
        package var unanswered: String?
    }

    /// Why a request could not be read.
    private struct ReadFailure: Error, CustomStringConvertible {
        let description: String
    }

    package let port: Int
    private let socket: Int32
    private let route: @Sendable (Request) -> Response
    private let lock = NSLock()
    private var records: [Connection] = []
    /// Counts the changes to `records`: what ``waitUntil(timeout:_:)`` waits on, without polling.
    private let changes = Watched(0)
    private var isStopped = false
    private let acceptorDone = DispatchSemaphore(value: 0)

    /// Starts a server on an ephemeral loopback port.
    package init(route: @escaping @Sendable (Request) -> Response) throws {
        self.route = route
        let listener = makeStreamSocket()
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        // Non-blocking, so that the accept loop never waits inside `accept` (see `acceptLoop()`).
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        socket = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
    }

    /// The URL of `path` on this server.
    package func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Every connection so far.
    package var connections: [Connection] {
        lock.lock()
        defer { lock.unlock() }
        return records
    }

    /// Stops accepting connections; connections in progress finish on their own.
    ///
    /// The listening socket is closed only after the accept loop has returned. Closing it first would free its
    /// descriptor number while the loop may still be about to call `accept` on it: the next server a parallel
    /// test starts can get that number, and this loop would then accept — and drop — that server's connection
    /// (a client sees "empty reply from server").
    package func stop() {
        lock.lock()
        let wasStopped = isStopped
        isStopped = true
        lock.unlock()
        guard !wasStopped else { return }
        acceptorDone.wait()
        close(socket)
    }

    /// Connects to the server as a raw TCP client, sends `bytes` (a request cut short, say) and closes the
    /// connection without reading anything.
    package func connectAndClose(sending bytes: Data = Data()) throws {
        let client = makeStreamSocket()
        guard client >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(client) }
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0, writeAll(client, bytes) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// Waits, at most `timeout` seconds, until `condition` holds for the connections: checked now, then after each
    /// change the server records — not by polling, and without blocking a thread (the cooperative pool's threads are
    /// what the code under test runs on). `false` if `timeout` passes first.
    ///
    /// The default is long: under ThreadSanitizer, with every suite running at once on two cores, a request has been
    /// seen to take more than 10 s to arrive. Well inside the tests' one-minute limits, it only delays a failure.
    package func waitUntil(timeout: TimeInterval = 40, _ condition: @escaping ([Connection]) -> Bool) async -> Bool {
        await changes.wait(until: { [self] _ in condition(connections) }, timeout: timeout)
    }

    /// Accepts connections until ``stop()``: waits at most 20 ms at a time for one, so that it sees the stop
    /// without anything having to wake it (`shutdown` wakes a blocked `accept` on Linux, not on Darwin).
    private func acceptLoop() {
        defer { acceptorDone.signal() }
        while true {
            lock.lock()
            let stopped = isStopped
            lock.unlock()
            if stopped { return }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 20) > 0 else { continue }
            let client = accept(socket, nil, nil)
            guard client >= 0 else {
                // Nothing to accept after all (the client gave up), or an interrupted call: wait again.
                if [EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED].contains(errno) { continue }
                return
            }
            // A socket accepted from a non-blocking listener is non-blocking too on Darwin: serve it blocking.
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK)
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        #if canImport(Darwin)
        var noSignal: Int32 = 1
        setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let request: Request
        switch readRequest(client) {
        case .success(let read):
            request = read
        case .failure(let problem):
            // Closed without an answer: the client sees "Empty reply from server" (URLError -1011). Recorded, so that
            // a test failing that way says why.
            _ = record(Connection(path: "", finishedAt: Date(), unanswered: problem.description))
            return
        }
        let index = record(Connection(path: request.path, range: request.headers["range"], headers: request.headers))
        defer { update(index) { $0.finishedAt = Date() } }
        switch route(request) {
        case .body(let body, let chunkSize, let bytesPerSecond):
            guard sendHead(client, 200, length: body.count, record: index) else { return }
            stream(body, to: client, chunkSize: max(1, chunkSize), bytesPerSecond: bytesPerSecond, record: index)
        case .status(let code, let body):
            _ = sendHead(client, code, length: body.count, then: body, record: index)
            update(index) {
                $0.bytesSent = body.count
                $0.completed = true
            }
        case .statusWithFields(let code, let fields):
            _ = sendHead(client, code, length: 0, fields: fields, record: index)
            update(index) { $0.completed = true }
        case .closeMidBody(let contentLength, let sending):
            guard sendHead(client, 200, length: contentLength, record: index) else { return }
            _ = writeAll(client, Data(repeating: 0x61, count: sending))
            update(index) { $0.bytesSent = sending }
        case .stall:
            waitForClientToClose(client)
            update(index) { $0.clientClosedAt = Date() }
        case .closeBeforeHeaders:
            break
        case .resetBeforeHeaders:
            reset(client)
        case .redirect(let path):
            _ = sendHead(client, 302, length: 0, fields: ["Location: \(url(path).absoluteString)"], record: index)
            update(index) { $0.completed = true }
        case .echo:
            _ = sendHead(client, 200, length: request.body.count, then: request.body, record: index)
            update(index) {
                $0.bytesSent = request.body.count
                $0.completed = true
            }
        case .resource(let resource):
            serve(resource, for: request, to: client, record: index)
        }
    }

    private func serve(_ resource: Resource, for request: Request, to client: Int32, record index: Int) {
        // Ranges and If-Range are answered by PromiseTesting's public StubResponse.file: what users' tests get is
        // what the project's own tests trust.
        var asked = URLRequest(url: url(request.path))
        for (name, value) in request.headers { asked.setValue(value, forHTTPHeaderField: name) }
        let answer =
            resource.ignoresRanges
            ? StubResponse.body(resource.body)
            : StubResponse.file(
                resource.body,
                etag: resource.entityTag,
                lastModified: resource.lastModified,
                for: asked
            )
        var fields = ["Content-Type: application/octet-stream", "Date: \(Self.httpDate(Date()))"]
        if let tag = resource.entityTag { fields.append("ETag: \(tag)") }
        if let date = resource.lastModified { fields.append("Last-Modified: \(date)") }
        for name in ["Accept-Ranges", "Content-Range"] {
            if let value = answer.headers[name] { fields.append("\(name): \(value)") }
        }
        let status = answer.status
        var body = answer.body
        if status == 206 { body += Data(repeating: 0xEE, count: resource.overrun) }
        let announced = status == 200 ? resource.claimedLength ?? body.count : body.count
        guard sendHead(client, status, length: resource.sendsLength ? announced : nil, fields: fields, record: index)
        else { return }
        let interruption = resource.interruption.flatMap { $0.after < body.count ? $0 : nil }
        stream(
            body.prefix(interruption?.after ?? body.count),
            to: client,
            chunkSize: max(1, resource.chunkSize),
            bytesPerSecond: resource.bytesPerSecond,
            record: index
        )
        guard let interruption else { return }
        update(index) { $0.completed = false }
        switch interruption {
        case .stall:
            waitForClientToClose(client)
            update(index) { $0.clientClosedAt = Date() }
        case .hold(let after, let gate):
            if waitForClientToClose(client, orUntil: gate) {
                update(index) { $0.clientClosedAt = Date() }
                return
            }
            stream(
                body,
                from: after,
                to: client,
                chunkSize: max(1, resource.chunkSize),
                bytesPerSecond: resource.bytesPerSecond,
                record: index
            )
        case .close:
            break
        case .reset:
            reset(client)
        }
    }

    /// Makes the coming `close` of `client` reset the connection (a TCP RST) instead of closing it in order.
    private func reset(_ client: Int32) {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
    }

    /// `date` as HTTP writes it (IMF-fixdate).
    private static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE',' dd MMM yyyy HH':'mm':'ss 'GMT'"
        return formatter.string(from: date)
    }

    /// Sends `body` from byte `first` on (the bytes before it were sent already), recording the bytes sent so far.
    private func stream(
        _ body: Data,
        from first: Int = 0,
        to client: Int32,
        chunkSize: Int,
        bytesPerSecond: Int?,
        record index: Int
    ) {
        let start = Date()
        var sent = first
        while sent < body.count {
            if clientHasClosed(client) {
                update(index) { $0.clientClosedAt = Date() }
                return
            }
            let end = min(sent + chunkSize, body.count)
            guard writeAll(client, body[sent..<end]) else {
                update(index) { $0.clientClosedAt = Date() }
                return
            }
            sent = end
            update(index) { $0.bytesSent = sent }
            // Throttle before the next chunk (never after the last one: a client that has every byte may close at
            // once, and the transfer is complete), without getting ahead of the schedule, watching for the client
            // leaving.
            if sent < body.count, let bytesPerSecond, bytesPerSecond > 0 {
                let due = start.addingTimeInterval(Double(sent - first) / Double(bytesPerSecond))
                while Date() < due {
                    if clientHasClosed(client) {
                        update(index) { $0.clientClosedAt = Date() }
                        return
                    }
                    usleep(UInt32(min(5_000, max(0, due.timeIntervalSinceNow) * 1_000_000)))
                }
            }
        }
        update(index) { $0.completed = true }
    }

    /// Records `status` for the connection, then writes the response's head followed by `body`.
    ///
    /// - Returns: whether the client took every byte.
    private func sendHead(
        _ client: Int32,
        _ status: Int,
        length: Int?,
        fields: [String] = ["Content-Type: application/octet-stream"],
        then body: Data = Data(),
        record index: Int
    ) -> Bool {
        update(index) { $0.status = status }
        let reasons = [
            200: "OK", 206: "Partial Content", 302: "Found", 404: "Not Found", 416: "Range Not Satisfiable",
            500: "Internal Server Error", 503: "Service Unavailable",
        ]
        let extra = (length.map { ["Content-Length: \($0)"] } ?? []) + fields
        let head =
            "HTTP/1.1 \(status) \(reasons[status] ?? "Status")\r\n\(extra.map { $0 + "\r\n" }.joined())"
            + "Connection: close\r\n\r\n"
        return writeAll(client, Data(head.utf8) + body)
    }

    private func readRequest(_ client: Int32) -> Result<Request, ReadFailure> {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while buffer.range(of: Data("\r\n\r\n".utf8)) == nil {
            let count = receive(client, into: &chunk)
            guard count > 0 else {
                let why = count == 0 ? "the client closed" : "recv failed: \(String(cString: strerror(errno)))"
                return .failure(ReadFailure(description: "request not read after \(buffer.count) bytes: \(why)"))
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
        let headerEnd = buffer.range(of: Data("\r\n\r\n".utf8))!
        let head = String(decoding: buffer[..<headerEnd.lowerBound], as: UTF8.self)
        var body = Data(buffer[headerEnd.upperBound...])
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else {
            return .failure(ReadFailure(description: "not a request line: \(lines.first ?? "")"))
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            headers[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces)
        }
        let contentLength = headers["content-length"].flatMap { Int($0) } ?? 0
        while body.count < contentLength {
            let count = receive(client, into: &chunk)
            guard count > 0 else { break }
            body.append(contentsOf: chunk[0..<count])
        }
        return .success(Request(method: String(parts[0]), path: String(parts[1]), headers: headers, body: body))
    }

    /// Reads what has arrived into `chunk`: the byte count, 0 at end of file, -1 on an error (a signal interrupting
    /// the wait is not one: it reads again).
    private func receive(_ client: Int32, into chunk: inout [UInt8]) -> Int {
        while true {
            let count = recv(client, &chunk, chunk.count, 0)
            if count >= 0 || errno != EINTR { return count }
        }
    }

    /// Whether the peer has closed its side: readable, and a peek reads end-of-file (or an error).
    private func clientHasClosed(_ client: Int32) -> Bool {
        var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        if descriptor.revents & Int16(POLLHUP | POLLERR) != 0 { return true }
        var byte: UInt8 = 0
        let count = recv(client, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Waits until the client closes the connection, or until `gate` opens.
    ///
    /// - Returns: whether the client closed it.
    @discardableResult
    private func waitForClientToClose(_ client: Int32, orUntil gate: Gate? = nil) -> Bool {
        while !clientHasClosed(client) {
            if gate?.isOpen == true { return false }
            var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, gate == nil ? 50 : 5)
        }
        return true
    }

    private func writeAll<D: DataProtocol>(_ client: Int32, _ data: D) -> Bool {
        let bytes = [UInt8](data)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                send(client, $0.baseAddress! + offset, $0.count - offset, sendFlags)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private func record(_ connection: Connection) -> Int {
        lock.lock()
        records.append(connection)
        let index = records.count - 1
        lock.unlock()
        changes.update { $0 &+= 1 }  // outside the lock: the waiters' conditions read `connections`
        return index
    }

    private func update(_ index: Int, _ change: (inout Connection) -> Void) {
        lock.lock()
        change(&records[index])
        lock.unlock()
        changes.update { $0 &+= 1 }
    }
}

/// A ``LoopbackHTTPServer/Resource`` that can change between requests, as a file replaced on a real server: route
/// requests to `.resource(file.current)`.
package final class ServedFile: @unchecked Sendable {
    // @unchecked Sendable: `resource` is only touched under `lock`.
    private let lock = NSLock()
    private var resource: LoopbackHTTPServer.Resource

    package init(_ resource: LoopbackHTTPServer.Resource) {
        self.resource = resource
    }

    /// The resource as it is now.
    package var current: LoopbackHTTPServer.Resource {
        lock.lock()
        defer { lock.unlock() }
        return resource
    }

    /// Changes the resource for the requests that follow.
    package func change(_ update: (inout LoopbackHTTPServer.Resource) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        update(&resource)
    }
}

/// A loopback port where nothing listens: connecting to it is refused, as to a mirror that is down. The port stays
/// bound (not listening) while this lives, so a server that a parallel test starts cannot take it.
package final class RefusingPort: Sendable {
    package let port: Int
    private let socket: Int32

    package init() throws {
        let socket = makeStreamSocket()
        guard socket >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        self.socket = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(socket)
    }

    /// The URL of `path` on this port.
    package func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }
}
