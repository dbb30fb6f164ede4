import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The ending of a segmented download: checking the complete file, settling the promise with the file's fate, and the
// resume data of what it keeps (design note 0007, "One ending").
extension SegmentedDownloadEngine {
    /// Checks the complete file's length and digest, and hands the verdict to the machine.
    func verify(_ context: Context) {
        guard let snapshot = context.snapshot else { preconditionFailure("a download verified without a snapshot") }
        let total = snapshot.totalBytes ?? 0
        var outcome: Result<SegmentedDownloadResult>
        do {
            let size = try PartialFile.size(of: partial.url)
            if size != total { throw DownloadIntegrityError.lengthMismatch(expected: total, actual: size) }
            if let integrity {
                // Every piece passed already (the machine completes only then), and the SHA-256 hashed the bytes
                // that came in order as they came: what is left is to read back the rest.
                if context.reporting, integrity.hasWorkLeft(forFileOf: total, digest: digest, piecesVerified: true) {
                    progress?(snapshot.with(phase: .verifying))
                }
                try integrity.verify(fileAt: partial.url, digest: digest, piecesVerified: true)
            }
            outcome = .fulfilled(
                SegmentedDownloadResult(url: partial.destination, totalBytes: total, mirrors: snapshot.mirrors)
            )
        } catch {
            outcome = .rejected(error)
        }
        var passed = false
        if case .fulfilled = outcome { passed = true }
        let actions = state.withLock { $0.step { $0.verified(passed: passed) } }
        var context = context
        context.outcome = outcome
        perform(actions, context)
    }

    /// Settles the promise with `context`'s outcome, carrying out the file's fate first — unless a cancellation came
    /// first: then the fate that cancellation gives it.
    func end(_ ending: DownloadMachine.Ending, _ context: Context) {
        guard let outcome = context.outcome, let resolver = state.withLock({ $0.resolver }) else {
            preconditionFailure("a download ended before it started, or without an outcome")
        }
        var ending = ending
        // Bytes that cannot be flushed to disk are not kept: resume data would name bytes a power loss can take.
        if case .keep = ending.fate, !partial.flush() {
            ending = DownloadMachine.Ending(fate: .remove, keptIfPaused: nil)
        }
        let decision = resolver.decide {
            switch ending.fate {
            case .commit:
                if context.reporting, let snapshot = context.snapshot {
                    progress?(snapshot.with(phase: .movingIntoPlace))
                }
                do { try partial.commit() } catch { return .rejected(error) }
            case .keep(let kept):
                keep(kept, flushed: true)
            case .remove:
                partial.remove()
                publish(nil)
            }
            return outcome
        }
        switch decision {
        case .resolved:
            // A committed file has no resume data: said once the promise is fulfilled.
            if ending.fate == .commit { publish(nil) }
        case .cancelled(let reason):
            switch ending.fateIfCancelled(by: reason) {
            case .keep(let kept):
                keep(kept, flushed: ending.fate == .keep(kept))
            case .commit, .remove:
                partial.remove()
                publish(nil)
            }
        case .resolvedAlready:
            partial.remove()
            publish(nil)
        }
    }

    /// Stops every request and rejects with `error`, unless the download has stopped already. A resumable download
    /// that lost every mirror keeps its bytes, once they are flushed to disk.
    func fail(_ error: Error) {
        let actions = state.withLock { $0.step { $0.fail(mendable: error is SegmentedDownloadError) } }
        perform(actions, Context(outcome: .rejected(error)))
    }

    /// What resumes the download from the bytes on disk now, while it goes on; `nil` unless it is running and its
    /// partial file could be flushed.
    ///
    /// The ranges are taken under the lock that every write holds, so each byte they name has been written; the
    /// file is flushed after that (a flush applies to every write made before it), so each is on disk before the
    /// resume data is returned. Bytes past a segment's frontier are written again only when a rollback
    /// (``SegmentSchedule/drop(_:_:at:)``) or a failed piece (``SegmentSchedule/pieceFailed(_:at:)``) distrusts
    /// them, and then with bytes of the same file: what the resume data names stays on disk.
    func checkpoint() -> SegmentedDownloadResumeData? {
        guard let kept = state.withLock({ $0.machine.checkpoint }), partial.flush() else { return nil }
        return resumeData(naming: kept)
    }

    /// The resume data naming `kept`, through the checks decoded resume data gets, so that the library never hands
    /// out data it would refuse; `nil` if those fail.
    private func resumeData(naming kept: DownloadMachine.Kept) -> SegmentedDownloadResumeData? {
        try? SegmentedDownloadResumeData(
            mirrors: requests.map { $0.url! },
            destination: partial.destination,
            partialFile: partial.url,
            totalBytes: kept.total,
            validator: kept.validator,
            keptRanges: kept.total == nil ? [] : kept.ranges,
            integrity: integrity
        )
    }

    /// Keeps the partial file for a resume once it is flushed (unless `flushed` already), and publishes its resume
    /// data; removes the file instead if it cannot be flushed or named.
    func keep(_ kept: DownloadMachine.Kept, flushed: Bool = false) {
        guard flushed || partial.flush(), let data = resumeData(naming: kept) else {
            partial.remove()
            return publish(nil)
        }
        publish(data)
    }

    /// Runs `body` once the download has ended, after its resume data is published; set before it starts.
    func whenEnded(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.ended = body }
    }

    /// The last thing the download does with its partial file, on every ending: gives up its hold on the file, then
    /// hands `data` to whoever waits for the resume data.
    func publish(_ data: SegmentedDownloadResumeData?) {
        PartialFile.release(partial.url)  // held since the download was made
        resumeData?(data)
        state.withLock { state in
            state.machine.finished()
            defer { state.ended = nil }
            return state.ended
        }?()
    }
}
