import Cancellable
import CancellableURLSession
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A segmented download driven from main-actor code, as an app's view model writes it: compiled (not run — it
/// needs mirrors) under default MainActor isolation, so that the API's closures and types fit such code without
/// a warning.
final class MirrorDownloader {
    var status = ""
    var saved: SegmentedDownloadResumeData?
    private var download: SegmentedDownload?
    private let session = URLSession.withProgressReporting()

    func start(from mirrors: [URL], to file: URL) {
        let download = session.resumableSegmentedDownload(from: mirrors, to: file) { progress in
            // On the session's delegate queue: back to the main actor for the view.
            let fraction = progress.fractionCompleted ?? 0
            Task { @MainActor in self.status = "\(Int(fraction * 100))%" }
        }
        download.promise
            .done { result in self.status = "done: \(result.totalBytes) bytes, \(result.bytesDiscarded) discarded" }
            .catch { error in self.status = "\(error)" }
        self.download = download
    }

    func pause() {
        download?.pause().done { resumeData in self.saved = resumeData }
    }

    func resume(from mirrors: [URL]? = nil) {
        guard let saved else { return }
        let download = session.resumeSegmentedDownload(saved, from: mirrors?.map { URLRequest(url: $0) })
        download.promise.done { _ in self.status = "resumed and done" }.catch { self.status = "\($0)" }
        self.download = download
    }

    /// What the app saves as the download runs, to resume after a crash.
    func checkpoint() -> Data? {
        download?.checkpoint().flatMap { try? JSONEncoder().encode($0) }
    }

    func stop() {
        download?.cancel()
        saved?.discard()
    }
}
