import Cancellable
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transfer cancelled while URLSession waits for its delegate's answer — whether to follow a redirect, how to go on
/// after the response headers — ends as cancelled. swift-corelibs-foundation stops the process ("Received callback
/// for HTTP redirection, but we're not waiting for it") when the answer to a redirect reaches a task cancelled in
/// between (the redirect tests crash without the serialisation in `TransferDelegate`); each test cancels exactly
/// there, at the transfer's `willAnswer` hook, on the delegate queue.
@Suite(.serialized) struct CancelWhileAnsweringTests {
    /// Waits at the hook until the test has the promise, then cancels it with `reason`.
    final class Canceller: @unchecked Sendable {
        private let ready = Latch()
        private var cancel: (@Sendable () -> Void)?
        let answersAsked = Shared(0)

        var hooks: DownloadHooks {
            DownloadHooks(willAnswer: { [self] in
                answersAsked.increment()
                guard ready.wait(timeout: .seconds(40)) else { return }
                cancel?()
            })
        }

        func arm(_ cancel: @escaping @Sendable () -> Void) {
            self.cancel = cancel
            ready.open()
        }
    }

    @Test(timeLimit(minutes: 1))
    func aDataTransferCancelledBeforeTheAnswerToItsHeadersEndsCancelled() async throws {
        // Headers, then nothing: only the client can end the connection.
        let server = try LoopbackHTTPServer { _ in
            .resource(.init(body: DownloadIntegrationTests.payload(100_000), interruption: .stall(after: 0)))
        }
        defer { server.stop() }
        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let canceller = Canceller()
        let transfer = DownloadHooks.$current.withValue(canceller.hooks) {
            session.cancellableData(from: server.url("/file"))
        }
        canceller.arm { transfer.cancel() }

        await #expect(throws: CancellablePromiseError.self) { try await transfer.async() }
        #expect(canceller.answersAsked.current == 1, "asked once: the response was never answered")
        #expect(await server.waitUntil { $0.first?.clientClosedAt != nil }, "the connection was closed")
    }

    @Test(timeLimit(minutes: 1))
    func aDataTransferCancelledBeforeTheAnswerToARedirectEndsCancelledWithoutFollowingIt() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/moved" ? .redirect(to: "/file") : .body(DownloadIntegrationTests.payload(1_000))
        }
        defer { server.stop() }
        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let canceller = Canceller()
        let transfer = DownloadHooks.$current.withValue(canceller.hooks) {
            session.cancellableData(from: server.url("/moved"))
        }
        canceller.arm { transfer.cancel() }

        await #expect(throws: CancellablePromiseError.self) { try await transfer.async() }
        #expect(canceller.answersAsked.current == 1)
        #expect(server.connections.map(\.path) == ["/moved"], "the redirect was not followed")
    }

    @Test(timeLimit(minutes: 1))
    func aDownloadPausedBeforeTheAnswerToARedirectKeepsItsBytes() async throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let body = DownloadIntegrationTests.payload(200_000)
        let server = try LoopbackHTTPServer { request in
            request.path == "/moved"
                ? .redirect(to: "/file") : .resource(.init(body: body, entityTag: "\"v1\""))
        }
        defer { server.stop() }
        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let canceller = Canceller()
        let download = DownloadHooks.$current.withValue(canceller.hooks) {
            session.resumableDownload(from: server.url("/moved"), to: directory.destination)
        }
        canceller.arm { download.pause() }

        let saved = try #require(await download.resumeData.async(), "a pause gives resume data")
        #expect(await failure(of: download.promise)?.cancellationReason == .paused)
        #expect(saved.bytesKept == 0, "nothing had arrived")
        #expect(server.connections.map(\.path) == ["/moved"], "the redirect was not followed")

        let (url, _) = try await session.resumeDownload(saved).promise.async()
        #expect(try fileContents(url) == body, "the resume follows the redirect and finishes")
    }
}
