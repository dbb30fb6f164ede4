// CancellablePromiseKit 0.2/0.3 client code (its README's patterns), unchanged except for
// `import CancellablePromiseKit` → `import Cancellable`, compiled in Swift 5 language mode.

import Cancellable
import Foundation
import PromiseCore

final class LegacyDownloader {
    // Cancel handlers run on the cancelling thread and `done` on the main queue: guard the log.
    private let lock = NSLock()
    private var entries: [String] = []

    var progress: [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }

    func record(_ entry: String) {
        lock.lock()
        entries.append(entry)
        lock.unlock()
    }

    /// The README's first example: a resolver body that returns its cancel handler.
    func download(_ name: String, delay: TimeInterval) -> CancellablePromise<String> {
        CancellablePromise<String> { resolver in
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + delay)
            timer.setEventHandler { resolver.fulfill(name) }
            timer.resume()
            return {
                timer.cancel()
                self.record("cancelled \(name)")
            }
        }
    }

    /// `init(resolver:)` spelled out, and `init(using:cancel:)`.
    func wrapped() -> CancellablePromise<Int> {
        let (promise, resolver) = Promise<Int>.pending()
        let cancellable = CancellablePromise(using: promise, cancel: { resolver.reject(PMKError.cancelled) })
        resolver.fulfill(1)
        return cancellable
    }

    /// The wrapper pattern with a cancel promise and `when(_:while:)`.
    func wrapper() -> CancellablePromise<String> {
        CancellablePromise<String>(wrapper: { cancelPromise in
            when(self.download("wrapped", delay: 0.001).asPromise(), while: cancelPromise)
        })
    }

    /// `isEnsured`: a fulfilled condition never cancels; one rejected before delivery does.
    func ensured(condition: Promise<Void>) -> Promise<String> {
        when(download("ensured", delay: 0.001), while: condition, isEnsured: true)
    }

    func races() -> CancellablePromise<String> {
        let mirrors = [download("slow", delay: 5), download("fast", delay: 0.001)]
        let first = race(mirrors, autoCancel: true)
        let plain: CancellablePromise<String> = race(mirrors)
        _ = plain
        return first
    }

    func combinations() -> CancellablePromise<[String]> {
        let parts = [download("a", delay: 0.001), download("b", delay: 0.001)]
        let all: CancellablePromise<[String]> = when(fulfilled: parts)
        let resolved: CancellablePromise<[PromiseCore.Result<String>]> = when(resolved: parts, autoCancel: false)
        _ = resolved
        return all.then { values -> CancellablePromise<[String]> in
            when(fulfilled: values.map { self.download($0 + "!", delay: 0.001) }, autoCancel: true)
        }
    }

    func chained() -> CancellablePromise<Int> {
        download("x", delay: 0.001)
            .map { $0.count }
            .then { count -> CancellablePromise<Int> in .value(count + 1) }
    }

    func handling(_ promise: CancellablePromise<String>, completion: @escaping () -> Void) {
        promise.done { value in
            self.record(value)
        }.catch(policy: .allErrors) { error in
            if error.isCancelled {
                self.record("was cancelled")
            } else if case CancellablePromiseError.cancelled = error {
                self.record("never")
            }
        }.finally {
            completion()
        }
    }

    /// PromiseKit's Void `recover` forms on a cancellable chain (issue 14, item 1): the guarantee form, the
    /// throwing form, and both as PromiseKit's own types when annotated.
    func saveIgnoringErrors(_ name: String) -> CancellablePromise<Void> {
        let saved: CancellablePromise<Void> = download(name, delay: 5).done { _ in }.recover { _ in }
        let strict = download(name, delay: 0.001).done { _ in }.recover { error in
            guard error is PMKError else { throw error }
        }
        let guarantee: Guarantee<Void> = download(name, delay: 0.001).done { _ in }.recover { _ in }
        let promise: Promise<Void> = download(name, delay: 0.001).asVoid().recover { error in throw error }
        let names = Promise.value([name]).asCancellable().mapValues { $0.uppercased() }
        _ = (strict, guarantee, promise, names)
        return saved
    }

    /// A side branch whose result is dropped, as CancellablePromiseKit code writes side effects (issue 14,
    /// item 8): it does not keep the download alive once the screen's own chain is cancelled.
    func downloadWithSpinner(_ name: String) -> CancellablePromise<Int> {
        let download = self.download(name, delay: 5)
        _ = download.ensure { self.record("spinner stopped") }
        return download.map { $0.count }
    }

    /// The wrapper pattern, released while pending (issue 14, item 4): its `cancelPromise` is fulfilled, so what
    /// waits on it ends.
    func orphanedWrapper(whenReleased: @escaping () -> Void) {
        let (never, _) = Promise<String>.pending()
        _ = CancellablePromise<String>(wrapper: { cancelPromise in
            cancelPromise.done { whenReleased() }.cauterize()
            return when(never, while: cancelPromise)
        })
    }

    func stop(_ promise: CancellablePromise<String>) {
        promise.cancel()
        _ = promise.isCancelled
        _ = promise.asPromise()
        _ = Promise.value(1).asCancellable()
    }
}
