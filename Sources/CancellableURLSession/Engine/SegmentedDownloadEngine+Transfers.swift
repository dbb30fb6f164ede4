import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A segmented download's transfers: what their callbacks do, and the requests they send.
extension SegmentedDownloadEngine {
    // MARK: A transfer's callbacks

    /// What to do with a response's body.
    enum Take: Sendable, Equatable {
        /// Write what the schedule admits of it.
        case write
        /// Collect it for the ``HTTPStatusError`` of an error status (asking one URL for its file).
        case collect
        /// Stop the transfer.
        case refuse
    }

    /// Checks a response: what to do with its body.
    func accept(_ response: URLResponse, for id: Int) -> Take {
        let answer = RangeAnswer(response)
        let (take, actions) = state.withLock { state in
            let knewLength = state.schedule.total != nil
            let (take, actions) = state.machine.accept(answer, for: id, at: now)
            if !knewLength { checkPiecesOnceTheLengthIsKnown(&state) }
            let collect = !take && state.machine.isRunning && state.schedule.collectsErrorBody(of: id)
            return (take ? Take.write : collect ? .collect : .refuse, actions)
        }
        perform(actions)
        settle(reportingProgress: reportsAnswersAndEndings)
        return take
    }

    /// Bytes of a transfer that are not the file arrived (an error status's body): it is not stalled.
    func heard(from id: Int) {
        state.withLock { $0.machine.heard(from: id) }
    }

    /// The file's length became known only now (a body of no announced length ended; a resumed file's length was
    /// named): the pieces written whole so far, which could not be cut into pieces before, are queued to be checked.
    /// Under the lock.
    private func checkPiecesOnceTheLengthIsKnown(_ state: inout State) {
        guard let total = state.schedule.total, total > 0 else { return }
        queueCompletedPieces(overlapping: 0..<total, &state)
    }

    /// Writes what the schedule admits of `data`: `false` to stop the transfer.
    func receive(_ data: Data, for id: Int) -> Bool {
        var failure: Error?
        let (goOn, actions) = state.withLock { state -> (Bool, [DownloadMachine.Action]) in
            guard let handle = state.handle else { return (false, []) }
            let run = digest == nil ? nil : state.schedule.segmentStart(of: id)  // written from there to the write
            let (write, goOn, actions) = state.machine.receive(data.count, for: id, at: now)
            guard let write, !write.range.isEmpty else { return (goOn, actions) }
            do {
                let bytes = data.subdata(in: write.range)
                try handle.writeAll(bytes, at: write.offset)
                digest?.append(bytes, at: write.offset, writtenFrom: run ?? write.offset)
                check(write.offset..<(write.offset + Int64(write.range.count)), &state)
                return (goOn, actions)
            } catch {
                state.machine.unwrite(write, for: id)
                failure = error
                return (false, actions)
            }
        }
        perform(actions)
        if let failure { fail(failure) } else { settle() }
        return goOn
    }

    /// A transfer ended: its error, if it failed, and the error of the error status it answered, if it did.
    func complete(_ id: Int, error: Error?, statusError: HTTPStatusError? = nil) {
        let fault = error.map(MirrorDropReason.failure(of:))
        let actions = state.withLock { state in
            // Only a transfer the schedule still runs meets a fault: one it stopped ends cancelled, saying nothing.
            if state.machine.isRunning, state.schedule.transfers[id] != nil, let failure = statusError ?? error {
                state.lastFault = failure
            }
            let knewLength = state.schedule.total != nil
            let actions = state.machine.transferEnded(id, fault: fault, at: now)
            if !knewLength { checkPiecesOnceTheLengthIsKnown(&state) }
            return actions
        }
        perform(actions)
        settle(reportingProgress: reportsAnswersAndEndings)
    }

    // MARK: Requests

    /// `base` asking for the bytes `[start, end)` of the file, without a content coding, whose byte offsets would not
    /// be the file's; or, if `end` is ``SegmentSchedule/openEnd``, for every byte from `start` on: from byte 0,
    /// `base` as the caller made it (its own `Range`, if it names a part; its own `Accept-Encoding`, if it names one),
    /// and past it, the rest, only if the file is still the one `validator` names (`If-Range`: if not, the answer is
    /// the whole file).
    ///
    /// ```swift
    /// SegmentedDownloadEngine.request(base, from: 100, to: SegmentSchedule.openEnd, ifRange: .entityTag("\"v1\""))
    /// // Range: bytes=100-, If-Range: "v1", Accept-Encoding: identity
    /// ```
    static func request(
        _ base: URLRequest,
        from start: Int64,
        to end: Int64,
        ifRange validator: DownloadResumeData.Validator?
    ) -> URLRequest {
        var request = base
        if end != SegmentSchedule.openEnd {
            request.setValue("bytes=\(start)-\(end - 1)", forHTTPHeaderField: "Range")
            request.setValue(nil, forHTTPHeaderField: "If-Range")
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            return request
        }
        if request.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if start > 0 {
            request.setValue("bytes=\(start)-", forHTTPHeaderField: "Range")
            request.setValue(validator?.headerValue, forHTTPHeaderField: "If-Range")
        }
        return request
    }

    /// Empties the file before an answer that starts it over writes its first byte, and starts what was hashed of it
    /// over: the digest from byte 0, and no verdict on a piece being checked is trusted. A file that cannot be emptied
    /// fails the download.
    func truncate() {
        let failure = state.withLock { state -> Error? in
            guard let handle = state.handle else { return nil }
            do {
                try PartialFile.truncate(handle, at: 0)
            } catch {
                return error
            }
            digest?.reset()
            checker?.touch(0..<SegmentSchedule.openEnd)
            return nil
        }
        if let failure { fail(failure) }
    }
}
