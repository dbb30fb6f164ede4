import Foundation

extension SegmentSchedule {
    // MARK: Asking for the rest of the file

    /// The answer to transfer `transfer`'s request for every byte from its start on (``Requests/rest``): a `206` that
    /// continues the bytes written, a `416` that proves them the whole file, or a `2xx` with the whole file.
    ///
    /// - Returns: whether to take its body, and what to do now.
    mutating func acceptRest(_ answer: RangeAnswer, for transfer: Transfer, at now: TimeInterval) -> (Bool, [Action]) {
        switch answer.status {
        case 206 where requests == .part:
            // The part the caller asked for: the file this download writes.
            return acceptWholeFile(answer, for: transfer, at: now)
        case 206 where transfer.start > 0:
            let verdict = Continuation.check(answer, startingAt: transfer.start, reference: reference)
            // The bytes from here on continue the file only if something vouches for it — its validator, or its
            // length (named before, or by this answer: a `*` length is no length) — and the body's end is known.
            let length = total ?? answer.range?.total ?? expectedLength
            guard case .continues(let proven) = verdict, validator != nil || length != nil,
                answer.range?.total != nil || total != nil
            else {
                let reason: MirrorDropReason =
                    switch verdict {
                    case .continues, .unvalidated: .unexpectedContentRange(answer.rangeHeader)
                    default: MirrorDropReason(verdict)
                    }
                return (false, drop(transfer.mirror, reason, at: now))
            }
            if let length = answer.range?.total, total == nil { total = length }
            let setsValidator = validator == nil && answer.validator != nil
            if setsValidator { validator = answer.validator }
            if let total { fitSegments(to: total) }
            transfers[transfer.id]?.accepted = true
            transfers[transfer.id]?.proven = proven || setsValidator
            return (true, [])
        case 206:
            // A part of a request that asked for no part: not the file.
            return (false, drop(transfer.mirror, .unexpectedContentRange(answer.rangeHeader), at: now))
        case 416 where transfer.start > 0 && requests == .rest:
            return finishRest(answer, for: transfer, at: now)
        case 200...299 where answer.status != 206, 0:
            // The whole file; or an answer that is not HTTP (a `file:` URL), which is the whole file too.
            return acceptWholeFile(answer, for: transfer, at: now)
        default:
            // An error status: its body is collected for the error the download rejects with
            // (``collectsErrorBody(of:)``), and the transfer fails as it ends.
            transfers[transfer.id]?.errorStatus = answer.status
            transfers[transfer.id]?.retryAfter = answer.retryAfter
            return (false, [])
        }
    }

    /// Whether transfer `id` answered with an error status whose body is to be collected, not written: its ending
    /// fails it with that status (``end(_:fault:at:)``).
    func collectsErrorBody(of id: Int) -> Bool {
        transfers[id]?.errorStatus != nil
    }

    /// A `416` to the request for the rest: the bytes written are the whole file if the file is exactly that long
    /// (named by the answer, or known already) and the answer names no other validator. Any other `416` means the
    /// file is not the one written.
    private mutating func finishRest(
        _ answer: RangeAnswer,
        for transfer: Transfer,
        at now: TimeInterval
    ) -> (Bool, [Action]) {
        let length = answer.range?.total ?? total
        let contradicted = validator.map { Continuation.relation(of: answer, to: $0) == .contradicts } ?? false
        guard let length, length == transfer.start, length == segments[transfer.segment].done, !contradicted,
            expectedLength.map({ $0 == length }) ?? true
        else { return (false, drop(transfer.mirror, .unexpectedContentRange(answer.rangeHeader), at: now)) }
        total = length
        fitSegments(to: length)
        forget(transfer.id)
        return (false, schedule(at: now))
    }

    /// A `2xx` with the whole file — a new download; a server that ignores ranges; a file that changed, so `If-Range`
    /// did not match — or the `206` of the caller's part, which is the file this download writes. If ``Continuation``
    /// finds it the file of the bytes written — it repeats their strong validator, has no content coding, names no
    /// other length — its first bytes are the ones written, which stay and are not written again. Otherwise the file
    /// starts over from byte 0, emptied first if it may hold bytes.
    private mutating func acceptWholeFile(
        _ answer: RangeAnswer,
        for transfer: Transfer,
        at now: TimeInterval
    ) -> (Bool, [Action]) {
        let length = answer.announcedLength
        if let expectedLength, let length, length != expectedLength {
            let reason = MirrorDropReason.lengthDisagrees(expected: expectedLength, announced: length)
            return (false, drop(transfer.mirror, reason, at: now))
        }
        let sameFile = Continuation.agreement(of: answer, announcing: length, with: reference)
        let samePart = requests != .part || answer.range == partRange
        if written > 0, validator != nil, sameFile == .continues(proven: true), samePart, (length ?? .max) >= written {
            if let length, total == nil { total = length }
            if let total { fitSegments(to: total) }
            transfers[transfer.id]?.start = 0
            transfers[transfer.id]?.position = 0
            transfers[transfer.id]?.accepted = true
            transfers[transfer.id]?.proven = true
            return (true, [])
        }
        let truncating = fileMayHoldBytes
        startOver(with: answer, for: transfer)
        return (true, truncating ? [.truncate] : [])
    }

    /// The file starts over from byte 0 with `answer`'s body: nothing written is kept, nothing verified stays so, and
    /// the answer is the reference — its length, if it names one, and its validator.
    private mutating func startOver(with answer: RangeAnswer, for transfer: Transfer) {
        precondition(transfers.count == 1, "a download asking for the rest of its file ran two requests")
        total = answer.announcedLength
        validator = answer.validator
        mustRepeatValidator = false
        partRange = requests == .part ? answer.range : nil
        segments = SegmentList()
        appendRest(from: 0)
        verified = Array(repeating: false, count: verified.count)
        verifiedCount = 0
        authors = [:]
        guard !segments.isEmpty else {
            // An empty file: nothing to fetch, and no segment for its transfer, which has nothing to do but end.
            transfers[transfer.id] = nil
            mirrors[transfer.mirror].connections -= 1
            return
        }
        segments[0].transfers = [transfer.id]
        transfers[transfer.id] = Transfer(
            id: transfer.id,
            mirror: transfer.mirror,
            segment: 0,
            start: 0,
            requestedEnd: Self.openEnd,
            position: 0,
            accepted: true,
            proven: answer.validator != nil,
            startedAt: transfer.startedAt,
            age: transfer.age,
            idle: transfer.idle,
            received: transfer.received
        )
    }

    /// A body that was asked for to the end of the file, of a length nobody named, ended without a fault: the file is
    /// as long as what was written — unless the body ended before bytes the file already holds under its validator, a
    /// server whose file is shorter than them.
    mutating func endRest(_ transfer: Transfer, at now: TimeInterval) -> [Action] {
        let done = segments[transfer.segment].done
        guard transfer.position >= done else {
            return fail(
                transfer.id,
                .endedEarly(received: transfer.position - transfer.start, expected: done - transfer.start),
                at: now
            )
        }
        total = done
        fitSegments(to: done)
        forget(transfer.id)
        return schedule(at: now)
    }
}
