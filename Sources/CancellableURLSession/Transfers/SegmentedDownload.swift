public import Cancellable
import Foundation
public import PromiseCore

/// A segmented download that can pause: it stops every request, keeps every byte written, and continues later —
/// from the same mirrors or others — fetching only the bytes still missing.
///
/// ```swift
/// let download = session.resumableSegmentedDownload(from: mirrors, to: file)
/// download.promise.done { open($0.url) }.catch { show($0) }
///
/// pauseButton.onTap {
///     download.pause().done { saved = $0 }                 // every segment's bytes stay on disk
/// }
/// resumeButton.onTap {
///     guard let saved else { return }
///     session.resumeSegmentedDownload(saved).promise.done { open($0.url) }
/// }
/// ```
///
/// Pausing is a cancellation with `CancellationReason.paused`, as for a ``ResumableDownload``: ``promise`` rejects with
/// `CancellablePromiseError.cancelled` at once, every request stops, and ``resumeData`` resolves with a
/// ``SegmentedDownloadResumeData`` once nothing writes to the file any more and its bytes have been flushed to disk
/// (`fsync`; on Apple platforms `F_FULLFSYNC`, which flushes the drive's cache too). Any other cancellation removes the
/// partial file and resolves ``resumeData`` with `nil`.
///
/// A download that fails because every mirror was dropped
/// (``SegmentedDownloadError/everyMirrorDropped(_:)``) keeps its bytes too, for a resume from mirrors that work. One
/// that fails its ``DownloadIntegrity`` check, or cannot write its file, keeps nothing.
public final class SegmentedDownload: Sendable {
    /// The download: fulfills once the file is in place.
    public let promise: CancellablePromise<SegmentedDownloadResult>
    /// Resolves once the download has stopped: with what resumes it if it was paused or every mirror was dropped,
    /// with `nil` if it finished, was cancelled for good, or failed in a way a resume cannot mend.
    public let resumeData: Guarantee<SegmentedDownloadResumeData?>

    /// What ``checkpoint()`` asks.
    private let takeCheckpoint: @Sendable () -> SegmentedDownloadResumeData?

    init(
        promise: CancellablePromise<SegmentedDownloadResult>,
        resumeData: Guarantee<SegmentedDownloadResumeData?>,
        checkpoint: @escaping @Sendable () -> SegmentedDownloadResumeData?
    ) {
        self.promise = promise
        self.resumeData = resumeData
        takeCheckpoint = checkpoint
    }

    /// What resumes the download from the bytes on disk now, while it goes on: save it as the download runs, and a
    /// crash, a kill or a reboot loses only what was written after it.
    ///
    /// ```swift
    /// let download = session.resumableSegmentedDownload(from: mirrors, to: file)
    /// saving = Timer.scheduledTimer(withTimeInterval: 5, repeats: true) { _ in
    ///     guard let checkpoint = download.checkpoint() else { return }
    ///     try? JSONEncoder().encode(checkpoint).write(to: stateFile, options: .atomic)
    /// }
    /// // After a relaunch:
    /// let saved = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: Data(contentsOf: stateFile))
    /// session.resumeSegmentedDownload(saved)
    /// ```
    ///
    /// Every range it names has been written and flushed to disk (`fsync`; `F_FULLFSYNC` on Apple platforms) before it
    /// returns. Written bytes are written again only where they are not trusted — a dropped mirror's bytes no validator
    /// proves, a piece that failed its digest — and then with the same file's bytes, so the ranges stay on disk while
    /// the download goes on: a resume from it after a crash fetches only what it does not name (and, with
    /// ``DownloadIntegrity/pieces``, checks again each piece it kept whole). The flush costs a disk sync: call it every
    /// few megabytes or seconds, not on every progress report.
    ///
    /// Resuming from a checkpoint while this download still runs is refused
    /// (``DownloadError/partialFileInUse(_:)``): one partial file cannot take two downloads.
    ///
    /// - Returns: `nil` once the download has ended (``resumeData`` then says what it kept), or if the file could not
    ///   be flushed.
    public func checkpoint() -> SegmentedDownloadResumeData? {
        takeCheckpoint()
    }

    /// Pauses the download: cancels ``promise`` with `CancellationReason.paused`, keeping every byte written.
    ///
    /// ```swift
    /// download.pause().done { saved = $0 }
    /// ```
    ///
    /// - Returns: ``resumeData``: `nil` if the download had already finished (or finished as it was paused), or was
    ///   cancelled for good.
    @discardableResult
    public func pause() -> Guarantee<SegmentedDownloadResumeData?> {
        promise.cancel(reason: .paused)
        return resumeData
    }

    /// Cancels the download for good: every request stops and the partial file is removed.
    ///
    /// - Returns: whether this call cancelled the download (`false` if it had already finished or stopped).
    @discardableResult
    public func cancel() -> Bool {
        promise.cancel()
    }
}
