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

/// The test server itself: the integration tests run in parallel, each with its own server, and must not see
/// each other's.
struct LoopbackHTTPServerTests {
    /// A server stopping while another starts must not take the other's connections, and every request gets its
    /// own server's answer. (A stopping server closes its listening socket only after its accept loop has
    /// returned: closed earlier, the descriptor number could go to a server a parallel test starts while the old
    /// loop was about to call `accept` on it. This test did not catch that race before the fix — the window is
    /// microseconds — so it guards the property, not that one interleaving.)
    @Test(timeLimit(minutes: 1))
    func serversStartedAndStoppedInParallelAnswerEveryRequest() async throws {
        let session = URLSession(configuration: .ephemeral)
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var failures: [String] = []
                    for round in 0..<40 {
                        let server = try LoopbackHTTPServer { _ in .status(200, body: Data("\(worker)".utf8)) }
                        do {
                            let (data, _) = try await session.cancellableData(from: server.url("/\(round)")).async()
                            if data != Data("\(worker)".utf8) { failures.append("worker \(worker): another server") }
                        } catch {
                            failures.append("worker \(worker), round \(round): \(error)")
                        }
                        server.stop()
                    }
                    return failures
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.count) of 160 requests failed: \(failures.prefix(3))")
        session.finishTasksAndInvalidate()
    }

    /// A connection the server closes without answering — the client sees "Empty reply from server" — is recorded
    /// with why: what it read of the request, and how reading ended.
    @Test(arguments: [(Data(), 0), (Data("GET /cut HTTP/1.1\r\nHost: x".utf8), 26)])
    func aConnectionClosedWithoutARequestIsRecordedWithWhy(sent: Data, count: Int) async throws {
        let server = try LoopbackHTTPServer { _ in .status(200, body: Data()) }
        defer { server.stop() }
        try server.connectAndClose(sending: sent)
        #expect(await server.waitUntil { !$0.isEmpty })
        let connection = try #require(server.connections.first)
        #expect(connection.unanswered == "request not read after \(count) bytes: the client closed")
        #expect(connection.status == 0 && connection.path.isEmpty)
    }
}
