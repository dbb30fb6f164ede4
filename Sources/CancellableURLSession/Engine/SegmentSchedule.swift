import Foundation

/// Which bytes of a segmented download each mirror fetches, and which of the bytes that arrive are written: the pure
/// state machine of ``URLSession/segmentedDownload(from:to:verifying:options:file:line:progress:)``, without I/O or a
/// clock (the time is passed in), so that every decision can be tested without a server.
///
/// The file is cut into segments. A segment is written from its start up to its frontier (`done`), by the transfers
/// working on it; a transfer's bytes are written only where they continue the frontier, so two transfers of one
/// segment (the end game) never write one byte twice, and a transfer never writes past its segment's end (a segment
/// that was split).
struct SegmentSchedule: Sendable {
    /// A range of the file: `[start, end)`, written up to `done`.
    struct Segment: Sendable, Equatable {
        var start: Int64
        var end: Int64
        /// The first byte not written yet: `start...end`.
        var done: Int64
        /// The transfers working on it.
        var transfers: [Int] = []
        /// Whether one transfer at a time fetches it — never split, never raced: a piece that failed its digest
        /// after more than one mirror wrote it is fetched again this way, so that a second failure names one mirror.
        var exclusive = false

        var remaining: Int64 { end - done }
        var isComplete: Bool { done >= end }
    }

    /// One request to one mirror, for the bytes `[start, requestedEnd)` of one segment.
    struct Transfer: Sendable, Equatable {
        let id: Int
        let mirror: Int
        let segment: Int
        let start: Int64
        let requestedEnd: Int64
        /// The next byte its body carries.
        var position: Int64
        /// Whether its response was checked and accepted.
        var accepted = false
        /// Whether its bytes are proven to be the reference's: its response repeated the reference's strong
        /// validator. A failed transfer's bytes are kept only then.
        var proven = false
        /// When it started, in real time: what its speed is measured against.
        let startedAt: TimeInterval
        /// How long it has run, and how long since its last byte, on the clock that watches for stalls
        /// (``tick(by:stallTimeout:minimumSpeed:at:)``).
        var age: TimeInterval = 0
        var idle: TimeInterval = 0
        var received: Int64 = 0
    }

    /// One source of the file.
    struct Mirror: Sendable {
        var connections = 0
        var dropped: MirrorDropReason?
        /// Every byte its transfers received, written or not.
        var received: Int64 = 0
        /// The bytes of it that were written to the file.
        var written: Int64 = 0
        /// Bytes per second, from its transfers so far; `nil` before its first byte.
        var speed: Double?
        /// Faults forgiven since it last completed a segment (``fail(_:_:at:)``).
        var faultsInARow = 0
        /// Faults forgiven in all, and the latest.
        var retries = 0
        var lastRetriedFault: MirrorDropReason?
        /// Seconds of the watch clock before it is sent another request, after a forgiven fault.
        var resting: TimeInterval = 0

        var isUsable: Bool { dropped == nil && resting <= 0 }
    }

    /// What the caller carries out after a step, outside any lock.
    enum Action: Sendable, Equatable {
        /// Request `[start, end)` from `mirror`, as transfer `id`.
        case start(id: Int, mirror: Int, start: Int64, end: Int64)
        /// Stop transfer `id`.
        case cancel(id: Int)
    }

    let segmentSize: Int64
    let minimumSplit: Int64
    let connectionsPerMirror: Int
    let endGame: Bool
    /// How each mirror's faults that may pass are forgiven.
    let retrying: DownloadRetryPolicy
    /// The period of the watch clock that counts rests down (``rest(by:at:)``).
    let watchPeriod: TimeInterval

    /// The file's length, once a mirror has said (or the caller, through ``DownloadIntegrity/length``).
    private(set) var total: Int64?
    /// The length the caller expects: a mirror that announces another one is dropped, even the first to answer.
    let expectedLength: Int64?
    /// The strong validator of the first mirror that said the length, if it had one.
    private(set) var validator: DownloadResumeData.Validator?
    private(set) var segments = SegmentList()
    private(set) var transfers: [Int: Transfer] = [:]
    private(set) var mirrors: [Mirror]
    /// Where the bytes no segment covers yet begin: segments are cut from here as mirrors need them, so that a
    /// length a mirror announces costs no memory until its bytes are fetched.
    private(set) var uncut: Int64 = 0
    /// Whether a mirror must repeat ``validator``, not merely not contradict it: in a resumed download, whose bytes
    /// kept were proven under it.
    private var mustRepeatValidator = false
    private var nextID = 0

    /// The pieces whose digests are checked (``DownloadIntegrity/pieces``), if any.
    let pieces: PieceDigests?
    /// Which pieces passed their digest.
    private(set) var verified: [Bool] = []
    private var verifiedCount = 0
    /// Who wrote each piece not yet verified: mirrors, and ``kept`` for bytes a resumed download started with.
    private(set) var authors: [Int: Set<Int>] = [:]
    /// The author of bytes a resumed download started with: unknown.
    static let kept = -1

    /// A schedule for `mirrors` mirrors; `options` must have passed ``SegmentedDownloadOptions/problem``.
    init(mirrors: Int, options: SegmentedDownloadOptions, expectedLength: Int64? = nil, pieces: PieceDigests? = nil) {
        segmentSize = options.segmentSize
        minimumSplit = options.minimumSplitSize
        connectionsPerMirror = options.connectionsPerMirror
        endGame = options.endGame
        retrying = options.retrying
        watchPeriod = options.watchPeriod
        self.expectedLength = expectedLength
        self.mirrors = Array(repeating: Mirror(), count: mirrors)
        self.pieces = pieces
        verified = Array(repeating: false, count: pieces?.sha256.count ?? 0)
    }

    /// A schedule for a download that starts with no byte written, checked against `integrity` (its length and
    /// pieces) if it has one.
    static func fresh(mirrors: Int, options: SegmentedDownloadOptions, integrity: DownloadIntegrity?) -> Self {
        Self(mirrors: mirrors, options: options, expectedLength: integrity?.length, pieces: integrity?.pieces)
    }

    /// A schedule that continues a paused download of a file of `total` bytes, identified by `validator`, whose
    /// `kept` ranges (sorted, disjoint, inside the file) are written already: the gaps between them are free
    /// segments (cut to ``segmentSize`` as mirrors take them), the bytes after the last one are cut as usual, and
    /// every mirror must announce `total` and, if there is a `validator`, repeat it.
    init(
        mirrors: Int,
        options: SegmentedDownloadOptions,
        expectedLength: Int64? = nil,
        pieces: PieceDigests? = nil,
        resuming kept: [Range<Int64>],
        of total: Int64,
        validator: DownloadResumeData.Validator?
    ) {
        self.init(mirrors: mirrors, options: options, expectedLength: expectedLength, pieces: pieces)
        self.total = total
        self.validator = validator
        mustRepeatValidator = validator != nil
        var position: Int64 = 0
        for range in kept {
            if range.lowerBound > position {
                segments.append(Segment(start: position, end: range.lowerBound, done: position))
            }
            segments.append(Segment(start: range.lowerBound, end: range.upperBound, done: range.upperBound))
            position = range.upperBound
            for piece in pieces?.pieces(overlapping: range) ?? 0..<0 {
                authors[piece, default: []].insert(Self.kept)
            }
        }
        uncut = position
    }

    /// Whether every byte of the file is written, and every piece verified.
    var isComplete: Bool {
        total.map { uncut >= $0 } ?? false && segments.allSatisfy(\.isComplete) && verifiedCount == verified.count
    }

    /// Whether no mirror is left to fetch what is missing.
    var isStranded: Bool { !isComplete && mirrors.allSatisfy { $0.dropped != nil } }

    /// Bytes written so far.
    var written: Int64 { segments.written }

    // MARK: Starting

    /// The first requests: before the length is known, each connection of each mirror asks for its own segment of a
    /// grid of ``segmentSize`` bytes (one past the end is answered `416` with the length, and costs nothing).
    mutating func begin(at now: TimeInterval) -> [Action] {
        // A resumed download knows the length already.
        if total != nil { return schedule(at: now) }
        var actions: [Action] = []
        for _ in 0..<connectionsPerMirror {
            for mirror in mirrors.indices {
                actions.append(startTransfer(mirror: mirror, segment: cutSegment(), at: now))
            }
        }
        return actions
    }

    /// Cuts the next segment from the bytes no segment covers (up to the length, once it is known).
    ///
    /// - Returns: its index.
    private mutating func cutSegment() -> Int {
        let (sum, overflow) = uncut.addingReportingOverflow(segmentSize)
        let end = min(overflow ? .max : sum, total ?? .max)
        segments.append(Segment(start: uncut, end: end, done: uncut))
        uncut = end
        return segments.count - 1
    }

    private mutating func startTransfer(mirror: Int, segment index: Int, at now: TimeInterval) -> Action {
        let id = nextID
        nextID += 1
        let segment = segments[index]
        transfers[id] = Transfer(
            id: id,
            mirror: mirror,
            segment: index,
            start: segment.done,
            requestedEnd: segment.end,
            position: segment.done,
            startedAt: now
        )
        segments[index].transfers.append(id)
        mirrors[mirror].connections += 1
        return .start(id: id, mirror: mirror, start: segment.done, end: segment.end)
    }

    // MARK: Responses

    /// What identifies the file the mirrors must serve: the first answer's validator and length (or the kept bytes',
    /// or the caller's expected length).
    private var reference: Continuation.Reference {
        Continuation.Reference(
            validator: validator,
            totalBytes: total ?? expectedLength,
            mustRepeatValidator: mustRepeatValidator,
            lengthSuffices: true
        )
    }

    /// Checks transfer `id`'s response against the file the other mirrors serve (``Continuation``).
    ///
    /// - Returns: whether to take its body, and what to do now (a mirror that disagrees is dropped, its transfers
    ///   stopped and their segments given to others).
    mutating func accept(_ answer: RangeAnswer, for id: Int, at now: TimeInterval) -> (Bool, [Action]) {
        guard let transfer = transfers[id] else { return (false, []) }
        if let coding = answer.contentCoding {
            return (false, drop(transfer.mirror, .contentCoded(coding), at: now))
        }
        switch answer.status {
        case 206:
            // Exactly the range asked for: up to its end, or the file's if the file is shorter.
            let verdict = Continuation.check(
                answer,
                startingAt: transfer.start,
                endingAt: transfer.requestedEnd,
                reference: reference
            )
            // `check(…endingAt:)` continues an answer only if it names the file's length: `.continues` never reaches
            // `MirrorDropReason(verdict)`, which traps on it.
            guard case .continues(let proven) = verdict, let length = answer.range?.total else {
                return (false, drop(transfer.mirror, MirrorDropReason(verdict), at: now))
            }
            let setsReference = total == nil
            if setsReference { takeReference(length: length, answer) }
            transfers[id]?.accepted = true
            // The first answer's bytes are proven by the validator they set.
            transfers[id]?.proven = proven || (setsReference && answer.validator != nil)
            return (true, schedule(at: now))
        case 416:
            guard let length = answer.range?.total, answer.range?.start == nil else {
                return (false, drop(transfer.mirror, .unexpectedContentRange(answer.rangeHeader), at: now))
            }
            let verdict = Continuation.agreement(of: answer, announcing: length, with: reference)
            guard case .continues = verdict else {
                return (false, drop(transfer.mirror, MirrorDropReason(verdict), at: now))
            }
            if total == nil { takeReference(length: length, answer) }
            guard transfer.start >= length else {
                return (false, drop(transfer.mirror, .unexpectedContentRange(answer.rangeHeader), at: now))
            }
            // Nothing to send: the segment lies past the end, and `takeReference` emptied it.
            forget(id)
            return (false, schedule(at: now))
        case 200:
            return (false, drop(transfer.mirror, .ignoresRanges, at: now))
        default:
            return (false, fail(id, .status(answer.status), at: now, retryAfter: answer.retryAfter))
        }
    }

    /// The first answer names the file: its length and strong validator are the reference every other mirror must
    /// agree with, and the segments past its length go.
    private mutating func takeReference(length: Int64, _ answer: RangeAnswer) {
        total = length
        validator = answer.validator
        fitSegments(to: length)
    }

    /// Cuts the first segments to `length` bytes: those past it are empty (their transfers are answered `416`), the
    /// last one ends at it. The rest of the file is cut into segments of ``segmentSize`` as mirrors need them.
    private mutating func fitSegments(to length: Int64) {
        for index in segments.indices {
            segments[index].start = min(segments[index].start, length)
            segments[index].end = min(segments[index].end, length)
            segments[index].done = min(segments[index].done, segments[index].end)
        }
        uncut = min(uncut, length)
    }

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

    /// Where the segment transfer `id` writes starts: every byte from there to the segment's frontier is written.
    func segmentStart(of id: Int) -> Int64? {
        transfers[id].map { segments[$0.segment].start }
    }

    /// Undoes the bookkeeping of a write that failed: the bytes are not on disk.
    mutating func unwrite(_ write: Write, for id: Int) {
        guard let transfer = transfers[id] else { return }
        segments[transfer.segment].done = min(segments[transfer.segment].done, write.offset)
    }

    private static func speed(_ transfer: Transfer, at now: TimeInterval) -> Double? {
        let elapsed = now - transfer.startedAt
        return elapsed > 0 ? Double(transfer.received) / elapsed : nil
    }

    /// Ends every transfer of the complete segment `index`, and gives their mirrors new work.
    private mutating func finishSegment(_ index: Int, at now: TimeInterval) -> [Action] {
        var actions: [Action] = []
        for id in segments[index].transfers {
            actions.append(.cancel(id: id))
            forget(id)
        }
        return actions + schedule(at: now)
    }

    private mutating func forget(_ id: Int) {
        guard let transfer = transfers.removeValue(forKey: id) else { return }
        segments[transfer.segment].transfers.removeAll { $0 == id }
        mirrors[transfer.mirror].connections -= 1
    }

    // MARK: Endings and faults

    /// Transfer `id` ended: on its own (`fault` `nil`: the body is complete, or the server ended it early) or
    /// with a fault (``fail(_:_:at:)``).
    mutating func end(_ id: Int, fault: MirrorDropReason?, at now: TimeInterval) -> [Action] {
        guard let transfer = transfers[id] else { return [] }
        if let fault { return fail(id, fault, at: now) }
        let segment = segments[transfer.segment]
        if transfer.accepted, !segment.isComplete, transfer.position < min(transfer.requestedEnd, segment.end) {
            // The body ended before the bytes its range promised: a server that closed the connection early.
            return fail(
                id,
                .endedEarly(
                    received: transfer.position - transfer.start,
                    expected: transfer.requestedEnd - transfer.start
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
    private mutating func stop(_ transfer: Transfer, keepingProvenBytes: Bool) -> [Action] {
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
    /// given out again.
    mutating func schedule(at now: TimeInterval) -> [Action] {
        guard total != nil else { return restartFreeSegments(at: now) }
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

    // MARK: Pieces

    /// The pieces overlapping `bytes` whose every byte is written and which are not verified yet: what to check now.
    func completedPieces(overlapping bytes: Range<Int64>) -> [Int] {
        guard let pieces, let total else { return [] }
        return pieces.pieces(overlapping: bytes).filter { piece in
            !verified[piece] && isWritten(pieces.range(of: piece, in: total))
        }
    }

    /// Whether every byte of `bytes` is written.
    private func isWritten(_ bytes: Range<Int64>) -> Bool {
        var covered: Int64 = 0
        for segment in segments where segment.start < bytes.upperBound && segment.done > bytes.lowerBound {
            covered += min(segment.done, bytes.upperBound) - max(segment.start, bytes.lowerBound)
        }
        return covered == bytes.count
    }

    /// Piece `piece` passed its digest: its bytes are final.
    mutating func pieceVerified(_ piece: Int) {
        guard !verified[piece] else { return }
        verified[piece] = true
        verifiedCount += 1
        authors[piece] = nil
    }

    /// Piece `piece` failed its digest: its bytes are cut out of their segments, to be fetched again. If one mirror
    /// wrote all of it, that mirror is dropped; if several did (or bytes a resumed download started with), the
    /// piece is fetched again by one transfer alone, so that a second failure names its mirror.
    mutating func pieceFailed(_ piece: Int, at now: TimeInterval) -> [Action] {
        guard let pieces, let total, !verified[piece] else { return [] }
        let bytes = pieces.range(of: piece, in: total)
        let writers = authors.removeValue(forKey: piece) ?? []
        cutOut(bytes)
        if writers.count == 1, let mirror = writers.first, mirror != Self.kept {
            return drop(mirror, .pieceMismatch(piece: piece), at: now)
        }
        return schedule(at: now)
    }

    /// Makes `bytes` (all written) one free segment, fetched by one transfer at a time: each segment that overlaps
    /// them keeps its parts before and after, and a part after keeps the segment's transfers (they write past it).
    private mutating func cutOut(_ bytes: Range<Int64>) {
        var slot: Int?
        for index in segments.indices
        where segments[index].start < bytes.upperBound && segments[index].end > bytes.lowerBound {
            let segment = segments[index]
            if segment.end > bytes.upperBound {
                // Its part after the piece keeps this index, and with it the transfers that write past the piece.
                if segment.start < bytes.lowerBound {
                    segments.append(Segment(start: segment.start, end: bytes.lowerBound, done: bytes.lowerBound))
                }
                segments[index].start = bytes.upperBound
                segments[index].done = max(segment.done, bytes.upperBound)
            } else if segment.start < bytes.lowerBound {
                // It ends inside the piece, and is complete: it keeps its part before.
                segments[index].end = bytes.lowerBound
                segments[index].done = bytes.lowerBound
            } else if slot == nil {
                slot = index  // wholly inside, and complete: the piece's segment takes its place
            } else {
                segments[index] = Segment(start: bytes.lowerBound, end: bytes.lowerBound, done: bytes.lowerBound)
            }
        }
        var piece = Segment(start: bytes.lowerBound, end: bytes.upperBound, done: bytes.lowerBound)
        piece.exclusive = true
        if let slot { segments[slot] = piece } else { segments.append(piece) }
    }

    /// Forgets who wrote the pieces that lie wholly inside `bytes`: their bytes will all be written again.
    private mutating func forgetAuthors(of bytes: Range<Int64>) {
        guard let pieces, let total else { return }
        for piece in pieces.pieces(overlapping: bytes) where !verified[piece] {
            let range = pieces.range(of: piece, in: total)
            if bytes.lowerBound <= range.lowerBound && range.upperBound <= bytes.upperBound { authors[piece] = nil }
        }
    }

    /// The bytes written, as the ranges of the file they fill: in order, none touching another.
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
