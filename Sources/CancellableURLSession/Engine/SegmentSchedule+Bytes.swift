import Foundation

extension SegmentSchedule {
    // MARK: Bytes

    /// Where a piece of a transfer's body goes.
    struct Write: Sendable, Equatable {
        /// The file offset of the first byte to write.
        var offset: Int64
        /// Which bytes of the piece to write: `range` (may be empty).
        var range: Range<Int>
    }

    /// Takes `count` bytes of transfer `id`'s body.
    ///
    /// - Returns: which of them to write (those that continue its segment's frontier, up to its end), whether the
    ///   transfer should go on, and what to do now (a segment that is complete stops its other transfers).
    mutating func receive(_ count: Int, for id: Int, at now: TimeInterval) -> (Write?, Bool, [Action]) {
        guard var transfer = transfers[id], transfer.accepted else { return (nil, false, []) }
        let index = transfer.segment
        let segment = segments[index]
        let pieceStart = transfer.position
        let pieceEnd = pieceStart + Int64(count)
        if total == nil, let expectedLength, pieceEnd > expectedLength {
            // A body of no announced length that runs past the length the caller expects: not the file, and not
            // written to disk without end.
            let reason = MirrorDropReason.lengthDisagrees(expected: expectedLength, announced: pieceEnd)
            return (nil, false, drop(transfer.mirror, reason, at: now))
        }
        transfer.position = pieceEnd
        transfer.received += Int64(count)
        transfer.idle = 0
        transfers[id] = transfer
        mirrors[transfer.mirror].received += Int64(count)
        mirrors[transfer.mirror].speed = Self.speed(transfer, at: now)
        let from = max(pieceStart, segment.done)
        let to = min(pieceEnd, segment.end)
        var write: Write?
        if from < to {
            write = Write(offset: from, range: Int(from - pieceStart)..<Int(to - pieceStart))
            fileMayHoldBytes = true
            segments[index].done = to
            mirrors[transfer.mirror].written += to - from
            for piece in pieces?.pieces(overlapping: from..<to) ?? 0..<0 {
                // A verified piece written again (after a rollback) is checked again: the digest vouched for the
                // bytes it read, not for these.
                if verified[piece] {
                    verified[piece] = false
                    verifiedCount -= 1
                }
                authors[piece, default: []].insert(transfer.mirror)
            }
        }
        guard segments[index].isComplete else { return (write, true, []) }
        // A segment this mirror completed: the faults it was forgiven before are behind it.
        if write != nil { mirrors[transfer.mirror].faultsInARow = 0 }
        return (write, false, finishSegment(index, at: now))
    }

    /// Transfer `id` sent bytes that are not the file (an error status's body): it is not stalled.
    mutating func heard(from id: Int) {
        transfers[id]?.idle = 0
    }

    /// Where the segment transfer `id` writes starts: every byte from there to the segment's frontier is written.
    func segmentStart(of id: Int) -> Int64? {
        transfers[id].map { segments[$0.segment].start }
    }

    /// Undoes the bookkeeping of a write that failed: the bytes are not on disk.
    mutating func unwrite(_ write: Write, for id: Int) {
        guard let transfer = transfers[id] else { return }
        segments[transfer.segment].done = min(segments[transfer.segment].done, write.offset)
    }

    static func speed(_ transfer: Transfer, at now: TimeInterval) -> Double? {
        let elapsed = now - transfer.startedAt
        return elapsed > 0 ? Double(transfer.received) / elapsed : nil
    }

    /// Ends every transfer of the complete segment `index`, and gives their mirrors new work.
    mutating func finishSegment(_ index: Int, at now: TimeInterval) -> [Action] {
        var actions: [Action] = []
        for id in segments[index].transfers {
            actions.append(.cancel(id: id))
            forget(id)
        }
        return actions + schedule(at: now)
    }

    mutating func forget(_ id: Int) {
        guard let transfer = transfers.removeValue(forKey: id) else { return }
        segments[transfer.segment].transfers.removeAll { $0 == id }
        mirrors[transfer.mirror].connections -= 1
    }

    var keptRanges: [Range<Int64>] {
        var ranges: [Range<Int64>] = []
        for segment in segments.sorted(by: { $0.start < $1.start }) where segment.done > segment.start {
            if let last = ranges.last, last.upperBound == segment.start {
                ranges[ranges.count - 1] = last.lowerBound..<segment.done
            } else {
                ranges.append(segment.start..<segment.done)
            }
        }
        return ranges
    }

    /// Stops everything: the transfers to cancel.
    @discardableResult
    mutating func stopAll() -> [Action] {
        let ids = transfers.keys.sorted()
        for id in ids { forget(id) }
        return ids.map { .cancel(id: $0) }
    }
}
