import Foundation
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Continuation`: the one rule that decides whether an answer continues the bytes kept, for single and segmented
/// downloads alike. A table of answers against references, then the two state machines that use it agreeing on the
/// case they once decided differently.
@Suite struct ContinuationTests {
    typealias Validator = DownloadResumeData.Validator
    static let tag = Validator.entityTag("\"v1\"")
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let modified = Validator.lastModified(date)

    /// A `206` for the bytes from 400 of a 1,000-byte file, with these fields.
    static func answer(
        range: String? = "bytes 400-999/1000",
        entityTag: String? = nil,
        lastModified: String? = nil,
        coding: String? = nil
    ) -> RangeAnswer {
        let strong: Validator? =
            entityTag.flatMap { $0.hasPrefix("\"") ? .entityTag($0) : nil } ?? lastModified.map(Validator.lastModified)
        return RangeAnswer(
            status: 206,
            range: ContentRange(range),
            rangeHeader: range,
            entityTag: entityTag,
            lastModified: lastModified,
            validator: strong,
            contentCoding: coding
        )
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: RangeAnswer
        let reference: Continuation.Reference
        let expected: Continuation.Verdict
        var testDescription: String { name }
    }

    static let kept = Continuation.Reference(validator: tag, totalBytes: 1_000)
    static let keptByDate = Continuation.Reference(validator: modified, totalBytes: 1_000)

    static let cases: [Case] = [
        Case(
            name: "the same strong ETag",
            answer: answer(entityTag: "\"v1\""),
            reference: kept,
            expected: .continues(proven: true)
        ),
        Case(
            name: "another ETag",
            answer: answer(entityTag: "\"v2\""),
            reference: kept,
            expected: .validatorDisagrees(expected: tag, announced: "\"v2\"")
        ),
        Case(
            name: "a weak ETag of the same value",
            answer: answer(entityTag: "W/\"v1\""),
            reference: kept,
            expected: .validatorDisagrees(expected: tag, announced: "W/\"v1\"")
        ),
        Case(
            name: "no validator, where it must be repeated",
            answer: answer(),
            reference: kept,
            expected: .validatorDisagrees(expected: tag, announced: nil)
        ),
        Case(
            name: "no validator, from a mirror of a running download (it need only not contradict)",
            answer: answer(),
            reference: Continuation.Reference(validator: tag, totalBytes: 1_000, mustRepeatValidator: false),
            expected: .continues(proven: false)
        ),
        Case(
            name: "the kept Last-Modified repeated, with a strong ETag the kept bytes never had",
            answer: answer(entityTag: "\"e7\"", lastModified: date),
            reference: keptByDate,
            expected: .continues(proven: true)
        ),
        Case(
            name: "another Last-Modified, with the ETag",
            answer: answer(entityTag: "\"e7\"", lastModified: "Mon, 07 Nov 1994 08:49:37 GMT"),
            reference: keptByDate,
            expected: .validatorDisagrees(expected: modified, announced: "Mon, 07 Nov 1994 08:49:37 GMT")
        ),
        Case(
            name: "a strong ETag only, where the kept bytes are known by their date",
            answer: answer(entityTag: "\"e7\""),
            reference: keptByDate,
            expected: .validatorDisagrees(expected: modified, announced: "\"e7\"")
        ),
        Case(
            name: "a content coding",
            answer: answer(entityTag: "\"v1\"", coding: "gzip"),
            reference: kept,
            expected: .contentCoded("gzip")
        ),
        Case(
            name: "another start",
            answer: answer(range: "bytes 401-999/1000", entityTag: "\"v1\""),
            reference: kept,
            expected: .unexpectedRange("bytes 401-999/1000")
        ),
        Case(
            name: "another length",
            answer: answer(range: "bytes 400-1009/1010", entityTag: "\"v1\""),
            reference: kept,
            expected: .lengthDisagrees(expected: 1_000, announced: 1_010)
        ),
        Case(
            name: "an unknown length (*), under the same validator",
            answer: answer(range: "bytes 400-999/*", entityTag: "\"v1\""),
            reference: kept,
            expected: .continues(proven: true)
        ),
        Case(
            name: "no Content-Range",
            answer: answer(range: nil, entityTag: "\"v1\""),
            reference: kept,
            expected: .unexpectedRange(nil)
        ),
        Case(
            name: "a malformed Content-Range",
            answer: answer(range: "bytes 400-", entityTag: "\"v1\""),
            reference: kept,
            expected: .unexpectedRange("bytes 400-")
        ),
        Case(
            name: "no validator kept, the caller did not accept the length alone",
            answer: answer(),
            reference: Continuation.Reference(validator: nil, totalBytes: 1_000),
            expected: .unvalidated
        ),
        Case(
            name: "no validator kept, the same length, accepted",
            answer: answer(),
            reference: Continuation.Reference(validator: nil, totalBytes: 1_000, lengthSuffices: true),
            expected: .continues(proven: false)
        ),
        Case(
            name: "no validator kept, an unknown length (*), accepted on the length",
            answer: answer(range: "bytes 400-999/*"),
            reference: Continuation.Reference(validator: nil, totalBytes: 1_000, lengthSuffices: true),
            expected: .unvalidated
        ),
    ]

    @Test(arguments: cases)
    func anAnswerContinuesTheBytesKeptOnlyUnderTheRules(_ example: Case) {
        #expect(Continuation.check(example.answer, startingAt: 400, reference: example.reference) == example.expected)
    }

    @Test func aRangeMustEndWhereTheRequestOrTheFileDoes() {
        let reference = Continuation.Reference(validator: Self.tag, totalBytes: 1_000)
        let whole = Self.answer(range: "bytes 400-999/1000", entityTag: "\"v1\"")
        #expect(
            Continuation.check(whole, startingAt: 400, endingAt: 2_000, reference: reference)
                == .continues(proven: true)
        )
        #expect(
            Continuation.check(whole, startingAt: 400, endingAt: 500, reference: reference)
                == .unexpectedRange("bytes 400-999/1000")
        )
        let short = Self.answer(range: "bytes 400-499/1000", entityTag: "\"v1\"")
        #expect(
            Continuation.check(short, startingAt: 400, endingAt: 500, reference: reference) == .continues(proven: true)
        )
        let unknown = Self.answer(range: "bytes 400-499/*", entityTag: "\"v1\"")
        #expect(
            Continuation.check(unknown, startingAt: 400, endingAt: 500, reference: reference)
                == .unexpectedRange("bytes 400-499/*")
        )
    }

    /// The case the single and segmented downloads once decided differently: bytes kept under a strong
    /// `Last-Modified`, and a mirror that repeats it but also sends a strong `ETag`. Both continue them now.
    @Test func singleAndSegmentedDownloadsAgreeOnALastModifiedRepeatedBesideAStrongETag() {
        let headers = [
            "Content-Range": "bytes 400-999/1000", "Last-Modified": Self.date, "ETag": "\"e7\"",
            "Date": "Mon, 07 Nov 1994 08:49:37 GMT",
        ]
        let response = HTTPURLResponse(
            url: URL(string: "http://127.0.0.1/f")!,
            statusCode: 206,
            httpVersion: "HTTP/1.1",
            headerFields: headers
        )!
        var single = DownloadState(
            kept: KeptBytes(count: 400, validator: Self.modified, totalBytes: 1_000),
            requested: .rest(from: 400, ifRange: Self.modified)
        )
        #expect(single.receive(response) == .write(truncating: false), "a single-URL resume continues")

        var options = SegmentedDownloadOptions()
        options.segmentSize = 1_000
        var segmented = SegmentSchedule(
            mirrors: 1,
            options: options,
            resuming: [0..<400],
            of: 1_000,
            validator: Self.modified
        )
        guard case .start(let id, _, let start, _) = segmented.begin(at: 0).first else {
            Issue.record("the resumed schedule asks for the missing bytes")
            return
        }
        #expect(start == 400)
        let (take, _) = segmented.accept(RangeAnswer(response), for: id, at: 0)
        #expect(take, "a segmented resume continues")
        #expect(segmented.mirrors[0].dropped == nil)
    }
}
