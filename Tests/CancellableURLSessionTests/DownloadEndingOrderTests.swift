import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One ending order for every kind of download: when its promise rejects — cancelled, paused, timed out or failed —
/// the disk already shows the outcome. Each test looks from inside the rejection handler itself, run inline on the
/// thread that rejects (`on: nil`), so nothing can happen in between: the partial file is gone, or it is the one the
/// resume data names.
@Suite struct DownloadEndingOrderTests {
    enum Kind: String, CaseIterable, Sendable {
        case download, resumable, resumed, segmented, resumableSegmented, resumedSegmented

        /// Whether a pause, or a failure with bytes kept, keeps the partial file.
        var keeps: Bool { ![.download, .segmented].contains(self) }
        var isSegmented: Bool { [.segmented, .resumableSegmented, .resumedSegmented].contains(self) }
    }

    enum Ending: String, CaseIterable, Sendable {
        /// `cancel()`, from a thread of its own.
        case cancel
        /// `timeout(seconds: 0)` on the download's promise, once it is under way.
        case timeout
        /// A cancellation with `CancellationReason.paused`.
        case pause
        /// The server closes the connection part-way through the body.
        case failure
    }

    static let size = 512 * 1_024
    /// Where the server holds (or cuts) each answer's body.
    static let part = 128 * 1_024
    /// Made afresh on each use: LeakSanitizer reports a `Data` held in a static (it cannot see a tagged pointer).
    static var body: Data { DownloadIntegrationTests.payload(size) }

    /// What the rejection handler saw: the error, the folder's files, and whether the resume data was already out.
    struct Seen: Sendable {
        var error: Error
        var files: [String]
        var resumeDataOut: Bool
    }

    /// A download of any kind, seen through what these tests need of it.
    struct Running: Sendable {
        /// Runs `body` inline, on the thread that rejects the download's own promise (`catch(on: nil)`).
        let onRejection: @Sendable (@escaping @Sendable (Error) -> Void) -> Void
        let cancel: @Sendable (CancellationReason) -> Void
        /// The download's promise with a timeout of `seconds`, as an app writes it.
        let timeout: @Sendable (TimeInterval) -> CancellablePromise<Void>
        /// Whether the resume data is out (resolved, with data or `nil`).
        let isResumeDataOut: @Sendable () -> Bool
        /// The partial file the resume data names, once it is out, the bytes it says are kept, and where the last kept
        /// range ends.
        let kept: @Sendable () async -> (file: String, bytes: Int64, lastByte: Int64)?

        init<T>(
            _ promise: CancellablePromise<T>,
            isResumeDataOut: @escaping @Sendable () -> Bool = { true },
            kept: @escaping @Sendable () async -> (file: String, bytes: Int64, lastByte: Int64)? = { nil }
        ) {
            nonisolated(unsafe) let promise = promise
            onRejection = { body in promise.catch(on: nil, policy: .allErrors) { body($0) } }
            cancel = { _ = promise.cancel(reason: $0) }
            timeout = { promise.timeout(seconds: $0).asVoid() }
            self.isResumeDataOut = isResumeDataOut
            self.kept = kept
        }
    }

    @Test(timeLimit(minutes: 2), arguments: Kind.allCases, Ending.allCases)
    func theDiskShowsTheOutcomeWhenThePromiseRejects(kind: Kind, ending: Ending) async throws {
        let suite = try LoopbackSuite()
        let file = ServedFile(.init(body: Self.body, entityTag: "\"v1\"", interruption: .stall(after: Self.part)))
        let server = try suite.serve { _ in .resource(file.current) }
        var written = Int64(Self.part)
        var resumeFrom: Any?
        if kind == .resumed || kind == .resumedSegmented {
            // A first download, paused where the server holds it: what the resumed one continues.
            let first = try await start(kind == .resumed ? .resumable : .resumableSegmented, server, suite, at: written)
            resumeFrom = try await pause(first)
            written += Int64(Self.part)
        }
        if ending == .failure { file.change { $0.interruption = .close(after: Self.part) } }

        let reached = Latch()
        let running = try makeDownload(kind, server, suite, resuming: resumeFrom, reached: reached, at: written)
        let seen = Shared<Seen?>(nil)
        let directory = suite.directory
        let record: @Sendable (Error) -> Void = { error in
            let files = (try? directory.contents()) ?? ["(unreadable)"]
            seen.withLock { $0 = Seen(error: error, files: files, resumeDataOut: running.isResumeDataOut()) }
        }
        let ended: Promise<Void>
        switch ending {
        case .timeout:
            // The app's chain: the TimeoutError is seen once the download is cancelled.
            #expect(await reached.opened(within: .seconds(40)), "the download got under way")
            let limited = running.timeout(0.05)
            limited.catch(on: nil, policy: .allErrors) { record($0) }
            ended = limited.asPromise().asVoid().recover { _ in }
        case .cancel, .pause, .failure:
            running.onRejection(record)
            let (promise, resolver) = Promise<Void>.pending()
            running.onRejection { _ in resolver.fulfill(()) }
            ended = promise
        }

        switch ending {
        case .cancel, .pause:
            #expect(await reached.opened(within: .seconds(40)), "the download got under way")
            let reason: CancellationReason = ending == .pause ? .paused : .user
            let returned = await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    running.cancel(reason)
                    continuation.resume(returning: (try? directory.contents()) ?? ["(unreadable)"])
                }
            }
            if ending == .cancel { #expect(returned == [], "nothing is left once cancel() returns") }
        case .timeout, .failure:
            break
        }
        try await ended.async()

        let outcome = try #require(seen.current, "the handler ran")
        let keeps = kind.keeps && (ending == .pause || ending == .failure)
        switch ending {
        case .cancel, .pause: #expect(outcome.error.isCancelled)
        case .timeout: #expect(outcome.error is TimeoutError)
        case .failure: #expect(!outcome.error.isCancelled)
        }
        if keeps {
            #expect(outcome.files.count == 1 && outcome.files.allSatisfy { $0.hasSuffix(".partial") }, "kept")
            let kept = try #require(await running.kept(), "the resume data")
            #expect(outcome.files == [kept.file], "the partial file is the one the resume data names")
            let size =
                try FileManager.default.attributesOfItem(
                    atPath: directory.url.appendingPathComponent(kept.file).path
                )[.size] as? Int64
            #expect(kept.bytes > 0 && size.map { kept.lastByte <= $0 } == true, "it holds what the data names")
        } else {
            #expect(outcome.files == [], "nothing is left when the promise rejects")
            #expect(await running.kept() == nil)
        }
        if ending == .failure {
            #expect(outcome.resumeDataOut, "a failed download hands out its resume data before its promise rejects")
        }
    }

    /// Starts a resumable download of `kind` that reaches `threshold` bytes written.
    private func start(
        _ kind: Kind,
        _ server: LoopbackHTTPServer,
        _ suite: LoopbackSuite,
        at threshold: Int64
    ) async throws -> Any {
        let reached = Latch()
        let progress = Self.progress(reached, at: threshold)
        let destination = suite.directory.destination
        let download: Any =
            kind == .resumable
            ? suite.session.resumableDownload(from: server.url("/file"), to: destination) {
                progress($0.bytesTransferred)
            }
            : suite.session.resumableSegmentedDownload(
                from: [server.url("/file")],
                to: destination,
                options: Self.patient
            ) {
                progress($0.bytesWritten)
            }
        #expect(await reached.opened(within: .seconds(40)), "the first download got under way")
        return download
    }

    /// Pauses `download` and returns its resume data.
    private func pause(_ download: Any) async throws -> Any {
        if let download = download as? ResumableDownload {
            return try #require(await download.pause().async())
        }
        return try #require(await (download as! SegmentedDownload).pause().async())
    }

    /// Options under which a mirror that holds its connection open is never dropped for a stall: the server stalls each
    /// download where the test ends it, and on a loaded machine the default stall timeout (10 s) ended some first.
    static let patient: SegmentedDownloadOptions = {
        var options = SegmentedDownloadOptions()
        options.stallTimeout = 3_600
        return options
    }()

    private func makeDownload(
        _ kind: Kind,
        _ server: LoopbackHTTPServer,
        _ suite: LoopbackSuite,
        resuming saved: Any?,
        reached: Latch,
        at threshold: Int64
    ) throws -> Running {
        let session = suite.session
        let destination = suite.directory.destination
        let url = server.url("/file")
        let progress = Self.progress(reached, at: threshold)
        switch kind {
        case .download:
            return Running(session.cancellableDownload(from: url, to: destination) { progress($0.bytesTransferred) })
        case .resumable, .resumed:
            let download =
                kind == .resumable
                ? session.resumableDownload(from: url, to: destination) { progress($0.bytesTransferred) }
                : session.resumeDownload(saved as! DownloadResumeData) { progress($0.bytesTransferred) }
            return Running(download.promise, isResumeDataOut: { download.resumeData.isResolved }) {
                await download.resumeData.async().map { ($0.partialFile.lastPathComponent, $0.bytesKept, $0.bytesKept) }
            }
        case .segmented:
            return Running(
                session.segmentedDownload(from: [url], to: destination, options: Self.patient) {
                    progress($0.bytesWritten)
                }
            )
        case .resumableSegmented, .resumedSegmented:
            let download =
                kind == .resumableSegmented
                ? session.resumableSegmentedDownload(from: [url], to: destination, options: Self.patient) {
                    progress($0.bytesWritten)
                }
                : session.resumeSegmentedDownload(saved as! SegmentedDownloadResumeData, options: Self.patient) {
                    progress($0.bytesWritten)
                }
            return Running(download.promise, isResumeDataOut: { download.resumeData.isResolved }) {
                await download.resumeData.async().map {
                    ($0.partialFile.lastPathComponent, $0.bytesKept, $0.keptRanges.last?.upperBound ?? 0)
                }
            }
        }
    }

    /// A progress closure that opens `reached` once `threshold` bytes are written.
    private static func progress(_ reached: Latch, at threshold: Int64) -> @Sendable (Int64) -> Void {
        { written in if written >= threshold { reached.open() } }
    }
}
