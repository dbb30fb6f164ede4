// App code of the kind a Swift 5 app writes against CancellableURLSession: a download manager that is not
// `Sendable`, keeps its state in properties and updates them from progress closures and `done` handlers (which run
// on the main queue). Compiled in Swift 5 language mode, with warnings as errors in CI, as this whole target is.

import Cancellable
import CancellableURLSession
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class LegacyDownloadManager {
    let folder: URL
    private let session = URLSession.withProgressReporting()
    private var current: ResumableDownload?
    private var segmented: SegmentedDownload?
    private(set) var fraction: Double = 0
    private(set) var saved: DownloadResumeData?
    private(set) var savedSegments: SegmentedDownloadResumeData?

    init(folder: URL) {
        self.folder = folder
    }

    var destination: URL { folder.appendingPathComponent("file.bin") }

    /// A page, as text; cancellable like any transfer.
    func page(_ url: URL) -> CancellablePromise<String> {
        session.cancellableData(from: url).map { data, _ in String(decoding: data, as: UTF8.self) }
    }

    /// The first mirror to answer wins; the others are cancelled.
    func fastest(of mirrors: [URL]) -> CancellablePromise<Data> {
        race(mirrors.map { session.cancellableData(from: $0).map(\.data) }, autoCancel: true)
    }

    /// A download the user can pause; progress goes to a property, as a view model's would.
    func start(_ url: URL) -> CancellablePromise<URL> {
        let download = session.resumableDownload(from: url, to: destination) { progress in
            self.fraction = progress.fractionCompleted ?? 0
        }
        current = download
        return download.promise.map { url, _ in url }
    }

    func pause() {
        current?.pause().done { self.saved = $0 }
    }

    func resume() -> CancellablePromise<URL>? {
        guard let saved else { return nil }
        return session.resumeDownload(saved).promise.map { url, _ in url }
    }

    /// One file from every mirror at once, with a checkpoint saved now and then for a relaunch.
    func startFromEveryMirror(_ mirrors: [URL]) -> CancellablePromise<URL> {
        let download = session.resumableSegmentedDownload(from: mirrors, to: destination) { progress in
            self.fraction = progress.fractionCompleted ?? 0
            if progress.bytesWritten % (8 * 1_048_576) == 0 { self.savedSegments = self.segmented?.checkpoint() }
        }
        segmented = download
        return download.promise.map(\.url)
    }

    /// At launch: the partial files no saved resume data names are removed.
    func cleanUp() throws -> [URL] {
        let kept = [saved?.partialFile, savedSegments?.partialFile].compactMap { $0 }
        return try DownloadResumeData.discardPartialFiles(for: destination, except: kept)
    }
}
