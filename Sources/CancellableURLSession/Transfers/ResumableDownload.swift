public import Cancellable
public import Foundation
public import PromiseCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A download that can pause: it stops now, keeps the bytes it has, and continues later from there — on Linux too,
/// with plain HTTP ranges.
///
/// ```swift
/// let download = session.resumableDownload(from: url, to: file) { showProgress($0) }
/// download.promise.done { file, _ in open(file) }.catch { show($0) }
///
/// pauseButton.onTap {
///     download.pause().done { resumeData in saved = resumeData }   // the bytes so far stay on disk
/// }
/// resumeButton.onTap {
///     guard let saved else { return }
///     let resumed = session.resumeDownload(saved) { showProgress($0) }   // progress continues from saved.bytesKept
///     resumed.promise.done { file, _ in open(file) }
/// }
/// ```
///
/// Pausing is a cancellation with `CancellationReason.paused`: ``promise`` rejects with
/// `CancellablePromiseError.cancelled` before ``pause()`` returns, like any cancellation, and the transfer stops (a
/// second `pause()` or `cancel()` made meanwhile on another thread returns before that).
/// What differs is the partial file: it stays, and ``resumeData`` resolves with a ``DownloadResumeData`` once the
/// transfer has stopped writing and the bytes kept are flushed to disk (`fsync`; `F_FULLFSYNC` on Apple platforms).
/// A cancellation with that reason that reaches the download through a chain
/// (`download.promise.map { … }.cancel(reason: .paused)`) pauses it too. Any other cancellation —
/// ``cancel()``, a timeout, a lost race — cancels for good: the partial file is removed and ``resumeData``
/// resolves with `nil`.
///
/// A transfer that fails with bytes kept — the connection dropped or was refused, the network went away (a
/// `URLError`), the server answered with an error status — also keeps them: ``promise`` rejects with the error and
/// ``resumeData`` resolves with resume data. A resumed download keeps the bytes it started with from the first
/// instant, so a resume from a mirror that is down leaves them as they were, ready for the next mirror. Until you
/// resume it or call ``DownloadResumeData/discard()``, the partial file stays next to the destination.
///
/// Whether the download's own ending or a cancellation wins is decided once, under the promise's cancellation lock:
/// a transfer that completes just as it is paused either wins (``promise`` fulfills, the file is in place, and
/// ``resumeData`` resolves with `nil`) or loses (the promise is rejected as paused, the file is not moved, and the
/// resume data holds every byte).
///
/// Continuing from the byte where the download stopped needs a session that delivers bytes as they arrive: any
/// session without a delegate (such as `URLSession.shared`), or one made by
/// `URLSession.withProgressReporting(configuration:delegateQueue:)`. On a session with a delegate of your own the
/// body arrives at the end: a paused download has written nothing yet, so its resume data says 0 bytes and resuming
/// starts over.
///
/// A resumable download asks for the file without a content coding (`Accept-Encoding: identity`, unless the request
/// names one): URLSession decodes a coded body, so its bytes could not be continued at a byte offset.
public final class ResumableDownload: Sendable {
    /// The download: fulfills with the destination and the response once the file is in place.
    public let promise: CancellablePromise<(url: URL, response: URLResponse)>
    /// Resolves once the transfer has stopped: with what resumes it if it was paused, or failed with bytes kept (a
    /// `URLError`, an HTTP error status); with `nil` if it finished, was cancelled for good, failed with no bytes
    /// kept, or failed in a way that resuming cannot mend (a file that did not pass its ``DownloadIntegrity``, a
    /// ``DownloadError``, a full disk).
    public let resumeData: Guarantee<DownloadResumeData?>

    /// What ``checkpoint()`` asks.
    private let takeCheckpoint: @Sendable () -> DownloadResumeData?

    init(
        promise: CancellablePromise<(url: URL, response: URLResponse)>,
        resumeData: Guarantee<DownloadResumeData?>,
        checkpoint: @escaping @Sendable () -> DownloadResumeData?
    ) {
        self.promise = promise
        self.resumeData = resumeData
        takeCheckpoint = checkpoint
    }

    /// What resumes the download from the bytes on disk now, while it goes on: save it as the download runs, and a
    /// crash, a kill or a reboot loses only what was written after it.
    ///
    /// ```swift
    /// let download = session.resumableDownload(from: url, to: file)
    /// saving = Timer.scheduledTimer(withTimeInterval: 5, repeats: true) { _ in
    ///     guard let checkpoint = download.checkpoint() else { return }
    ///     try? JSONEncoder().encode(checkpoint).write(to: stateFile, options: .atomic)
    /// }
    /// // After a relaunch:
    /// let saved = try JSONDecoder().decode(DownloadResumeData.self, from: Data(contentsOf: stateFile))
    /// session.resumeDownload(saved)
    /// ```
    ///
    /// The bytes it names have been written and flushed to disk (`fsync`; `F_FULLFSYNC` on Apple platforms) before it
    /// returns, and stay there while the download goes on: the file only grows, unless an answer starts it over — a
    /// resume of a file that changed, or a retry (``DownloadRetryPolicy``) of bytes without a strong validator — which
    /// makes every earlier checkpoint name bytes a resume then finds gone or stale: it starts over too. The flush costs
    /// a disk sync: call it every few megabytes or seconds, not on every progress report.
    ///
    /// Resuming from a checkpoint while this download still runs is refused (``DownloadError/partialFileInUse(_:)``):
    /// one partial file cannot take two downloads.
    ///
    /// - Returns: `nil` before any byte is on disk, once the download has ended (``resumeData`` then says what it
    ///   kept), on a session with a delegate of your own (the body arrives at the end), or if the file could not be
    ///   flushed.
    public func checkpoint() -> DownloadResumeData? {
        takeCheckpoint()
    }

    /// Pauses the download: cancels ``promise`` with `CancellationReason.paused`, keeping the bytes it has.
    ///
    /// ```swift
    /// download.pause().done { saved = $0 }
    /// ```
    ///
    /// - Returns: ``resumeData``: what resumes the download, once the transfer has stopped; `nil` if the download
    ///   had already finished (or finished as it was paused), or was cancelled for good. A download that had already
    ///   failed gives the resume data of that failure.
    @discardableResult
    public func pause() -> Guarantee<DownloadResumeData?> {
        promise.cancel(reason: .paused)
        return resumeData
    }

    /// Cancels the download for good: the transfer stops and the partial file is removed.
    ///
    /// - Returns: whether this call cancelled the download (`false` if it had already finished or stopped).
    @discardableResult
    public func cancel() -> Bool {
        promise.cancel()
    }
}
