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

/// Nothing a transfer received is left in the temporary directory, on any kind of session, however it ends: on
/// swift-corelibs-foundation a download task writes there and leaves its file when it is cancelled or fails, so no
/// transfer on `URLSession.shared` or a plain session may use one.
///
/// Each transfer's body begins with bytes of its own, so that a file another test left is never taken for its.
@Suite struct TemporaryDirectoryTests {
    enum Session: String, CaseIterable, Sendable {
        case shared, plain, progressReporting
    }

    enum Transfer: String, CaseIterable, Sendable {
        case data, download, resumableDownload, upload
    }

    enum Ending: String, CaseIterable, Sendable {
        /// `cancel()` — `pause()` for a resumable download — once the body is under way.
        case cancel
        /// The server closes the connection part-way through the body.
        case cutConnection
    }

    /// Every transfer, with every ending.
    static let cases: [(Transfer, Ending)] = Transfer.allCases.flatMap { transfer in
        Ending.allCases.map { (transfer, $0) }
    }

    static let part = 256 * 1_024

    @Test(timeLimit(minutes: 1), arguments: Session.allCases, cases)
    func aTransferThatStopsEarlyLeavesNothingInTheTemporaryDirectory(
        session kind: Session,
        transferAndEnding: (Transfer, Ending)
    ) async throws {
        let (transfer, ending) = transferAndEnding
        let marker = withUnsafeBytes(of: UUID().uuid) { Data($0) } + withUnsafeBytes(of: UUID().uuid) { Data($0) }
        let body = marker + DownloadIntegrationTests.payload(4 * Self.part)
        let interruption: LoopbackHTTPServer.Interruption =
            ending == .cancel ? .stall(after: Self.part) : .close(after: Self.part)
        let server = try LoopbackHTTPServer { _ in
            .resource(.init(body: body, entityTag: "\"v1\"", interruption: interruption))
        }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let session: URLSession =
            switch kind {
            case .shared: .shared
            case .plain: URLSession(configuration: .default)
            case .progressReporting: .withProgressReporting()
            }
        defer { if kind != .shared { session.finishTasksAndInvalidate() } }
        let before = Set(try Self.temporaryFiles())

        let underWay = Latch()
        let progress: @Sendable (TransferProgress) -> Void = {
            if $0.bytesTransferred >= Self.part / 2 { underWay.open() }
        }
        let url = server.url("/file")
        let stop: @Sendable () -> Void
        let ended: @Sendable () async -> Void
        switch transfer {
        case .data:
            let promise = session.cancellableData(from: url, progress: progress)
            (stop, ended) = ({ promise.cancel() }, { _ = await promise.asPromise().asResult().async() })
        case .download:
            let promise = session.cancellableDownload(from: url, to: directory.destination, progress: progress)
            (stop, ended) = ({ promise.cancel() }, { _ = await promise.asPromise().asResult().async() })
        case .resumableDownload:
            let download = session.resumableDownload(from: url, to: directory.destination, progress: progress)
            (stop, ended) = ({ download.pause() }, { _ = await download.resumeData.async() })
        case .upload:
            let promise = session.cancellableUpload(for: URLRequest(url: url), from: marker)
            (stop, ended) = ({ promise.cancel() }, { _ = await promise.asPromise().asResult().async() })
        }
        if ending == .cancel {
            if transfer == .upload {
                // An upload's progress counts bytes sent: wait until the server has sent part of the answer.
                let sent = await server.waitUntil { ($0.first?.bytesSent ?? 0) >= Self.part }
                #expect(sent, "the answer got under way")
            } else {
                #expect(await underWay.opened(within: .seconds(40)), "the body got under way")
            }
            stop()
        }
        await ended()

        let left = Set(try Self.temporaryFiles()).subtracting(before).filter { Self.starts($0, with: marker) }
        #expect(left.isEmpty, "left in the temporary directory: \(left)")
    }

    /// The regular files in the temporary directory.
    static func temporaryFiles() throws -> [URL] {
        let folder = FileManager.default.temporaryDirectory
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).map {
            folder.appendingPathComponent($0)
        }
    }

    /// Whether the file at `url` begins with `prefix` (`false` if it is gone, shorter, or cannot be read). A file
    /// shorter than the prefix is not read: Linux's Foundation leaks the buffer `Data(contentsOf:)` makes for an empty
    /// file.
    static func starts(_ url: URL, with prefix: Data) -> Bool {
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        guard size >= prefix.count, let data = try? Data(contentsOf: url, options: .alwaysMapped) else { return false }
        return data.prefix(prefix.count) == prefix
    }
}
