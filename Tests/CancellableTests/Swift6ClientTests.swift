import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// A main-actor view model drives a cancellable download and updates its own state in `done`/`catch`/
/// `finally` on the default (main) queue, without `MainActor.assumeIsolated` (the Swift 6 apps article).
@MainActor
final class DownloadViewModel {
    var text = ""
    var wasStopped = false
    var isLoading = false
    private var download: CancellableFinalizer?

    func start(_ work: CancellablePromise<String>, finished: @escaping () -> Void) {
        isLoading = true
        download =
            work
            .map(on: .global()) { $0.uppercased() }
            .done { self.text = $0 }
            .catch(policy: .allErrors) { error in self.wasStopped = error.isCancelled }
        download?.finally {
            self.isLoading = false
            finished()
        }
    }

    func stop() {
        download?.cancel()
    }
}

@Suite struct CancellableSwift6ClientTests {
    @Test @MainActor func viewModelShowsTheResult() async {
        let model = DownloadViewModel()
        await withCheckedContinuation { continuation in
            model.start(.value("data")) { continuation.resume() }
        }
        #expect(model.text == "DATA")
        #expect(!model.isLoading && !model.wasStopped)
    }

    @Test @MainActor func viewModelStopsTheDownload() async {
        let model = DownloadViewModel()
        let (work, _, cancels) = pendingWork(String.self)
        await withCheckedContinuation { continuation in
            model.start(work) { continuation.resume() }
            model.stop()
        }
        #expect(model.wasStopped)
        #expect(model.text.isEmpty)
        #expect(cancels.current == 1)
    }
}
