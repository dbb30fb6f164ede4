import Foundation

extension SegmentSchedule {
    // MARK: Endings and faults

    /// Transfer `id` ended: on its own (`fault` `nil`: the body is complete, or the server ended it early) or
    /// with a fault (``fail(_:_:at:)``).
    mutating func end(_ id: Int, fault: MirrorDropReason?, at now: TimeInterval) -> [Action] {
        guard let transfer = transfers[id] else { return [] }
        if let status = transfer.errorStatus {
            return fail(id, .status(status), at: now, retryAfter: transfer.retryAfter)
        }
        if let fault { return fail(id, fault, at: now) }
        let segment = segments[transfer.segment]
        if transfer.accepted, segment.end == Self.openEnd { return endRest(transfer, at: now) }
        if transfer.accepted, !segment.isComplete, transfer.position < min(transfer.requestedEnd, segment.end) {
            // The body ended before the bytes its range promised: a server that closed the connection early.
            return fail(
                id,
                .endedEarly(
                    received: transfer.position - transfer.start,
                    expected: min(transfer.requestedEnd, segment.end) - transfer.start
                ),
                at: now
            )
        }
        forget(id)
        return schedule(at: now)
    }

    /// Drops `mirror` for `reason`: stops its transfers and gives their segments back, keeping the bytes written only
    /// where they are proven (the transfer repeated the reference's strong validator).
    mutating func drop(_ mirror: Int, _ reason: MirrorDropReason, at now: TimeInterval) -> [Action] {
        guard mirrors.indices.contains(mirror) else { return [] }
        if mirrors[mirror].dropped == nil { mirrors[mirror].dropped = reason }
        var actions: [Action] = []
        for id in transfers.keys.sorted() {
            // Read afresh: a rollback below may have forgotten a transfer of this mirror already.
            guard let transfer = transfers[id], transfer.mirror == mirror else { continue }
            // A mirror caught sending a bad piece keeps nothing: its validator proves nothing any more.
            actions += stop(transfer, keepingProvenBytes: !reason.isPieceMismatch)
        }
        return actions + schedule(at: now)
    }

    /// The longest `Retry-After` a mirror is waited for, in seconds: one that asks for more is dropped.
    static let longestRetryAfter: TimeInterval = 300

    /// Transfer `id` failed for `reason`. A fault that may pass (``MirrorDropReason/isTransient``), within
    /// ``retrying``'s retries in a row, stops only this transfer — its segment goes to the others, or back to its
    /// mirror once the mirror has rested as the policy says (its delay, backed off by the faults forgiven in a row
    /// before), or `retryAfter` (the server's `Retry-After`) if that is longer —; any other drops the mirror, and so
    /// does a `retryAfter` over ``longestRetryAfter``.
    mutating func fail(
        _ id: Int,
        _ reason: MirrorDropReason,
        at now: TimeInterval,
        retryAfter: TimeInterval? = nil
    ) -> [Action] {
        guard let transfer = transfers[id] else { return [] }
        let mirror = transfer.mirror
        guard reason.isTransient, mirrors[mirror].faultsInARow < retrying.retries,
            let rest = retrying.delay(before: mirrors[mirror].faultsInARow + 1, retryAfter: retryAfter)
        else { return drop(mirror, reason, at: now) }
        mirrors[mirror].faultsInARow += 1
        mirrors[mirror].retries += 1
        mirrors[mirror].lastRetriedFault = reason
        // The watch clock counts the rest down in its ticks, at some point of its period: one period more, so that
        // the rest lasts at least as long as asked.
        mirrors[mirror].resting = rest > 0 ? rest + watchPeriod : 0
        return stop(transfer, keepingProvenBytes: true) + schedule(at: now)
    }

    /// Stops `transfer` and gives its segment back, keeping the bytes it wrote only where they are proven (it repeated
    /// the reference's strong validator) and `keepingProvenBytes`; unproven bytes send every other transfer of the
    /// segment back to where it started too.
    mutating func stop(_ transfer: Transfer, keepingProvenBytes: Bool) -> [Action] {
        var actions: [Action] = [.cancel(id: transfer.id)]
        let index = transfer.segment
        if !(transfer.proven && keepingProvenBytes), segments[index].done > transfer.start {
            // Its bytes cannot be told apart from the other transfers' on this segment: all of them start again
            // from where it started (or where the segment starts, if a bad piece was cut out of it since).
            let start = max(transfer.start, segments[index].start)
            forgetAuthors(of: start..<segments[index].done)
            segments[index].done = start
            for other in segments[index].transfers where other != transfer.id {
                actions.append(.cancel(id: other))
                forget(other)
            }
        }
        forget(transfer.id)
        return actions
    }

    /// Counts down the rests of mirrors that were forgiven a fault by `interval` seconds of the watch clock.
    ///
    /// - Returns: what to do now: requests for the mirrors whose rest is over.
    mutating func rest(by interval: TimeInterval, at now: TimeInterval) -> [Action] {
        var woke = false
        for mirror in mirrors.indices where mirrors[mirror].resting > 0 {
            mirrors[mirror].resting -= interval
            if mirrors[mirror].resting <= 0 {
                mirrors[mirror].resting = 0
                woke = true
            }
        }
        return woke ? schedule(at: now) : []
    }

    /// Advances the watch clock by `interval`: the transfers that have then received nothing for `timeout` seconds
    /// of it, and those that have run that long slower than `minimumSpeed` (measured in real time, `now`) while
    /// another mirror could take their work.
    mutating func tick(
        by interval: TimeInterval,
        stallTimeout timeout: TimeInterval,
        minimumSpeed: Int64?,
        at now: TimeInterval
    ) -> [(Int, MirrorDropReason)] {
        var found: [(Int, MirrorDropReason)] = []
        let usable = mirrors.indices.filter { mirrors[$0].dropped == nil }
        for id in transfers.keys.sorted() {
            transfers[id]?.age += interval
            transfers[id]?.idle += interval
            guard let transfer = transfers[id] else { continue }
            if transfer.idle >= timeout {
                found.append((id, .stalled(seconds: transfer.idle)))
            } else if let minimumSpeed, transfer.age >= timeout,
                let speed = Self.speed(transfer, at: now), speed < Double(minimumSpeed),
                usable.contains(where: { $0 != transfer.mirror })
            {
                found.append((id, .tooSlow(bytesPerSecond: Int64(speed))))
            }
        }
        return found
    }

    // MARK: Scheduling

    /// Gives every mirror with a free connection something to fetch, fastest mirror first: a segment nobody works
    /// on; else the tail of the segment with the most left to fetch, split in proportion to the two mirrors'
    /// speeds; else, in the end game, the rest of a segment a slower mirror is fetching, raced.
    ///
    /// Before the length is known, only segments of the first grid (``begin(at:)``) that a forgiven fault freed are
    /// given out again; asking for the rest of the file, only free segments, in order, are (nothing is split or
    /// raced).
    mutating func schedule(at now: TimeInterval) -> [Action] {
        guard total != nil, requests == .segments else { return restartFreeSegments(at: now) }
        var actions: [Action] = []
        let order = mirrors.indices.filter { mirrors[$0].isUsable }
            .sorted { (mirrors[$0].speed ?? 0) > (mirrors[$1].speed ?? 0) }
        for mirror in order {
            while mirrors[mirror].connections < connectionsPerMirror {
                guard let index = nextSegment(for: mirror) else { break }
                actions.append(startTransfer(mirror: mirror, segment: index, at: now))
            }
        }
        return actions
    }

    /// Gives the free segments to the mirrors with a free connection, in order: before the length is known.
    private mutating func restartFreeSegments(at now: TimeInterval) -> [Action] {
        var actions: [Action] = []
        for mirror in mirrors.indices where mirrors[mirror].isUsable {
            while mirrors[mirror].connections < connectionsPerMirror, let free = firstFreeSegment {
                actions.append(startTransfer(mirror: mirror, segment: free, at: now))
            }
        }
        return actions
    }

    /// The first segment nobody works on that still has bytes to fetch.
    private var firstFreeSegment: Int? {
        segments.indices.first { segments[$0].transfers.isEmpty && !segments[$0].isComplete }
    }

    /// The segment `mirror` should fetch next, split off if need be; `nil` if none is worth it.
    private mutating func nextSegment(for mirror: Int) -> Int? {
        if let free = firstFreeSegment {
            // A free segment longer than a segment (a resumed download's gap) gives up its tail to the others.
            if segments[free].remaining > segmentSize, !segments[free].exclusive {
                let cut = segments[free].done + segmentSize
                segments.append(Segment(start: cut, end: segments[free].end, done: cut))
                segments[free].end = cut
            }
            return free
        }
        if let total, uncut < total { return cutSegment() }
        // The busy segment with the most left, whose transfer this mirror is not already running.
        let busy = segments.indices.filter { index in
            !segments[index].isComplete && !segments[index].exclusive && segments[index].transfers.count == 1
                && segments[index].transfers.allSatisfy { transfers[$0]?.mirror != mirror }
        }
        guard let index = busy.max(by: { segments[$0].remaining < segments[$1].remaining }) else { return nil }
        let segment = segments[index]
        let other = segment.transfers.first.flatMap { transfers[$0] }
        let otherSpeed = other.flatMap { mirrors[$0.mirror].speed }
        let ownSpeed = mirrors[mirror].speed
        // The tail this mirror takes, so that both finish together: remaining × own / (own + other).
        let share = ownSpeed.flatMap { own in otherSpeed.map { own / (own + $0) } } ?? 0.5
        let tail = Int64(Double(segment.remaining) * share)
        if tail >= minimumSplit, segment.remaining - tail >= minimumSplit {
            let cut = segment.end - tail
            segments[index].end = cut
            segments.append(Segment(start: cut, end: segment.end, done: cut))
            return segments.count - 1
        }
        // End game: race the rest, if this mirror is faster (or the other has not sent a byte yet).
        guard endGame, let ownSpeed, ownSpeed > (otherSpeed ?? 0) else { return nil }
        return index
    }
}
