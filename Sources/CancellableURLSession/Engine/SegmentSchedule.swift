import Foundation

/// Which bytes of a segmented download each mirror fetches, and which of the bytes that arrive are written: the pure
/// state machine of ``URLSession/segmentedDownload(from:to:verifying:options:file:line:progress:)``, without I/O or a
/// clock (the time is passed in), so that every decision can be tested without a server.
///
/// The file is cut into segments. A segment is written from its start up to its frontier (`done`), by the transfers
/// working on it; a transfer's bytes are written only where they continue the frontier, so two transfers of one
/// segment (the end game) never write one byte twice, and a transfer never writes past its segment's end (a segment
/// that was split).
///
/// A single URL is the one-mirror case (``Requests/rest``): one request at a time asks for every byte not written yet,
/// and its answer may be the whole file from byte 0, of a length it names or not (``openEnd``).
///
/// Its methods are in five files: this one (starting, responses), `SegmentSchedule+Bytes.swift` (which bytes are
/// written), `SegmentSchedule+Rest.swift` (the answers to a request for the rest of the file),
/// `SegmentSchedule+Faults.swift` (endings, faults, rests and which segment a mirror takes next) and
/// `SegmentSchedule+Pieces.swift` (piece digests). Its state is changed only by those methods:
/// the setters are internal only because `private` does not reach across files.
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

    /// One request to one mirror, for the bytes `[start, requestedEnd)` of one segment — or, if `requestedEnd` is
    /// ``SegmentSchedule/openEnd``, for every byte from `start` on.
    struct Transfer: Sendable, Equatable {
        let id: Int
        let mirror: Int
        var segment: Int
        /// The file offset of its body's first byte: where it asked to start, or 0 once a `200` answered it (and
        /// always 0 for the caller's part, which is asked for whole).
        var start: Int64
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
        /// The error status it answered with, whose body is collected (asking for the rest of the file), and the
        /// `Retry-After` that came with it.
        var errorStatus: Int?
        var retryAfter: TimeInterval?
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
        /// Request `[start, end)` from `mirror`, as transfer `id`; every byte from `start` on if `end` is
        /// ``SegmentSchedule/openEnd`` (`Range: bytes=<start>-`, or no `Range` from byte 0).
        case start(id: Int, mirror: Int, start: Int64, end: Int64)
        /// Stop transfer `id`.
        case cancel(id: Int)
        /// Empty the file, and start what was hashed of it over: an answer started the file over from byte 0. Comes
        /// before any byte of that answer is written.
        case truncate
    }

    /// How the file is asked for.
    enum Requests: Sendable, Equatable {
        /// A ranged request for each segment of ``segmentSize``, from every mirror at once: a segmented download.
        case segments
        /// One request at a time, for every byte not written yet (``openEnd``): a single URL. Its answer may be a
        /// `206` that continues the bytes written, a `416` that proves them the whole file, or a `200` with the whole
        /// file — which keeps the bytes written if it repeats their strong validator, and starts the file over
        /// (``Action/truncate``) if not; it may name no length, and then the file is as long as its body (and its
        /// pieces, if it has digests, are checked once it has ended). A part the file is missing in its middle — a
        /// piece kept from an earlier run that failed its digest — is asked for with a ranged request; a piece this
        /// download wrote that fails drops its only mirror.
        case rest
        /// One request at a time, the caller's own, whose `Range` names a part of a file: its `206` (or a `200`, from a
        /// server that ignores ranges) is the file this download writes, from byte 0. A forgiven fault asks for the
        /// whole part again; bytes written under the answer's validator are not written again, if it is the same part
        /// (the same `Content-Range`). Nothing is kept from an earlier run, so no part of it is ever asked for alone.
        case part

        /// Whether one request fetches the file, from its start or the bytes written on.
        var isOneRequest: Bool { self != .segments }
    }

    /// The end of a request for every byte from its start on, whose end is the file's: not known until an answer
    /// names the length, or a body without one ends.
    static let openEnd = Int64.max

    let requests: Requests
    let segmentSize: Int64
    let minimumSplit: Int64
    let connectionsPerMirror: Int
    let endGame: Bool
    /// How each mirror's faults that may pass are forgiven.
    let retrying: DownloadRetryPolicy
    /// The period of the watch clock that counts rests down (``rest(by:at:)``).
    let watchPeriod: TimeInterval

    /// The file's length, once a mirror has said (or the caller, through ``DownloadIntegrity/length``).
    var total: Int64?
    /// The length the caller expects: a mirror that announces another one is dropped, even the first to answer.
    let expectedLength: Int64?
    /// The strong validator of the first mirror that said the length, if it had one.
    var validator: DownloadResumeData.Validator?
    var segments = SegmentList()
    var transfers: [Int: Transfer] = [:]
    var mirrors: [Mirror]
    /// Where the bytes no segment covers yet begin: segments are cut from here as mirrors need them, so that a
    /// length a mirror announces costs no memory until its bytes are fetched.
    private(set) var uncut: Int64 = 0
    /// Whether a mirror must repeat ``validator``, not merely not contradict it: in a resumed download, whose bytes
    /// kept were proven under it.
    var mustRepeatValidator = false
    private var nextID = 0
    /// Whether a byte was ever written to the file (or kept in it from an earlier run): whether an answer that starts
    /// the file over must empty it first.
    var fileMayHoldBytes = false
    /// The `Content-Range` of the answer that set the caller's part (``Requests/part``): a retry keeps the bytes
    /// written only if it answers the same part.
    var partRange: ContentRange?

    /// The pieces whose digests are checked (``DownloadIntegrity/pieces``), if any.
    let pieces: PieceDigests?
    /// Which pieces passed their digest.
    var verified: [Bool] = []
    var verifiedCount = 0
    /// Who wrote each piece not yet verified: mirrors, and ``kept`` for bytes a resumed download started with.
    var authors: [Int: Set<Int>] = [:]
    /// The author of bytes a resumed download started with: unknown.
    static let kept = -1

    /// A schedule for `mirrors` mirrors; `options` must have passed ``SegmentedDownloadOptions/problem``. Asking
    /// for the rest of the file (`requests` ``Requests/rest``), one connection fetches it, and nothing is raced.
    init(
        mirrors: Int,
        options: SegmentedDownloadOptions,
        requests: Requests = .segments,
        expectedLength: Int64? = nil,
        pieces: PieceDigests? = nil
    ) {
        self.requests = requests
        segmentSize = options.segmentSize
        minimumSplit = options.minimumSplitSize
        connectionsPerMirror = requests.isOneRequest ? 1 : options.connectionsPerMirror
        endGame = requests.isOneRequest ? false : options.endGame
        retrying = options.retrying
        watchPeriod = options.watchPeriod
        self.expectedLength = expectedLength
        self.mirrors = Array(repeating: Mirror(), count: mirrors)
        self.pieces = pieces
        verified = Array(repeating: false, count: pieces?.sha256.count ?? 0)
        if requests.isOneRequest { appendRest(from: 0) }
    }

    /// A schedule for a download that starts with no byte written, checked against `integrity` (its length and
    /// pieces) if it has one.
    static func fresh(
        mirrors: Int,
        options: SegmentedDownloadOptions,
        requests: Requests = .segments,
        integrity: DownloadIntegrity?
    ) -> Self {
        Self(
            mirrors: mirrors,
            options: options,
            requests: requests,
            expectedLength: integrity?.length,
            pieces: integrity?.pieces
        )
    }

    /// A schedule that continues a paused download of a file of `total` bytes (`nil`: not known, asking for the rest),
    /// identified by `validator`, whose `kept` ranges (sorted, disjoint, inside the file) are written already: the gaps
    /// between them are free segments (cut to ``segmentSize`` as mirrors take them), the bytes after the last one are
    /// cut as usual (or asked for as one rest), and every mirror must announce `total` and, if there is a `validator`,
    /// repeat it.
    init(
        mirrors: Int,
        options: SegmentedDownloadOptions,
        requests: Requests = .segments,
        expectedLength: Int64? = nil,
        pieces: PieceDigests? = nil,
        resuming kept: [Range<Int64>],
        of total: Int64?,
        validator: DownloadResumeData.Validator?
    ) {
        self.init(
            mirrors: mirrors,
            options: options,
            requests: requests,
            expectedLength: expectedLength,
            pieces: pieces
        )
        segments = SegmentList()  // the rest starts after the bytes kept
        self.total = total
        self.validator = validator
        mustRepeatValidator = validator != nil
        fileMayHoldBytes = !kept.isEmpty
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
        if requests.isOneRequest { appendRest(from: position) }
    }

    /// The segment of every byte from `start` to the end of the file (if there is any), fetched by one request.
    mutating func appendRest(from start: Int64) {
        let end = total ?? Self.openEnd
        if start < end { segments.append(Segment(start: start, end: end, done: start)) }
        uncut = end
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
        // A resumed download knows the length already; a request for the rest needs none.
        if total != nil || requests.isOneRequest { return schedule(at: now) }
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
    mutating func cutSegment() -> Int {
        let (sum, overflow) = uncut.addingReportingOverflow(segmentSize)
        let end = min(overflow ? .max : sum, total ?? .max)
        segments.append(Segment(start: uncut, end: end, done: uncut))
        uncut = end
        return segments.count - 1
    }

    mutating func startTransfer(mirror: Int, segment index: Int, at now: TimeInterval) -> Action {
        let id = nextID
        nextID += 1
        let segment = segments[index]
        // Asking for the rest of the file, the segment that ends it is asked for to its end, whatever that turns out
        // to be: so a `200` (or a length other than the one named) is an answer to it, not a part nobody asked for.
        // The caller's part is asked for whole, every time: its byte offsets are not the server's file's.
        let end = requests.isOneRequest && segment.end == total ?? Self.openEnd ? Self.openEnd : segment.end
        let start = requests == .part ? 0 : segment.done
        transfers[id] = Transfer(
            id: id,
            mirror: mirror,
            segment: index,
            start: start,
            requestedEnd: end,
            position: start,
            startedAt: now
        )
        segments[index].transfers.append(id)
        mirrors[mirror].connections += 1
        return .start(id: id, mirror: mirror, start: start, end: end)
    }

    // MARK: Responses

    /// What identifies the file the mirrors must serve: the first answer's validator and length (or the kept bytes',
    /// or the caller's expected length). Mirrors of one download need only not contradict the validator (a mirror
    /// may send none); one URL, asked for the rest under `If-Range`, must repeat it, as HTTP says a `206` to it does.
    var reference: Continuation.Reference {
        Continuation.Reference(
            validator: validator,
            totalBytes: total ?? expectedLength,
            mustRepeatValidator: mustRepeatValidator || requests.isOneRequest,
            lengthSuffices: true
        )
    }

    /// Checks transfer `id`'s response against the file the other mirrors serve (``Continuation``).
    ///
    /// - Returns: whether to take its body, and what to do now (a mirror that disagrees is dropped, its transfers
    ///   stopped and their segments given to others).
    mutating func accept(_ answer: RangeAnswer, for id: Int, at now: TimeInterval) -> (Bool, [Action]) {
        guard let transfer = transfers[id] else { return (false, []) }
        if transfer.requestedEnd == Self.openEnd { return acceptRest(answer, for: transfer, at: now) }
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
    mutating func takeReference(length: Int64, _ answer: RangeAnswer) {
        total = length
        validator = answer.validator
        fitSegments(to: length)
    }

    /// Cuts the first segments to `length` bytes: those past it are empty (their transfers are answered `416`), the
    /// last one ends at it. The rest of the file is cut into segments of ``segmentSize`` as mirrors need them.
    mutating func fitSegments(to length: Int64) {
        for index in segments.indices {
            segments[index].start = min(segments[index].start, length)
            segments[index].end = min(segments[index].end, length)
            segments[index].done = min(segments[index].done, segments[index].end)
        }
        uncut = min(uncut, length)
    }
}
