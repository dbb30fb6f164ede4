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

/// A transfer cancelled as it starts or as it completes ends fulfilled or cancelled, and the process goes on.
///
/// swift-corelibs-foundation ends the process ("Trying to access a behaviour for a task that in not in the
/// registry") when a data or upload task on a session with a URL cache is cancelled while it looks its response up
/// in the cache: the cancellation is carried out after the task has completed and been forgotten. A plain
/// `URLSession` with a URL cache, cancelling each transfer from another thread at once, crashed in 6 of 10 runs of
/// 300 transfers here (and this suite, before the library avoided it, in about 1 of 4). Every session below has a
/// URL cache; each case makes hundreds of transfers to a loopback server and cancels each one either at once, from
/// another thread, or from its last progress report.
@Suite(.serialized) struct CancelMeetsCompletionTests {
    /// Fewer under ThreadSanitizer, which runs them 20 times slower: 200 took 34 s there with little else running.
    static let rounds = underThreadSanitizer ? 60 : 200

    enum Transfer: String, CaseIterable, Sendable {
        case data, upload
    }

    enum Canceller: String, CaseIterable, Sendable {
        /// Cancels from another thread as soon as the transfer is made, racing its start and its end.
        case anotherThreadAtOnce
        /// Cancels from the progress report of the last byte: on the delegate queue with live delivery, from the
        /// completion handler otherwise.
        case lastProgressReport
    }

    /// A configuration with a URL cache, which the library must not let swift-corelibs-foundation use in a way that
    /// a cancellation can crash.
    static func configurationWithACache() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 1_048_576, diskCapacity: 0, diskPath: nil)
        return configuration
    }

    static func makeSession(_ mode: DownloadIntegrationTests.Mode) -> URLSession {
        switch mode {
        case .anySession: URLSession(configuration: configurationWithACache())
        case .progressReporting: .withProgressReporting(configuration: configurationWithACache())
        case .ownDelegate: sessionWithoutLiveDelivery(configuration: configurationWithACache())
        }
    }

    @Test(
        timeLimit(minutes: 3),
        arguments: DownloadIntegrationTests.Mode.allCases,
        [(Transfer.data, Canceller.anotherThreadAtOnce), (.data, .lastProgressReport), (.upload, .anotherThreadAtOnce)]
    )
    func aTransferCancelledAsItStartsOrEndsEndsOneWayOrTheOther(
        mode: DownloadIntegrationTests.Mode,
        transferAndCanceller: (Transfer, Canceller)
    ) async throws {
        let (kind, canceller) = transferAndCanceller
        let body = DownloadIntegrationTests.payload(2_000)
        let server = try LoopbackHTTPServer { request in request.path == "/upload" ? .echo : .body(body) }
        defer { server.stop() }
        let session = Self.makeSession(mode)
        defer { session.finishTasksAndInvalidate() }
        var cancelled = 0
        for _ in 0..<Self.rounds {
            let made = Shared<CancellablePromise<(data: Data, response: URLResponse)>?>(nil)
            let progress: @Sendable (TransferProgress) -> Void = { progress in
                if canceller == .lastProgressReport, progress.bytesTransferred == Int64(body.count) {
                    made.current?.cancel()
                }
            }
            let transfer =
                switch kind {
                case .data: session.cancellableData(from: server.url("/file"), progress: progress)
                case .upload:
                    session.cancellableUpload(for: URLRequest(url: server.url("/upload")), from: body)
                }
            made.withLock { $0 = transfer }
            if canceller == .anotherThreadAtOnce {
                DispatchQueue.global().async { transfer.cancel() }
            }
            switch await transfer.asPromise().asResult().async() {
            case .success(let (data, _)):
                #expect(data == body)
            case .failure(let error):
                #expect(error.isCancelled, "\(error)")
                cancelled += 1
            }
            made.withLock { $0 = nil }
        }
        #expect(cancelled > 0, "no transfer was cancelled: the race was not run")
    }
}
