import Foundation
import Testing

@testable import CancellableURLSession

/// The segmented download's decisions, without a server: which ranges each mirror asks for, which bytes are written,
/// and what a fault or a disagreeing mirror does to the segments.
@Suite struct SegmentScheduleTests {
    typealias Action = SegmentSchedule.Action

    static func options(segment: Int64 = 100, split: Int64 = 20, endGame: Bool = true) -> SegmentedDownloadOptions {
        var options = SegmentedDownloadOptions()
        options.segmentSize = segment
        options.minimumSplitSize = split
        options.endGame = endGame
        return options
    }

    static func partial(_ start: Int64, _ end: Int64, of total: Int64, tag: String? = "\"v1\"") -> RangeAnswer {
        .partial(start, end, of: total, tag: tag)
    }

    /// The ids of the transfers `actions` start, by mirror.
    static func started(_ actions: [Action]) -> [(id: Int, mirror: Int, start: Int64, end: Int64)] {
        actions.compactMap {
            if case .start(let id, let mirror, let start, let end) = $0 { (id, mirror, start, end) } else { nil }
        }
    }

    @Test func eachMirrorAsksForItsOwnSegmentThenTheLengthCutsTheRest() {
        var schedule = SegmentSchedule(mirrors: 3, options: Self.options())
        let first = Self.started(schedule.begin(at: 0))
        #expect(first.map(\.mirror) == [0, 1, 2])
        #expect(first.map(\.start) == [0, 100, 200])
        #expect(first.map(\.end) == [100, 200, 300])

        // Mirror 1 answers first: the file is 450 bytes. The rest is cut as mirrors become free: 300-400, 400-450.
        let (take, actions) = schedule.accept(Self.partial(100, 199, of: 450), for: first[1].id, at: 0)
        #expect(take)
        #expect(actions.isEmpty)  // every mirror is busy
        #expect(schedule.total == 450)
        #expect(schedule.segments.map(\.end) == [100, 200, 300])
        let (_, _, next) = schedule.receive(100, for: first[1].id, at: 1)
        #expect(Self.started(next).map(\.start) == [300])
        #expect(Self.started(next).map(\.end) == [400])
        _ = schedule.accept(Self.partial(0, 99, of: 450), for: first[0].id, at: 1)
        let (_, _, last) = schedule.receive(100, for: first[0].id, at: 2)
        #expect(Self.started(last).map(\.start) == [400])
        #expect(Self.started(last).map(\.end) == [450])
    }

    @Test func eachConnectionOfAMirrorFetchesASegmentOfItsOwn() {
        var options = Self.options()
        options.connectionsPerMirror = 2
        var schedule = SegmentSchedule(mirrors: 2, options: options)
        let first = Self.started(schedule.begin(at: 0))
        #expect(first.map(\.mirror) == [0, 1, 0, 1])
        #expect(first.map(\.start) == [0, 100, 200, 300])
        for transfer in first {
            _ = schedule.accept(Self.partial(transfer.start, transfer.start + 99, of: 500), for: transfer.id, at: 0)
        }
        #expect(schedule.mirrors.map(\.connections) == [2, 2])
        // Mirror 0's first connection finishes: it takes the last segment; the others are busy.
        let (_, _, next) = schedule.receive(100, for: first[0].id, at: 1)
        #expect(Self.started(next).map(\.mirror) == [0])
        #expect(Self.started(next).map(\.start) == [400])
        #expect(schedule.mirrors.map(\.connections) == [2, 2])
    }

    @Test func aHugeAnnouncedLengthCostsNoMemoryUntilItsBytesArrive() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options())
        let first = Self.started(schedule.begin(at: 0))
        let huge = Int64.max - 1
        #expect(schedule.accept(Self.partial(0, 99, of: huge), for: first[0].id, at: 0).0)
        #expect(schedule.total == huge)
        #expect(schedule.segments.count == 2)
        let (_, _, next) = schedule.receive(100, for: first[0].id, at: 1)
        #expect(Self.started(next).map(\.start) == [200])
        #expect(schedule.segments.count == 3)
    }

    @Test func theLengthTheCallerExpectsDropsAMirrorThatAnnouncesAnotherEvenTheFirst() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(), expectedLength: 300)
        let first = Self.started(schedule.begin(at: 0))
        #expect(!schedule.accept(Self.partial(0, 99, of: 999), for: first[0].id, at: 0).0)
        #expect(schedule.mirrors[0].dropped == .lengthDisagrees(expected: 300, announced: 999))
        #expect(schedule.total == nil)
        #expect(schedule.accept(Self.partial(100, 199, of: 300), for: first[1].id, at: 0).0)
        #expect(schedule.total == 300)
    }

    @Test func aMirrorThatFinishesTakesTheNextFreeSegmentAndBytesGoWhereTheyBelong() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options())
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 300), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(100, 199, of: 300), for: first[1].id, at: 0)

        let (write, goOn, none) = schedule.receive(60, for: first[0].id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<60))
        #expect(goOn && none.isEmpty)
        let (last, stop, next) = schedule.receive(40, for: first[0].id, at: 2)
        #expect(last == SegmentSchedule.Write(offset: 60, range: 0..<40))
        #expect(!stop)  // its segment is complete
        #expect(next.first == .cancel(id: first[0].id))
        #expect(Self.started(next).map(\.mirror) == [0])
        #expect(Self.started(next).map(\.start) == [200])
        #expect(schedule.written == 100)
    }

    @Test func anIdleMirrorSplitsTheLargestBusySegmentInProportionToSpeed() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(segment: 1_000, split: 10))
        let first = Self.started(schedule.begin(at: 0))
        // A 1,000-byte file: mirror 1's segment lies past it, and its 416 frees it at once.
        _ = schedule.accept(Self.partial(0, 999, of: 1_000), for: first[0].id, at: 0)
        let unsatisfiable = RangeAnswer(
            status: 416,
            range: ContentRange("bytes */1000"),
            rangeHeader: "bytes */1000"
        )
        let (take, actions) = schedule.accept(unsatisfiable, for: first[1].id, at: 0)
        #expect(!take)
        // Neither mirror has a speed yet: mirror 1 takes half of what is left.
        #expect(Self.started(actions).map(\.start) == [500])
        #expect(Self.started(actions).map(\.end) == [1_000])
        #expect(schedule.segments.first { $0.start == 0 }?.end == 500)

        // Mirror 0 keeps writing up to its segment's new end, and no further.
        let (write, goOn, stop) = schedule.receive(600, for: first[0].id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<500))
        #expect(!goOn)
        #expect(stop.contains(.cancel(id: first[0].id)))
    }

    @Test func theSplitFollowsMeasuredSpeeds() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(segment: 1_000, split: 10))
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 999, of: 2_000), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(1_000, 1_999, of: 2_000), for: first[1].id, at: 0)
        // Mirror 1 is four times as fast: it finishes its segment while mirror 0 has fetched 250 bytes.
        _ = schedule.receive(250, for: first[0].id, at: 1)
        let (_, _, actions) = schedule.receive(1_000, for: first[1].id, at: 1)
        // 750 bytes are left of segment 0: mirror 1 takes 4/5 of them.
        let split = Self.started(actions)
        #expect(split.map(\.mirror) == [1])
        #expect(split.map(\.start) == [400])
        #expect(split.map(\.end) == [1_000])
    }

    @Test func theEndGameRacesTheRestAndTheFirstToCompleteStopsTheOther() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(segment: 100, split: 60))
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 200), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(100, 199, of: 200), for: first[1].id, at: 0)
        _ = schedule.receive(10, for: first[0].id, at: 1)  // slow
        let (_, _, actions) = schedule.receive(100, for: first[1].id, at: 1)  // fast, done
        // 90 bytes left, too few to split in two of 60: mirror 1 races the rest.
        let race = Self.started(actions)
        #expect(race.map(\.start) == [10])
        #expect(race.map(\.end) == [100])
        _ = schedule.accept(Self.partial(10, 99, of: 200), for: race[0].id, at: 1)

        // The slow one writes 20 more; the racer's first 20 bytes are the same ones and are not written again.
        #expect(schedule.receive(20, for: first[0].id, at: 2).0 == SegmentSchedule.Write(offset: 10, range: 0..<20))
        #expect(schedule.receive(30, for: race[0].id, at: 2).0 == SegmentSchedule.Write(offset: 30, range: 20..<30))
        let (_, goOn, done) = schedule.receive(60, for: race[0].id, at: 2)
        #expect(!goOn)
        #expect(done.contains(.cancel(id: first[0].id)))
        #expect(schedule.isComplete)
        #expect(schedule.mirrors[0].received + schedule.mirrors[1].received - 200 == 20)  // fetched twice
    }

    @Test func withoutTheEndGameASlowMirrorIsLeftToFinish() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(segment: 100, split: 60, endGame: false))
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 200), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(100, 199, of: 200), for: first[1].id, at: 0)
        _ = schedule.receive(10, for: first[0].id, at: 1)
        #expect(Self.started(schedule.receive(100, for: first[1].id, at: 1).2).isEmpty)
    }

    @Test func aMirrorThatServesAnotherLengthOrRangeIsDroppedAndItsSegmentGoesToAnother() {
        for (answer, reason) in [
            (Self.partial(0, 99, of: 999), MirrorDropReason.lengthDisagrees(expected: 300, announced: 999)),
            (Self.partial(0, 49, of: 300), .unexpectedContentRange("bytes 0-49/300")),  // not the 0-99 asked
            (Self.partial(5, 99, of: 300), .unexpectedContentRange("bytes 5-99/300")),
        ] {
            var schedule = SegmentSchedule(mirrors: 2, options: Self.options())
            let first = Self.started(schedule.begin(at: 0))
            _ = schedule.accept(Self.partial(100, 199, of: 300), for: first[1].id, at: 0)
            let (take, actions) = schedule.accept(answer, for: first[0].id, at: 0)
            #expect(!take)
            #expect(actions.contains(.cancel(id: first[0].id)))
            #expect(schedule.mirrors[0].dropped == reason)
            // Its segment goes to the mirror that is left, once that one is free.
            let (_, _, next) = schedule.receive(100, for: first[1].id, at: 1)
            #expect(Self.started(next).map(\.start) == [0])
        }
    }

    @Test func aContradictingValidatorAnIgnoredRangeAndAnErrorStatusDropTheMirror() {
        for (answer, reason) in [
            (
                RangeAnswer(status: 206, entityTag: "\"v2\"", validator: .entityTag("\"v2\"")),
                MirrorDropReason.validatorDisagrees(expected: "\"v1\"", announced: "\"v2\"")
            ),
            (RangeAnswer(status: 200), .ignoresRanges),
            (RangeAnswer(status: 503), .status(503)),
            (RangeAnswer(status: 206, contentCoding: "gzip"), .contentCoded("gzip")),
        ] {
            var schedule = SegmentSchedule(mirrors: 2, options: Self.options())
            let first = Self.started(schedule.begin(at: 0))
            _ = schedule.accept(Self.partial(100, 199, of: 300), for: first[1].id, at: 0)
            var answer = answer
            if answer.status == 206, answer.contentCoding == nil {
                let tagged = Self.partial(0, 99, of: 300, tag: "\"v2\"")
                answer.range = tagged.range
                answer.rangeHeader = tagged.rangeHeader
            }
            #expect(!schedule.accept(answer, for: first[0].id, at: 0).0)
            #expect(schedule.mirrors[0].dropped == reason)
        }
    }

    @Test func aFailedTransferKeepsItsBytesOnlyIfItsValidatorProvesThem() {
        for tag in ["\"v1\"", nil] {
            var schedule = SegmentSchedule(mirrors: 2, options: Self.options())
            let first = Self.started(schedule.begin(at: 0))
            _ = schedule.accept(Self.partial(100, 199, of: 200, tag: tag), for: first[1].id, at: 0)
            _ = schedule.accept(Self.partial(0, 99, of: 200, tag: tag), for: first[0].id, at: 0)
            _ = schedule.receive(40, for: first[0].id, at: 1)
            _ = schedule.end(first[0].id, fault: .transferFailed(.networkConnectionLost, description: "lost"), at: 1)
            #expect(schedule.mirrors[0].dropped == .transferFailed(.networkConnectionLost, description: "lost"))
            // Proven bytes stay; unproven ones are fetched again from byte 0.
            #expect(schedule.segments[0].done == (tag == nil ? 0 : 40))
            let (_, _, actions) = schedule.receive(100, for: first[1].id, at: 2)
            #expect(Self.started(actions).map(\.start) == [tag == nil ? 0 : 40])
        }
    }

    @Test func aBodyThatEndsEarlyDropsItsMirror() {
        var schedule = SegmentSchedule(mirrors: 1, options: Self.options())
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 100), for: first[0].id, at: 0)
        _ = schedule.receive(30, for: first[0].id, at: 1)
        _ = schedule.end(first[0].id, fault: nil, at: 1)
        #expect(schedule.mirrors[0].dropped == .endedEarly(received: 30, expected: 100))
        #expect(schedule.isStranded)
    }

    @Test func aStalledTransferAndATooSlowOneAreFoundOnTheWatchClock() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(segment: 1_000))
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 999, of: 2_000), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(1_000, 1_999, of: 2_000), for: first[1].id, at: 0)
        // Mirror 0 sends 10 bytes, then nothing; mirror 1 sends 100 bytes every tick.
        _ = schedule.receive(10, for: first[0].id, at: 0.5)
        var found: [(Int, MirrorDropReason)] = []
        for tick in 1...3 {
            _ = schedule.receive(100, for: first[1].id, at: Double(tick))
            found = schedule.tick(by: 1, stallTimeout: 3, minimumSpeed: nil, at: Double(tick))
            #expect(found.isEmpty == (tick < 3))
        }
        #expect(found.map(\.0) == [first[0].id])
        #expect(found.first?.1 == .stalled(seconds: 3))

        // A speed floor, after 3 seconds of the watch clock: mirror 0 made 10 bytes in 3 s of real time, mirror 1
        // 300 — above a floor of 50.
        var slow = SegmentSchedule(mirrors: 2, options: Self.options(segment: 1_000))
        let second = Self.started(slow.begin(at: 0))
        _ = slow.accept(Self.partial(0, 999, of: 2_000), for: second[0].id, at: 0)
        _ = slow.accept(Self.partial(1_000, 1_999, of: 2_000), for: second[1].id, at: 0)
        for tick in 1...3 {
            _ = slow.receive(tick == 3 ? 10 : 0, for: second[0].id, at: Double(tick))
            _ = slow.receive(100, for: second[1].id, at: Double(tick))
            found = slow.tick(by: 1, stallTimeout: 3, minimumSpeed: 50, at: Double(tick))
        }
        #expect(found.map(\.0) == [second[0].id])
        #expect(found.first?.1 == .tooSlow(bytesPerSecond: 3))
    }

    // MARK: Retries

    static func retrying(_ retries: Int, delay: TimeInterval = 2) -> SegmentedDownloadOptions {
        var options = Self.options()
        options.retriesPerMirror = retries
        options.retryDelay = delay
        options.stallTimeout = 4  // a watch period of 1 s
        return options
    }

    /// A fault that may pass stops only its request; the mirror rests, then fetches the segment again from the bytes
    /// it proved; the fault after the retries runs out drops it.
    @Test func aFaultThatMayPassIsForgivenUpToTheRetriesThenDropsTheMirror() {
        var schedule = SegmentSchedule(mirrors: 1, options: Self.retrying(2))
        var transfer = Self.started(schedule.begin(at: 0))[0]
        _ = schedule.accept(Self.partial(0, 99, of: 300), for: transfer.id, at: 0)
        _ = schedule.receive(40, for: transfer.id, at: 1)
        for fault in [
            MirrorDropReason.transferFailed(.networkConnectionLost, description: "lost"), .stalled(seconds: 4),
        ] {
            let actions = schedule.fail(transfer.id, fault, at: 1)
            #expect(actions == [.cancel(id: transfer.id)], "it rests before its next request")
            #expect(schedule.mirrors[0].dropped == nil && schedule.mirrors[0].lastRetriedFault == fault)
            #expect(!schedule.isStranded)
            // Rests 2 s plus one period of the 1 s watch clock: nothing after two ticks, the request after three.
            #expect(schedule.rest(by: 1, at: 2).isEmpty)
            #expect(schedule.rest(by: 1, at: 3).isEmpty)
            let again = Self.started(schedule.rest(by: 1, at: 4))
            #expect(again.map(\.start) == [40] && again.map(\.end) == [100], "from the proven bytes on")
            transfer = again[0]
            _ = schedule.accept(Self.partial(40, 99, of: 300), for: transfer.id, at: 4)
        }
        #expect(schedule.mirrors[0].retries == 2)
        _ = schedule.fail(transfer.id, .status(503), at: 5)
        #expect(schedule.mirrors[0].dropped == .status(503))
        #expect(schedule.isStranded)
    }

    /// A server's `Retry-After` lengthens the rest (never shortens it); one over five minutes drops the mirror.
    @Test func aRetryAfterLongerThanTheDelayIsWaitedForUpToFiveMinutes() {
        var schedule = SegmentSchedule(mirrors: 1, options: Self.retrying(3, delay: 1))
        let first = Self.started(schedule.begin(at: 0))[0]
        _ = schedule.accept(RangeAnswer(status: 503, retryAfter: 3), for: first.id, at: 0)
        // 3 s plus one period of the 1 s watch clock.
        for tick in 1...3 { #expect(schedule.rest(by: 1, at: Double(tick)).isEmpty, "tick \(tick)") }
        let second = Self.started(schedule.rest(by: 1, at: 4))
        #expect(second.map(\.start) == [0])
        _ = schedule.accept(RangeAnswer(status: 429, retryAfter: 0), for: second[0].id, at: 4)
        #expect(schedule.rest(by: 1, at: 5).isEmpty, "the delay still holds")
        let third = Self.started(schedule.rest(by: 1, at: 6))
        #expect(third.count == 1)
        _ = schedule.accept(RangeAnswer(status: 503, retryAfter: 301), for: third[0].id, at: 6)
        #expect(schedule.mirrors[0].dropped == .status(503))
        #expect(schedule.mirrors[0].retries == 2)

        // A delay of the caller's own over five minutes is the caller's to choose.
        var patient = SegmentSchedule(mirrors: 1, options: Self.retrying(1, delay: 600))
        let request = Self.started(patient.begin(at: 0))[0]
        _ = patient.fail(request.id, .transferFailed(.networkConnectionLost, description: "lost"), at: 0)
        #expect(patient.mirrors[0].dropped == nil && patient.mirrors[0].resting == 601)
    }

    /// The policy a single-URL download takes backs each rest off by the faults forgiven in a row before it.
    @Test func eachRestIsTheDelayBackedOffByTheFaultsForgivenInARow() {
        var options = Self.retrying(3)
        options.retrying = DownloadRetryPolicy(retries: 3, delay: 1, backoff: 3)
        var schedule = SegmentSchedule(mirrors: 1, options: options)
        var transfer = Self.started(schedule.begin(at: 0))[0]
        var rests: [TimeInterval] = []
        for _ in 1...3 {
            _ = schedule.fail(transfer.id, .status(503), at: 0)
            rests.append(schedule.mirrors[0].resting)
            var next: [(id: Int, mirror: Int, start: Int64, end: Int64)] = []
            while next.isEmpty { next = Self.started(schedule.rest(by: 1, at: 0)) }
            transfer = next[0]
        }
        // 1, 3 and 9 s, each plus one period of the 1 s watch clock; the fourth fault drops the mirror.
        #expect(rests == [2, 4, 10])
        _ = schedule.fail(transfer.id, .status(503), at: 0)
        #expect(schedule.mirrors[0].dropped == .status(503))
    }

    /// No delay stays no delay, however far the back-off has grown: `0 × 10^999` is not a rest of NaN seconds.
    @Test func noDelayIsNoRestWhateverTheBackOff() {
        let policy = DownloadRetryPolicy(retries: 1_000, delay: 0, backoff: 10)
        #expect(policy.delay(before: 1_000, retryAfter: nil) == 0)
        #expect(policy.delay(before: 1_000, retryAfter: 2) == 2)
        let growing = DownloadRetryPolicy(retries: 1_000, delay: 1, backoff: 10)
        #expect(growing.delay(before: 1_000, retryAfter: nil) == 86_400)
    }

    @Test func aFaultThatWillNotPassDropsTheMirrorWhateverTheRetries() {
        for fault in [
            MirrorDropReason.status(404), .tooSlow(bytesPerSecond: 1), .transferFailed(.badURL, description: "bad"),
        ] {
            var schedule = SegmentSchedule(mirrors: 2, options: Self.retrying(5))
            let first = Self.started(schedule.begin(at: 0))
            _ = schedule.fail(first[0].id, fault, at: 0)
            #expect(schedule.mirrors[0].dropped == fault)
            #expect(schedule.mirrors[0].retries == 0)
        }
    }

    /// The count is of faults in a row: a segment the mirror completes starts it again. Without a delay, the request
    /// is made again at once; the other mirror takes the freed segment first if it is free.
    @Test func aCompletedSegmentStartsTheCountAgainAndNoDelayRetriesAtOnce() {
        var schedule = SegmentSchedule(mirrors: 1, options: Self.retrying(1, delay: 0))
        var transfer = Self.started(schedule.begin(at: 0))[0]
        _ = schedule.accept(Self.partial(0, 99, of: 300, tag: nil), for: transfer.id, at: 0)
        for round in 0..<3 {
            _ = schedule.receive(10, for: transfer.id, at: 1)
            let actions = schedule.fail(transfer.id, .endedEarly(received: 10, expected: 100), at: 1)
            // Unproven bytes (no validator) are fetched again: the segment starts over at its own start.
            let again = Self.started(actions)
            #expect(again.map(\.start) == [Int64(round) * 100], "round \(round)")
            transfer = again[0]
            let start = again[0].start
            _ = schedule.accept(Self.partial(start, start + 99, of: 300, tag: nil), for: transfer.id, at: 1)
            let (_, _, next) = schedule.receive(100, for: transfer.id, at: 2)
            #expect(schedule.mirrors[0].faultsInARow == 0)
            if round < 2 { transfer = Self.started(next)[0] }
        }
        #expect(schedule.isComplete)
        #expect(schedule.mirrors[0].retries == 3 && schedule.mirrors[0].dropped == nil)
    }

    /// Before any mirror has said the length, a forgiven fault gives the mirror its segment of the first grid again.
    @Test func aFaultBeforeTheLengthIsKnownAsksForTheSameSegmentAgain() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.retrying(1, delay: 0))
        let first = Self.started(schedule.begin(at: 0))
        let (take, actions) = schedule.accept(RangeAnswer(status: 503), for: first[1].id, at: 0)
        #expect(!take)
        #expect(Self.started(actions).map(\.mirror) == [1])
        #expect(Self.started(actions).map(\.start) == [100])
        #expect(schedule.total == nil)
    }

    @Test func anEmptyFileIsCompleteAtOnce() {
        var schedule = SegmentSchedule(mirrors: 1, options: Self.options())
        let first = Self.started(schedule.begin(at: 0))
        let empty = RangeAnswer(status: 416, range: ContentRange("bytes */0"), rangeHeader: "bytes */0")
        _ = schedule.accept(empty, for: first[0].id, at: 0)
        #expect(schedule.isComplete)
        #expect(schedule.total == 0)
    }

    // MARK: Resuming

    @Test func aResumedScheduleFetchesOnlyTheGapsCutToSegmentsAndKeepsTheRest() {
        // A 1,000-byte file of which 0-150 and 400-450 are on disk: the gaps 150-400 and 450-1000 remain.
        var schedule = SegmentSchedule(
            mirrors: 2,
            options: Self.options(),
            resuming: [0..<150, 400..<450],
            of: 1_000,
            validator: .entityTag("\"v1\"")
        )
        #expect(schedule.written == 200)
        #expect(schedule.keptRanges == [0..<150, 400..<450])
        #expect(!schedule.isComplete)
        // The length is known: no request is sent past it, and none asks for a byte on disk. The 250-byte gap is
        // cut to one segment's 100 bytes.
        let first = Self.started(schedule.begin(at: 0))
        #expect(first.map(\.start) == [150, 250])
        #expect(first.map(\.end) == [250, 350])
        var fetched: [Range<Int64>] = first.map { $0.start..<$0.end }
        var running = first.map(\.id)
        var clock: TimeInterval = 0
        while let id = running.first {
            running.removeFirst()
            let transfer = schedule.transfers[id]!
            _ = schedule.accept(Self.partial(transfer.start, transfer.requestedEnd - 1, of: 1_000), for: id, at: clock)
            clock += 1
            let (write, _, actions) = schedule.receive(Int(transfer.requestedEnd - transfer.start), for: id, at: clock)
            #expect(write?.offset == transfer.start)
            for next in Self.started(actions) {
                fetched.append(next.start..<next.end)
                running.append(next.id)
            }
        }
        #expect(schedule.isComplete)
        #expect(schedule.keptRanges == [0..<1_000])
        // No kept byte was asked for; every other byte was, and no range was asked for twice (the last segment was
        // split for the idle mirror, 950-1000 then 975-1000, which overlap).
        let asked = fetched.sorted { $0.lowerBound < $1.lowerBound }
        #expect(asked.allSatisfy { !$0.overlaps(0..<150) && !$0.overlaps(400..<450) })
        #expect(asked.map(\.lowerBound) == [150, 250, 350, 450, 550, 650, 750, 850, 950, 975])
        #expect(asked.allSatisfy { $0.count <= 100 })
    }

    @Test func aResumedScheduleDropsAMirrorThatDoesNotRepeatTheValidatorOrAnnouncesAnotherLength() {
        var schedule = SegmentSchedule(
            mirrors: 2,
            options: Self.options(),
            resuming: [0..<100],
            of: 300,
            validator: .entityTag("\"v1\"")
        )
        let first = Self.started(schedule.begin(at: 0))
        #expect(first.map(\.start) == [100, 200])  // the two missing segments
        // No validator at all: in a new download it would not contradict; a resumed one requires it repeated.
        let (take0, _) = schedule.accept(Self.partial(100, 199, of: 300, tag: nil), for: first[0].id, at: 0)
        #expect(!take0)
        #expect(schedule.mirrors[first[0].mirror].dropped == .validatorDisagrees(expected: "\"v1\"", announced: nil))
        let rest = first[1]
        let (take1, _) = schedule.accept(Self.partial(rest.start, rest.end - 1, of: 301), for: rest.id, at: 0)
        #expect(!take1)
        #expect(schedule.mirrors[rest.mirror].dropped == .lengthDisagrees(expected: 300, announced: 301))
        // The kept bytes are untouched by either.
        #expect(schedule.keptRanges == [0..<100])
        #expect(schedule.isStranded)
    }

    @Test func aPauseKeepsEveryByteWrittenAsOrderedDisjointRanges() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options())
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 400), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(100, 199, of: 400), for: first[1].id, at: 0)
        _ = schedule.receive(30, for: first[1].id, at: 1)
        _ = schedule.receive(100, for: first[0].id, at: 1)  // segment 0 complete: mirror 0 takes 200-300
        #expect(schedule.keptRanges == [0..<130])
        schedule.stopAll()
        #expect(schedule.keptRanges == [0..<130])
    }

    @Test func aResumedFileThatIsWholeIsCompleteAtOnce() {
        var schedule = SegmentSchedule(
            mirrors: 1,
            options: Self.options(),
            resuming: [0..<250],
            of: 250,
            validator: nil
        )
        #expect(schedule.isComplete)
        #expect(schedule.begin(at: 0).isEmpty)
    }

    // MARK: Piece digests

    /// Digests only their count matters to the schedule; the engine compares them.
    static func pieces(_ length: Int64, of total: Int64) -> PieceDigests {
        let count = Int((total + length - 1) / length)
        return PieceDigests(length: length, sha256: Array(repeating: String(repeating: "0", count: 64), count: count))
    }

    @Test func aPieceOneMirrorWroteThatFailsDropsThatMirrorAndIsFetchedAgain() {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(), pieces: Self.pieces(50, of: 200))
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 200), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(100, 199, of: 200), for: first[1].id, at: 0)
        _ = schedule.receive(60, for: first[0].id, at: 1)
        #expect(schedule.completedPieces(overlapping: 0..<60) == [0])
        #expect(schedule.authors[0] == [0])
        schedule.pieceVerified(0)
        _ = schedule.receive(40, for: first[1].id, at: 1)
        _ = schedule.receive(20, for: first[1].id, at: 2)  // 100-160: piece 2 and 10 bytes of piece 3
        #expect(schedule.completedPieces(overlapping: 100..<160) == [2])
        let actions = schedule.pieceFailed(2, at: 2)
        // Mirror 1 alone wrote piece 2: it is dropped, and its transfer stopped. Its response repeated the
        // reference's ETag, but a mirror caught lying keeps nothing: its bytes of piece 3 go too.
        #expect(schedule.mirrors[1].dropped == .pieceMismatch(piece: 2))
        #expect(actions.contains(.cancel(id: first[1].id)))
        #expect(schedule.keptRanges == [0..<60])
        #expect(schedule.written == 60)
        #expect(!schedule.isComplete)
        // Piece 0 stays verified; no byte of it is fetched again.
        #expect(schedule.verified == [true, false, false, false])
    }

    @Test func aVerifiedPieceWrittenAgainAfterARollbackIsCheckedAgain() throws {
        var schedule = SegmentSchedule(mirrors: 2, options: Self.options(), pieces: Self.pieces(50, of: 200))
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 200, tag: nil), for: first[0].id, at: 0)
        _ = schedule.accept(Self.partial(100, 199, of: 200, tag: nil), for: first[1].id, at: 0)
        _ = schedule.receive(60, for: first[0].id, at: 1)
        schedule.pieceVerified(0)
        // Mirror 0 is dropped: without a validator its bytes prove nothing, and its segment starts again from 0.
        _ = schedule.drop(0, .status(500), at: 1)
        #expect(schedule.verified == [true, false, false, false])
        let (_, _, actions) = schedule.receive(100, for: first[1].id, at: 2)
        let again = try #require(Self.started(actions).first)
        #expect(again.start == 0)
        _ = schedule.accept(Self.partial(0, 99, of: 200, tag: nil), for: again.id, at: 2)
        _ = schedule.receive(50, for: again.id, at: 3)
        // The digest vouched for the bytes it read, not for these: piece 0 is checked again, and names its writer.
        #expect(schedule.verified == [false, false, false, false])
        #expect(schedule.completedPieces(overlapping: 0..<50) == [0])
        #expect(schedule.authors[0] == [1])
        #expect(!schedule.isComplete)
    }

    @Test func aPieceSeveralMirrorsWroteThatFailsIsFetchedAgainByOneTransferAlone() {
        // A 100-byte file in pieces of 60: mirror 1 splits mirror 0's segment at 50, so piece 0 (0-60) has two
        // authors.
        var schedule = SegmentSchedule(
            mirrors: 2,
            options: Self.options(split: 30, endGame: false),
            pieces: Self.pieces(60, of: 100)
        )
        let first = Self.started(schedule.begin(at: 0))
        _ = schedule.accept(Self.partial(0, 99, of: 100), for: first[0].id, at: 0)
        // Mirror 1's own segment lies past the end (416): it takes the tail of mirror 0's.
        let (_, split) = schedule.accept(
            RangeAnswer(status: 416, range: ContentRange("bytes */100"), rangeHeader: "bytes */100"),
            for: first[1].id,
            at: 1
        )
        let tail = try! #require(Self.started(split).first)
        #expect(tail.mirror == 1 && tail.start == 50 && tail.end == 100)
        _ = schedule.receive(60, for: first[0].id, at: 2)  // 0-50: the rest is past its segment's new end
        _ = schedule.accept(Self.partial(50, 99, of: 100), for: tail.id, at: 2)
        _ = schedule.receive(50, for: tail.id, at: 3)
        #expect(schedule.completedPieces(overlapping: 0..<100) == [0, 1])
        #expect(schedule.authors[0] == [0, 1] && schedule.authors[1] == [1])
        let actions = schedule.pieceFailed(0, at: 3)
        // Nobody is dropped: either could have sent the bad bytes. Piece 0 is fetched again by one transfer, and
        // the other idle mirror finds nothing it may split or race.
        #expect(schedule.mirrors.allSatisfy { $0.dropped == nil })
        #expect(schedule.keptRanges == [60..<100])
        let again = Self.started(actions)
        #expect(again.count == 1 && again.first?.start == 0 && again.first?.end == 60)
        #expect(schedule.segments.filter(\.exclusive).map { $0.start..<$0.end } == [0..<60])
        // Written by one mirror alone, a second failure names it.
        let refetch = try! #require(again.first)
        _ = schedule.accept(Self.partial(0, 59, of: 100), for: refetch.id, at: 4)
        _ = schedule.receive(60, for: refetch.id, at: 5)
        #expect(schedule.completedPieces(overlapping: 0..<60) == [0])
        _ = schedule.pieceFailed(0, at: 5)
        #expect(schedule.mirrors[refetch.mirror].dropped == .pieceMismatch(piece: 0))
    }

    @Test func aFailedPieceWithUnknownOrSeveralAuthorsDropsNobodyAndIsNeverSplit() {
        // A resumed download kept 0-100 of 200: who wrote it is unknown.
        var schedule = SegmentSchedule(
            mirrors: 2,
            options: Self.options(segment: 100, split: 10),
            pieces: Self.pieces(100, of: 200),
            resuming: [0..<100],
            of: 200,
            validator: .entityTag("\"v1\"")
        )
        #expect(schedule.completedPieces(overlapping: 0..<200) == [0])
        #expect(schedule.authors[0] == [SegmentSchedule.kept])
        let actions = schedule.pieceFailed(0, at: 0)
        #expect(schedule.mirrors.allSatisfy { $0.dropped == nil })
        #expect(schedule.keptRanges.isEmpty)
        // Both mirrors take work: one the bad piece, alone, the other the rest; neither splits the piece.
        let started = Self.started(actions + schedule.begin(at: 0))
        #expect(Set(started.map { $0.start..<$0.end }) == [0..<100, 100..<200])
        let piece = try! #require(started.first { $0.start == 0 })
        _ = schedule.accept(Self.partial(0, 99, of: 200, tag: "\"v1\""), for: piece.id, at: 0)
        let other = try! #require(started.first { $0.start == 100 })
        _ = schedule.accept(Self.partial(100, 199, of: 200, tag: "\"v1\""), for: other.id, at: 0)
        let (_, _, after) = schedule.receive(100, for: other.id, at: 1)
        // The idle mirror would split or race a busy segment; the bad piece's is exclusive: nothing to do.
        #expect(Self.started(after).isEmpty)
        _ = schedule.receive(100, for: piece.id, at: 2)
        #expect(schedule.completedPieces(overlapping: 0..<200) == [0, 1])
        #expect(schedule.authors[0] == [piece.mirror])
    }
}
