import Foundation
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A single URL on the schedule (``SegmentSchedule/Requests/rest``): one request for every byte not written yet,
/// whose answer may be the whole file, continue the bytes kept, or prove them complete — and may name no length.
@Suite struct SegmentScheduleRestTests {
    typealias Action = SegmentSchedule.Action
    static let open = SegmentSchedule.openEnd

    static func fresh(
        _ requests: SegmentSchedule.Requests = .rest,
        expectedLength: Int64? = nil,
        retries: Int = 0
    ) -> SegmentSchedule {
        var options = SegmentedDownloadOptions()
        options.retrying = DownloadRetryPolicy(retries: retries, delay: 0)
        return SegmentSchedule(mirrors: 1, options: options, requests: requests, expectedLength: expectedLength)
    }

    static func resumed(_ kept: Int64, of total: Int64?, tag: String? = "\"v1\"") -> SegmentSchedule {
        SegmentSchedule(
            mirrors: 1,
            options: SegmentedDownloadOptions(),
            requests: .rest,
            resuming: kept > 0 ? [0..<kept] : [],
            of: total,
            validator: tag.map { .entityTag($0) }
        )
    }

    static func whole(length: Int64?, tag: String? = "\"v1\"", coding: String? = nil) -> RangeAnswer {
        RangeAnswer(
            status: 200,
            entityTag: tag,
            validator: tag.map { .entityTag($0) },
            contentCoding: coding,
            announcedLength: length
        )
    }

    static func partial(_ start: Int64, _ end: Int64, of total: Int64?, tag: String? = "\"v1\"") -> RangeAnswer {
        .partial(start, end, of: total, tag: tag)
    }

    static func started(_ actions: [Action]) -> [(id: Int, start: Int64, end: Int64)] {
        actions.compactMap {
            if case .start(let id, _, let start, let end) = $0 { (id, start, end) } else { nil }
        }
    }

    /// Begins `schedule`: the id of its one request, which must ask for every byte from `start`.
    static func begin(_ schedule: inout SegmentSchedule, expectingStart start: Int64) -> Int? {
        let first = started(schedule.begin(at: 0))
        #expect(first.count == 1)
        #expect(first.first?.start == start)
        #expect(first.first?.end == open)
        return first.first?.id
    }

    @Test func aNewDownloadAsksForTheWholeFileOnceAndTakesA200AsIt() throws {
        var schedule = Self.fresh()
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        let (take, actions) = schedule.accept(Self.whole(length: 300), for: id, at: 0)
        #expect(take)
        #expect(actions.isEmpty)  // nothing was written: nothing to empty
        #expect(schedule.total == 300)
        let (write, goOn, _) = schedule.receive(200, for: id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<200))
        #expect(goOn)
        let (last, more, ended) = schedule.receive(100, for: id, at: 2)
        #expect(last == SegmentSchedule.Write(offset: 200, range: 0..<100))
        #expect(!more)
        #expect(ended == [.cancel(id: id)])
        #expect(schedule.isComplete)
    }

    @Test func aBodyOfNoAnnouncedLengthMakesTheFileAsLongAsItIsOnceItEndsWithoutAFault() throws {
        var schedule = Self.fresh()
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        _ = schedule.accept(Self.whole(length: nil), for: id, at: 0)
        _ = schedule.receive(100, for: id, at: 1)
        let (_, goOn, _) = schedule.receive(150, for: id, at: 2)
        #expect(goOn)
        #expect(schedule.total == nil)
        #expect(!schedule.isComplete)
        // What the file holds, of a length nobody knows yet.
        #expect(schedule.keptRanges == [0..<250])
        #expect(schedule.end(id, fault: nil, at: 3).isEmpty)
        #expect(schedule.total == 250)
        #expect(schedule.isComplete)
    }

    @Test func anEmptyFileIsCompleteAsSoonAsItsAnswerSaysSo() throws {
        var schedule = Self.fresh()
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        let (take, _) = schedule.accept(Self.whole(length: 0), for: id, at: 0)
        #expect(take)
        #expect(schedule.total == 0)
        #expect(schedule.isComplete)
        #expect(schedule.transfers.isEmpty)
    }

    @Test func aResumeAsksForTheRestAndA206UnderTheSameValidatorContinuesIt() throws {
        var schedule = Self.resumed(100, of: 300)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, actions) = schedule.accept(Self.partial(100, 299, of: 300), for: id, at: 0)
        #expect(take)
        #expect(actions.isEmpty)
        let (write, goOn, _) = schedule.receive(200, for: id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 100, range: 0..<200))
        #expect(!goOn)
        #expect(schedule.isComplete)
    }

    @Test func aResumeOfUnknownLengthLearnsItFromThe206() throws {
        var schedule = Self.resumed(100, of: nil)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, _) = schedule.accept(Self.partial(100, 199, of: 200), for: id, at: 0)
        #expect(take)
        #expect(schedule.total == 200)
        _ = schedule.receive(100, for: id, at: 1)
        #expect(schedule.isComplete)
    }

    @Test func a206UnderAnotherValidatorDropsTheOneMirror() throws {
        var schedule = Self.resumed(100, of: 300)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, actions) = schedule.accept(Self.partial(100, 299, of: 300, tag: "\"v2\""), for: id, at: 0)
        #expect(!take)
        #expect(actions.contains(.cancel(id: id)))
        #expect(schedule.mirrors[0].dropped == .validatorDisagrees(expected: "\"v1\"", announced: "\"v2\""))
        #expect(schedule.isStranded)
    }

    @Test func a206ToARequestForTheWholeFileIsNotTheFile() throws {
        var schedule = Self.fresh()
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        let (take, _) = schedule.accept(Self.partial(0, 99, of: 300), for: id, at: 0)
        #expect(!take)
        #expect(schedule.mirrors[0].dropped == .unexpectedContentRange("bytes 0-99/300"))
    }

    @Test func a200ThatRepeatsTheValidatorKeepsTheBytesAndDoesNotWriteThemAgain() throws {
        var schedule = Self.resumed(100, of: 300)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, actions) = schedule.accept(Self.whole(length: 300), for: id, at: 0)
        #expect(take)
        #expect(actions.isEmpty)  // no truncate: the bytes kept stay
        // The body starts at byte 0: its first 100 bytes are in the file already.
        let (skipped, _, _) = schedule.receive(60, for: id, at: 1)
        #expect(skipped == nil)
        let (straddling, _, _) = schedule.receive(60, for: id, at: 2)
        #expect(straddling == SegmentSchedule.Write(offset: 100, range: 40..<60))
        let (_, goOn, _) = schedule.receive(180, for: id, at: 3)
        #expect(!goOn)
        #expect(schedule.isComplete)
        #expect(schedule.written == 300)
    }

    @Test(arguments: [
        SegmentScheduleRestTests.whole(length: 400, tag: "\"v2\""),  // another file
        SegmentScheduleRestTests.whole(length: 300, tag: nil),  // the same length, proving nothing
        SegmentScheduleRestTests.whole(length: 300, coding: "gzip"),  // not at the file's offsets
    ])
    func a200ThatDoesNotProveTheBytesKeptStartsTheFileOverEmptyingItFirst(answer: RangeAnswer) throws {
        var schedule = Self.resumed(100, of: 300)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, actions) = schedule.accept(answer, for: id, at: 0)
        #expect(take)
        #expect(actions == [.truncate])
        #expect(schedule.written == 0)
        #expect(schedule.total == answer.announcedLength)
        #expect(schedule.validator == answer.validator)
        let (write, _, _) = schedule.receive(50, for: id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<50))
        #expect(schedule.keptRanges == [0..<50])
    }

    @Test func a416ProvesTheBytesKeptTheWholeFileUnlessItNamesAnotherLengthOrValidator() throws {
        func answer416(_ total: Int64, tag: String?) -> RangeAnswer {
            RangeAnswer(
                status: 416,
                range: ContentRange("bytes */\(total)"),
                rangeHeader: "bytes */\(total)",
                entityTag: tag,
                validator: tag.map { .entityTag($0) }
            )
        }
        // Of a file whose length nobody named: silent about the validator, as most 416s are, and of the length kept.
        var complete = Self.resumed(300, of: nil)
        let id = try #require(Self.begin(&complete, expectingStart: 300))
        let (take, actions) = complete.accept(answer416(300, tag: nil), for: id, at: 0)
        #expect(!take)
        #expect(actions.isEmpty)
        #expect(complete.isComplete)
        #expect(complete.transfers.isEmpty)

        for wrong in [answer416(500, tag: nil), answer416(300, tag: "\"v2\"")] {
            var schedule = Self.resumed(300, of: nil)
            let id = try #require(Self.begin(&schedule, expectingStart: 300))
            let (take, _) = schedule.accept(wrong, for: id, at: 0)
            #expect(!take)
            #expect(schedule.mirrors[0].dropped != nil)
            #expect(!schedule.isComplete)
        }
    }

    @Test func aLengthOtherThanTheCallerExpectsDropsTheMirrorBeforeAByteIsWritten() throws {
        var schedule = Self.fresh(expectedLength: 300)
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        let (take, _) = schedule.accept(Self.whole(length: 301), for: id, at: 0)
        #expect(!take)
        #expect(schedule.mirrors[0].dropped == .lengthDisagrees(expected: 300, announced: 301))
    }

    @Test func aForgivenFaultAsksForTheRestUnderTheValidatorOrTheWholeFileWithoutOne() throws {
        // Under a validator, what was written is proven, and the retry continues it.
        var validated = Self.fresh(retries: 1)
        let id = try #require(Self.begin(&validated, expectingStart: 0))
        _ = validated.accept(Self.whole(length: 300), for: id, at: 0)
        _ = validated.receive(120, for: id, at: 1)
        // The server closed the connection in order, 180 bytes short.
        let retry = Self.started(validated.end(id, fault: nil, at: 2))
        #expect(validated.mirrors[0].lastRetriedFault == .endedEarly(received: 120, expected: 300))
        #expect(retry.map(\.start) == [120])
        #expect(retry.map(\.end) == [Self.open])
        // The answer to `If-Range: "v1"` must repeat it: a 206 that names no validator proves nothing.
        let resent = try #require(retry.first?.id)
        let (taken, _) = validated.accept(Self.partial(120, 299, of: 300, tag: nil), for: resent, at: 3)
        #expect(!taken)
        #expect(validated.mirrors[0].dropped == .validatorDisagrees(expected: "\"v1\"", announced: nil))

        // Without one, the bytes prove nothing: the retry asks for the whole file, whose answer empties the file.
        var unvalidated = Self.fresh(retries: 1)
        let first = try #require(Self.begin(&unvalidated, expectingStart: 0))
        _ = unvalidated.accept(Self.whole(length: 300, tag: nil), for: first, at: 0)
        _ = unvalidated.receive(120, for: first, at: 1)
        let again = Self.started(unvalidated.end(first, fault: .endedEarly(received: 120, expected: 300), at: 2))
        #expect(again.map(\.start) == [0])
        let second = try #require(again.first?.id)
        let (take, actions) = unvalidated.accept(Self.whole(length: 300, tag: nil), for: second, at: 3)
        #expect(take)
        #expect(actions == [.truncate])
    }

    @Test func aBodyOfNoLengthThatEndsBeforeTheBytesKeptFails() throws {
        var schedule = Self.resumed(100, of: nil)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        _ = schedule.accept(Self.whole(length: nil), for: id, at: 0)  // repeats "v1": the bytes kept stay
        _ = schedule.receive(60, for: id, at: 1)
        _ = schedule.end(id, fault: nil, at: 2)
        #expect(schedule.mirrors[0].dropped == .endedEarly(received: 60, expected: 100))
        #expect(!schedule.isComplete)
        #expect(schedule.keptRanges == [0..<100])
    }

    @Test func theCallersPartIsTheFileAndARetryAsksForAllOfItAgainWritingOnlyWhatIsMissing() throws {
        var schedule = Self.fresh(.part, retries: 1)
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        // The part `bytes=1000-1199` of a larger file: 200 bytes, written from the file's byte 0.
        var part = Self.partial(1_000, 1_199, of: 5_000)
        part.announcedLength = 200
        let (take, actions) = schedule.accept(part, for: id, at: 0)
        #expect(take)
        #expect(actions.isEmpty)
        #expect(schedule.total == 200)
        let (write, _, _) = schedule.receive(80, for: id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<80))
        // A forgiven fault: the part is asked for whole again (its offsets are not the server's file's)…
        let retry = Self.started(schedule.end(id, fault: .endedEarly(received: 80, expected: 200), at: 2))
        #expect(retry.map(\.start) == [0])
        #expect(retry.map(\.end) == [Self.open])
        let again = try #require(retry.first?.id)
        // …and under the same validator, the bytes written stay and are not written again.
        #expect(schedule.accept(part, for: again, at: 3) == (true, []))
        let (skipped, _, _) = schedule.receive(80, for: again, at: 4)
        #expect(skipped == nil)
        let (rest, goOn, _) = schedule.receive(120, for: again, at: 5)
        #expect(rest == SegmentSchedule.Write(offset: 80, range: 0..<120))
        #expect(!goOn)
        #expect(schedule.isComplete)
    }

    @Test func anErrorStatusHasItsBodyCollectedAndFailsTheTransferAsItEnds() throws {
        var schedule = Self.fresh(retries: 1)
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        let (take, actions) = schedule.accept(RangeAnswer(status: 503, retryAfter: 0), for: id, at: 0)
        #expect(!take)
        #expect(actions.isEmpty)
        #expect(schedule.collectsErrorBody(of: id))
        // The body is not the file: nothing of it is written.
        let (write, _, _) = schedule.receive(40, for: id, at: 1)
        #expect(write == nil)
        // As it ends, the status is the fault: forgiven once, asking for the file again…
        let retry = Self.started(schedule.end(id, fault: nil, at: 2))
        #expect(retry.map(\.start) == [0])
        #expect(schedule.mirrors[0].lastRetriedFault == .status(503))
        // …and the second drops the one mirror.
        let second = try #require(retry.first?.id)
        _ = schedule.accept(RangeAnswer(status: 404), for: second, at: 3)
        _ = schedule.end(second, fault: nil, at: 4)
        #expect(schedule.mirrors[0].dropped == .status(404))
        #expect(schedule.isStranded)
    }

    @Test func aRangeWithoutTheLengthProvesNothingWithoutAValidator() throws {
        var schedule = Self.resumed(100, of: 300, tag: nil)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, _) = schedule.accept(Self.partial(100, 299, of: nil, tag: nil), for: id, at: 0)
        #expect(!take)
        #expect(schedule.mirrors[0].dropped == .unexpectedContentRange("bytes 100-299/*"))
    }

    @Test func anAnswerThatIsNotHTTPIsTheWholeFile() throws {
        var schedule = Self.fresh()
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        let (take, _) = schedule.accept(RangeAnswer(status: 0, announcedLength: 10), for: id, at: 0)
        #expect(take)
        #expect(schedule.total == 10)
    }

    @Test func oneURLRejectsWithItsTransfersOwnErrorNotWithItsMirrors() throws {
        let lost = URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: "transfer closed"])
        let failed = MirrorDropReason.failure(of: lost)
        #expect((failed.singleURLError(recorded: lost, validator: nil) as? URLError) == lost)
        // Recorded for another fault: the reason's own words.
        let other = failed.singleURLError(recorded: URLError(.timedOut), validator: nil) as? URLError
        #expect(other?.code == .networkConnectionLost)
        #expect(other?.localizedDescription == "transfer closed")

        let response = try #require(
            HTTPURLResponse(
                url: URL(string: "https://example.com")!,
                statusCode: 404,
                httpVersion: nil,
                headerFields: [:]
            )
        )
        let status = HTTPStatusError(response: response, body: Data("not here".utf8))
        let statusError = MirrorDropReason.status(404).singleURLError(recorded: status, validator: nil)
        #expect((statusError as? HTTPStatusError)?.body == Data("not here".utf8))

        let tag = DownloadResumeData.Validator.entityTag("\"v1\"")
        let cases: [(MirrorDropReason, String)] = [
            (
                .validatorDisagrees(expected: "\"v1\"", announced: "\"v2\""),
                "\(DownloadError.validatorNotRepeated(tag))"
            ),
            (.unexpectedContentRange("bytes 1-2/3"), "\(DownloadError.unexpectedContentRange("bytes 1-2/3"))"),
            (.contentCoded("gzip"), "\(DownloadError.contentCoded("gzip"))"),
            (
                .lengthDisagrees(expected: 3, announced: 4),
                "\(DownloadIntegrityError.lengthMismatch(expected: 3, actual: 4))"
            ),
            (.stalled(seconds: 30), "\(URLError(.timedOut))"),
            (.endedEarly(received: 1, expected: 2), "\(URLError(.networkConnectionLost))"),
        ]
        for (reason, expected) in cases {
            #expect("\(reason.singleURLError(recorded: lost, validator: tag))" == expected, "\(reason)")
        }
    }

    @Test func aRangeOfNoLengthContinuesNothingWhoseLengthIsNotKnown() throws {
        var schedule = Self.resumed(100, of: nil)
        let id = try #require(Self.begin(&schedule, expectingStart: 100))
        let (take, _) = schedule.accept(Self.partial(100, 199, of: nil), for: id, at: 0)
        #expect(!take)
        #expect(schedule.mirrors[0].dropped == .unexpectedContentRange("bytes 100-199/*"))
    }

    @Test func aBodyOfNoLengthStopsOnceItRunsPastTheLengthTheCallerExpects() throws {
        var schedule = Self.fresh(expectedLength: 300)
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        #expect(schedule.accept(Self.whole(length: nil), for: id, at: 0).0)
        let (write, goOn, _) = schedule.receive(300, for: id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<300))
        #expect(goOn)
        let (past, more, _) = schedule.receive(1, for: id, at: 2)
        #expect(past == nil)
        #expect(!more)
        #expect(schedule.mirrors[0].dropped == .lengthDisagrees(expected: 300, announced: 301))
    }

    @Test func aRetryOfTheCallersPartThatAnswersAnotherPartStartsTheFileOver() throws {
        var schedule = Self.fresh(.part, retries: 1)
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        var part = Self.partial(1_000, 1_199, of: 5_000)
        part.announcedLength = 200
        _ = schedule.accept(part, for: id, at: 0)
        _ = schedule.receive(80, for: id, at: 1)
        let again = try #require(Self.started(schedule.end(id, fault: nil, at: 2)).first?.id)
        // The same file, the same length, but bytes 0-199 of it: not the 80 bytes written.
        var other = Self.partial(0, 199, of: 5_000)
        other.announcedLength = 200
        let (take, actions) = schedule.accept(other, for: again, at: 3)
        #expect(take)
        #expect(actions == [.truncate])
        #expect(schedule.written == 0)
    }

    @Test func anErrorBodyThatKeepsComingIsNotAStall() throws {
        var schedule = Self.fresh()
        let id = try #require(Self.begin(&schedule, expectingStart: 0))
        _ = schedule.accept(RangeAnswer(status: 500), for: id, at: 0)
        #expect(schedule.tick(by: 6, stallTimeout: 10, minimumSpeed: nil, at: 6).isEmpty)
        schedule.heard(from: id)
        #expect(schedule.tick(by: 6, stallTimeout: 10, minimumSpeed: nil, at: 12).isEmpty)
        #expect(schedule.tick(by: 6, stallTimeout: 10, minimumSpeed: nil, at: 18).map(\.0) == [id])
    }

    @Test func theRequestForTheRestAsksForEveryByteFromItsStartUnderIfRange() throws {
        let base = URLRequest(url: URL(string: "https://example.com/file")!)
        let tag = DownloadResumeData.Validator.entityTag("\"v1\"")
        let whole = SegmentedDownloadEngine.request(base, from: 0, to: Self.open, ifRange: tag)
        #expect(whole.value(forHTTPHeaderField: "Range") == nil)
        #expect(whole.value(forHTTPHeaderField: "If-Range") == nil)
        #expect(whole.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        // The caller's own: a part of the file, in a coding of their choice.
        var callers = base
        callers.setValue("bytes=10-19", forHTTPHeaderField: "Range")
        callers.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        let part = SegmentedDownloadEngine.request(callers, from: 0, to: Self.open, ifRange: tag)
        #expect(part.value(forHTTPHeaderField: "Range") == "bytes=10-19")
        #expect(part.value(forHTTPHeaderField: "Accept-Encoding") == "gzip")
        let rest = SegmentedDownloadEngine.request(base, from: 100, to: Self.open, ifRange: tag)
        #expect(rest.value(forHTTPHeaderField: "Range") == "bytes=100-")
        #expect(rest.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        let segment = SegmentedDownloadEngine.request(base, from: 100, to: 200, ifRange: tag)
        #expect(segment.value(forHTTPHeaderField: "Range") == "bytes=100-199")
        #expect(segment.value(forHTTPHeaderField: "If-Range") == nil)
    }
}
