import Cancellable
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where one download stands: a pure state machine. ``FileDownload`` hands it the response, the body and the ending,
/// and carries out on the partial file what each transition returns.
///
/// Every state holds the bytes kept, from the first instant: a resumed download holds the bytes it started with
/// before its request is even sent, so every ending — a pause before the server answered, a refused connection, a
/// redirect that leads nowhere — keeps exactly them, unless the user cancelled for good or the server proved them
/// stale.
struct DownloadState {
    private enum Phase {
        /// The request is on its way, redirected, or waiting for the headers: the file holds `kept`, untouched.
        case awaitingResponse(KeptBytes)
        /// The response's body goes into the file; `position` is the file offset of the body's next byte. It is
        /// below `kept.count` while a `200` that repeats the validator re-sends bytes the file already holds (they
        /// are not written again), and equal to it otherwise. `before` is what the file held when this response
        /// began (nothing if it starts the file over): what this response cannot take away if it lies.
        case writing(KeptBytes, position: Int64, before: KeptBytes)
        /// The body is not the file: an error status's body, or, if `complete`, a `416`'s when the file already
        /// holds every byte.
        case closed(KeptBytes, complete: Bool)
        /// This side decided the download cannot succeed: a file error, an answer that does not continue the bytes
        /// kept (which then holds nothing), or a body longer than announced (which holds what the file held before
        /// it). `keeping` is what the ending keeps for a resume: `nil` where resuming cannot mend the failure.
        case failed(KeptBytes, Error, keeping: KeptBytes?)
        /// The transfer is over: the file holds `kept`; what becomes of it was decided by the ending.
        case ended(KeptBytes)
    }

    /// What to do with a response's body.
    enum BodyAction: Equatable {
        /// Write it into the file, emptying the file first if `truncating`.
        case write(truncating: Bool)
        /// Collect it in memory: the body of an error status, for its `HTTPStatusError`; the file keeps what it
        /// holds. (A data or upload transfer collects every body.)
        case collect
        /// Ignore it: the file already holds every byte.
        case ignore
        /// Stop the transfer: the answer does not continue the bytes kept (the ending says why).
        case cancel
    }

    /// How the download ends.
    enum Ending {
        /// Move the partial file over the destination (after checking its integrity, if asked).
        case commit
        /// Reject with `error`, keeping `kept` for a resume — or, if `nil`, removing the partial file.
        case fail(Error, keeping: KeptBytes?)
    }

    private var phase: Phase
    /// What the request asked for.
    let requested: RequestedBytes

    /// A download whose partial file holds `kept` as it starts, asking for `requested`.
    init(kept: KeptBytes, requested: RequestedBytes) {
        phase = .awaitingResponse(kept)
        self.requested = requested
    }

    /// The bytes the partial file holds now.
    var kept: KeptBytes {
        switch phase {
        case .awaitingResponse(let kept), .writing(let kept, _, _), .closed(let kept, _), .failed(let kept, _, _),
            .ended(let kept):
            kept
        }
    }

    /// What a checkpoint may name: the bytes the partial file holds that an ending would keep for a resume; `nil` once
    /// the download has ended, or failed in a way a resume cannot mend.
    var checkpointable: KeptBytes? {
        switch phase {
        case .awaitingResponse(let kept), .writing(let kept, _, _), .closed(let kept, _): kept
        case .failed(_, _, let keeping): keeping
        case .ended: nil
        }
    }

    /// How far the body has got, counted in bytes of the whole file; `nil` unless the body is being written.
    var progress: TransferProgress? {
        guard case .writing(let kept, let position, _) = phase else { return nil }
        return TransferProgress(bytesTransferred: position, totalBytesExpected: kept.totalBytes)
    }

    /// The file offset of the body's next byte; `nil` unless the body is being written.
    var position: Int64? {
        guard case .writing(_, let position, _) = phase else { return nil }
        return position
    }

    // MARK: The response

    /// Decides what the response's body is: the file from byte 0, the rest of the bytes kept, or neither.
    mutating func receive(_ response: URLResponse) -> BodyAction {
        guard case .awaitingResponse(let kept) = phase else { return fail(URLError(.badServerResponse)) }
        let answer = RangeAnswer(response)
        guard response is HTTPURLResponse else {
            // Not HTTP (a file: URL, say): the body is the whole file.
            return restart(from: kept, with: KeptBytes(count: 0, totalBytes: answer.announcedLength))
        }
        switch (requested, answer.status) {
        case (.rest(let start, let validator), 206):
            return continueAt(start, under: validator, kept: kept, answer)
        case (.rest(let start, let validator), 416):
            return finishAt(start, under: validator, kept: kept, answer)
        case (.callersRange, 206):
            // What the caller asked for: the part is the file this download writes.
            return restart(from: kept, with: KeptBytes(count: 0, totalBytes: answer.announcedLength))
        case (.whole, 206):
            // A part nobody asked for is not the file.
            return fail(DownloadError.unexpectedContentRange(answer.rangeHeader))
        case (_, 200...299):
            return receiveWholeFile(kept: kept, answer)
        default:
            phase = .closed(kept, complete: false)
            return .collect
        }
    }

    /// A `206`: the bytes continue only if ``Continuation`` says so — it starts at the bytes kept, has no content
    /// coding, names their length, and repeats their strong validator (or, without one, names the same total length,
    /// if the caller opted in).
    private mutating func continueAt(
        _ start: Int64,
        under validator: DownloadResumeData.Validator?,
        kept: KeptBytes,
        _ answer: RangeAnswer
    ) -> BodyAction {
        let reference = Continuation.Reference(
            validator: validator,
            totalBytes: kept.totalBytes,
            lengthSuffices: validator == nil && kept.totalBytes != nil
        )
        switch Continuation.check(answer, startingAt: start, reference: reference) {
        case .continues:
            let continued = KeptBytes(
                count: start,
                validator: validator ?? answer.validator,
                totalBytes: answer.range?.total ?? kept.totalBytes
            )
            phase = .writing(continued, position: start, before: kept)
            return .write(truncating: false)
        case .contentCoded(let coding):
            return fail(DownloadError.contentCoded(coding))
        case .validatorDisagrees(let expected, _):
            return fail(DownloadError.validatorNotRepeated(expected))
        case .unexpectedRange, .lengthDisagrees, .unvalidated:
            return fail(DownloadError.unexpectedContentRange(answer.rangeHeader))
        }
    }

    /// A `416` to the request for the rest: the file is complete if it is exactly the bytes kept long (and the answer
    /// names no other validator); any other `416` means the file is not the one kept.
    private mutating func finishAt(
        _ start: Int64,
        under validator: DownloadResumeData.Validator?,
        kept: KeptBytes,
        _ answer: RangeAnswer
    ) -> BodyAction {
        let length = answer.range?.total ?? kept.totalBytes
        let contradicted = validator.map { Continuation.relation(of: answer, to: $0) == .contradicts } ?? false
        guard length == start, !contradicted else {
            return fail(DownloadError.rangeNotSatisfiable(serverLength: length))
        }
        phase = .closed(KeptBytes(count: start, validator: validator, totalBytes: length), complete: true)
        return .ignore
    }

    /// A `2xx` with the whole file: a new download; a server that ignores ranges; or a file that changed, so
    /// `If-Range` did not match. If ``Continuation`` finds it the file of the bytes kept — it repeats their validator,
    /// has no content coding, and names no other length — its first bytes are the ones kept, which stay, and are not
    /// written again. Otherwise the file starts over from byte 0.
    private mutating func receiveWholeFile(kept: KeptBytes, _ answer: RangeAnswer) -> BodyAction {
        let whole = KeptBytes(count: 0, validator: answer.validator, totalBytes: answer.announcedLength)
        let reference = Continuation.Reference(validator: kept.validator, totalBytes: kept.totalBytes)
        let verdict = Continuation.agreement(of: answer, announcing: whole.totalBytes, with: reference)
        if kept.count > 0, let validator = kept.validator, verdict == .continues(proven: true) {
            let same = KeptBytes(
                count: kept.count,
                validator: validator,
                totalBytes: whole.totalBytes ?? kept.totalBytes
            )
            phase = .writing(same, position: 0, before: kept)
            return .write(truncating: false)
        }
        return restart(from: kept, with: whole)
    }

    private mutating func restart(from kept: KeptBytes, with whole: KeptBytes) -> BodyAction {
        phase = .writing(whole, position: 0, before: .nothing)
        return .write(truncating: kept.count > 0)
    }

    /// The answer cannot continue the bytes kept: they are not trusted any more.
    private mutating func fail(_ error: Error) -> BodyAction {
        phase = .failed(.nothing, error, keeping: nil)
        return .cancel
    }

    /// The body runs past the file's announced length `total`: this answer is not trusted, the bytes the file held
    /// before it are.
    private mutating func failLongerThan(_ total: Int64, keeping before: KeptBytes) {
        let error = DownloadError.bodyLongerThanAnnounced(totalBytes: total)
        phase = .failed(before, error, keeping: before.count > 0 ? before : nil)
    }

    // MARK: The body

    /// Takes the next `count` bytes of the body.
    ///
    /// - Returns: how many of them the file already holds (they are not written again); `nil` if they run past the
    ///   file's announced length: the download then fails with
    ///   ``DownloadError/bodyLongerThanAnnounced(totalBytes:)``,
    ///   keeping the bytes the file held before this response. Stop the transfer.
    mutating func admit(_ count: Int64) -> Int64? {
        guard case .writing(let kept, let position, let before) = phase else { return count }
        if let total = kept.totalBytes, count > total - position {
            failLongerThan(total, keeping: before)
            return nil
        }
        return min(count, max(0, kept.count - position))
    }

    /// The next `count` bytes of the body are in the file (written now, or held already).
    mutating func advance(by count: Int64) {
        guard case .writing(var kept, let position, let before) = phase else { return }
        kept.count = max(kept.count, position + count)
        phase = .writing(kept, position: position + count, before: before)
    }

    /// The partial file is the whole body, `size` bytes, moved in at once (a session without live delivery).
    ///
    /// - Returns: `false` if that is more than the file's announced length: the download failed as in
    ///   ``admit(_:)``, keeping nothing.
    mutating func filled(size: Int64) -> Bool {
        guard case .writing(var kept, _, let before) = phase else { return true }
        if let total = kept.totalBytes, size > total {
            failLongerThan(total, keeping: .nothing)  // the body replaced the file: nothing earlier is in it
            return false
        }
        kept.count = size
        phase = .writing(kept, position: size, before: before)
        return true
    }

    /// A file error: the download cannot succeed. The bytes written so far are still the file's.
    mutating func failWriting(_ error: Error) {
        phase = .failed(kept, error, keeping: nil)
    }

    // MARK: Endings

    /// The transfer is over, with `taskError` if it failed, and `statusError` if the response was an error status.
    ///
    /// - Returns: how the download ends if no cancellation wins the decision: it commits only a file that is whole
    ///   (every byte the server announced, none beyond it).
    mutating func end(taskError: Error?, statusError: Error?) -> Ending {
        let kept = self.kept
        defer { phase = .ended(kept) }
        let keeping = kept.count > 0 ? kept : nil
        switch phase {
        case .awaitingResponse:
            return .fail(taskError ?? URLError(.badServerResponse), keeping: keeping)
        case .writing(_, let position, let before):
            if position < kept.count {
                if let taskError { return .fail(taskError, keeping: keeping) }
                // The body ended before the bytes the file already holds: the server's file is shorter than them.
                return .fail(DownloadError.rangeNotSatisfiable(serverLength: position), keeping: nil)
            }
            if let total = kept.totalBytes, kept.count < total {
                // The body ended before every byte the server announced: what arrived is still the file's start, but
                // the announced length is a claim the server did not keep. It stays only if an earlier answer had
                // already named it; otherwise it is not recorded, so that a claim (10^15 bytes, say) cannot make the
                // next, honest answer look like another file.
                let proven = KeptBytes(
                    count: kept.count,
                    validator: kept.validator,
                    totalBytes: before.totalBytes == total ? total : nil
                )
                return .fail(taskError ?? URLError(.networkConnectionLost), keeping: proven)
            }
            if let taskError { return .fail(taskError, keeping: keeping) }
            return .commit
        case .closed(_, let complete):
            if complete && taskError == nil { return .commit }
            return .fail(statusError ?? taskError ?? URLError(.badServerResponse), keeping: keeping)
        case .failed(_, let error, let keeping):
            return .fail(error, keeping: keeping)
        case .ended:
            preconditionFailure("A download's ending was decided twice: the transfer completes once")
        }
    }

    /// A cancellation won: a pause keeps the bytes the file holds, whatever state the transfer was in; any other
    /// reason cancels for good.
    mutating func cancel(_ reason: CancellationReason) -> Ending {
        let kept = self.kept
        phase = .ended(kept)
        return .fail(CancellablePromiseError(reason: reason), keeping: reason == .paused ? kept : nil)
    }
}
