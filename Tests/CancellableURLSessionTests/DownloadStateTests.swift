import Cancellable
import Foundation
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The download's state machine, without a server: what each response, chunk and ending does to the bytes kept.
@Suite struct DownloadStateTests {
    static let url = URL(string: "http://mirror.test/file.bin")!
    static let tag = DownloadResumeData.Validator.entityTag("\"v1\"")
    /// A resumed download that kept 400 of 1,000 bytes under `tag`.
    static let kept = KeptBytes(count: 400, validator: tag, totalBytes: 1_000)

    static func response(_ status: Int, _ headers: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    static func resumed(_ kept: KeptBytes = kept) -> DownloadState {
        DownloadState(kept: kept, requested: .rest(from: kept.count, ifRange: kept.validator))
    }

    // MARK: Bytes kept from the first instant

    @Test func aResumedDownloadPausedBeforeTheServerAnswersKeepsEveryByteItStartedWith() {
        var state = Self.resumed()
        let ending = state.cancel(.paused)
        #expect(ending.kept == Self.kept, "not 0: the next resume would empty the file")
        #expect(ending.error?.cancellationReason == .paused)
    }

    @Test(arguments: [URLError.Code.cannotConnectToHost, .cannotFindHost, .badServerResponse, .networkConnectionLost])
    func aResumedDownloadThatFailsBeforeTheHeadersKeepsItsBytes(code: URLError.Code) {
        var state = Self.resumed()
        let ending = state.end(taskError: URLError(code), statusError: nil)
        #expect(ending.kept == Self.kept, "a mirror that is down must not delete the download")
        #expect((ending.error as? URLError)?.code == code)
    }

    @Test func aNewDownloadThatFailsBeforeTheHeadersHasNothingToKeep() {
        var state = DownloadState(kept: .nothing, requested: .whole)
        #expect(state.end(taskError: URLError(.cannotConnectToHost), statusError: nil).isRemoved)
    }

    @Test(arguments: [CancellationReason.user, .timeout, .lostRace])
    func anyOtherCancellationRemovesTheBytesWhateverTheState(reason: CancellationReason) {
        var waiting = Self.resumed()
        #expect(waiting.cancel(reason).isRemoved)
        var writing = Self.resumed()
        _ = writing.receive(Self.response(206, ["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\""]))
        writing.advance(by: 100)
        #expect(writing.cancel(reason).isRemoved)
    }

    @Test func anErrorStatusWhileResumingKeepsTheBytesForAnotherMirror() {
        var state = Self.resumed()
        #expect(state.receive(Self.response(503)) == .collect)
        let ending = state.end(taskError: nil, statusError: URLError(.badServerResponse))
        #expect(ending.kept == Self.kept)
    }

    // MARK: Continuing

    @Test func aRangeThatStartsAtTheBytesKeptAndRepeatsTheValidatorContinuesThem() {
        var state = Self.resumed()
        let action = state.receive(Self.response(206, ["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\""]))
        #expect(action == .write(truncating: false))
        #expect(state.progress == TransferProgress(bytesTransferred: 400, totalBytesExpected: 1_000))
        let held = state.admit(300)
        #expect(held == 0)
        state.advance(by: 300)
        #expect(state.kept.count == 700)
        #expect(state.cancel(.paused).kept == KeptBytes(count: 700, validator: Self.tag, totalBytes: 1_000))
    }

    @Test func aWholeContinuedFileCommits() {
        var state = Self.resumed()
        _ = state.receive(Self.response(206, ["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\""]))
        state.advance(by: 600)
        #expect(state.end(taskError: nil, statusError: nil).isCommit)
    }

    @Test(arguments: [
        (["Content-Range": "bytes 400-999/1000"], "no validator"),
        (["Content-Range": "bytes 400-999/1000", "ETag": "\"v2\""], "another validator"),
        (["Content-Range": "bytes 400-999/1000", "ETag": "W/\"v1\""], "a weak one"),
    ])
    func aRangeThatDoesNotRepeatTheValidatorIsNeverSpliced(headers: [String: String], _: String) {
        var state = Self.resumed()
        #expect(state.receive(Self.response(206, headers)) == .cancel)
        let ending = state.end(taskError: URLError(.cancelled), statusError: nil)
        #expect(ending.error as? DownloadError == .validatorNotRepeated(Self.tag))
        #expect(ending.isRemoved, "the bytes may be of another file")
    }

    @Test func aRangeUnderTheSameLastModifiedContinues() {
        let date = DownloadResumeData.Validator.lastModified("Sun, 06 Nov 1994 08:49:37 GMT")
        var state = Self.resumed(KeptBytes(count: 400, validator: date, totalBytes: 1_000))
        let response = Self.response(
            206,
            ["Content-Range": "bytes 400-999/1000", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"]
        )
        #expect(state.receive(response) == .write(truncating: false))
    }

    @Test func aContentCodedRangeIsNeverSpliced() {
        var state = Self.resumed()
        let response = Self.response(
            206,
            ["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\"", "Content-Encoding": "gzip"]
        )
        #expect(state.receive(response) == .cancel)
        #expect(state.end(taskError: nil, statusError: nil).error as? DownloadError == .contentCoded("gzip"))
    }

    @Test(arguments: ["bytes 0-999/1000", "bytes 400-1009/1010", "bytes 401-999/1000", "nonsense"])
    func aRangeThatDoesNotContinueTheBytesKeptRejects(contentRange: String) {
        var state = Self.resumed()
        #expect(state.receive(Self.response(206, ["Content-Range": contentRange, "ETag": "\"v1\""])) == .cancel)
        let ending = state.end(taskError: nil, statusError: nil)
        #expect(ending.error as? DownloadError == .unexpectedContentRange(contentRange))
        #expect(ending.isRemoved)
    }

    // MARK: Without a validator

    @Test func withoutAValidatorTheLengthContinuesOnlyWhenTheCallerOptedIn() {
        let unvalidated = KeptBytes(count: 400, validator: nil, totalBytes: 1_000)
        var state = DownloadState(kept: unvalidated, requested: .rest(from: 400, ifRange: nil))
        #expect(state.receive(Self.response(206, ["Content-Range": "bytes 400-999/1000"])) == .write(truncating: false))
        var otherLength = DownloadState(kept: unvalidated, requested: .rest(from: 400, ifRange: nil))
        #expect(otherLength.receive(Self.response(206, ["Content-Range": "bytes 400-1009/1010"])) == .cancel)
        var unknownLength = DownloadState(kept: unvalidated, requested: .rest(from: 400, ifRange: nil))
        #expect(unknownLength.receive(Self.response(206, ["Content-Range": "bytes 400-999/*"])) == .cancel)
    }

    @Test func aResumeThatStartsOverKeepsTheOldBytesUntilTheNewFileArrives() {
        let unvalidated = KeptBytes(count: 400, validator: nil, totalBytes: 1_000)
        var paused = DownloadState(kept: unvalidated, requested: .whole)
        #expect(paused.cancel(.paused).kept == unvalidated, "paused before the answer: nothing lost")
        var answered = DownloadState(kept: unvalidated, requested: .whole)
        #expect(answered.receive(Self.response(200, ["Content-Length": "1000"])) == .write(truncating: true))
        #expect(answered.kept == KeptBytes(count: 0, validator: nil, totalBytes: 1_000))
    }

    // MARK: The whole file again

    @Test func aWholeFileThatRepeatsTheValidatorKeepsTheBytesAndDoesNotRewriteThem() {
        var state = Self.resumed()
        let action = state.receive(Self.response(200, ["Content-Length": "1000", "ETag": "\"v1\""]))
        #expect(action == .write(truncating: false))
        let held = state.admit(300)
        #expect(held == 300)
        state.advance(by: 300)
        #expect(state.kept == Self.kept, "still re-sending bytes the file holds")
        #expect(state.progress?.bytesTransferred == 300, "progress counts the whole file from 0")
        #expect(state.cancel(.paused).kept == Self.kept, "a pause there keeps every byte it started with")
        var crossing = Self.resumed()
        _ = crossing.receive(Self.response(200, ["Content-Length": "1000", "ETag": "\"v1\""]))
        crossing.advance(by: 300)
        let crossingHeld = crossing.admit(300)
        #expect(crossingHeld == 100, "the first 100 are held, the other 200 are new")
        crossing.advance(by: 300)
        #expect(crossing.kept.count == 600)
        crossing.advance(by: 400)
        #expect(crossing.end(taskError: nil, statusError: nil).isCommit)
    }

    @Test func aWholeFileUnderAnotherValidatorStartsOver() {
        var state = Self.resumed()
        #expect(
            state.receive(Self.response(200, ["Content-Length": "1000", "ETag": "\"v2\""])) == .write(truncating: true)
        )
        #expect(state.kept == KeptBytes(count: 0, validator: .entityTag("\"v2\""), totalBytes: 1_000))
    }

    @Test func aWholeFileThatEndsBeforeTheBytesKeptIsNotTheSameFile() {
        var state = Self.resumed()
        _ = state.receive(Self.response(200, ["ETag": "\"v1\""]))  // no length: it ends when it ends
        state.advance(by: 250)
        let ending = state.end(taskError: nil, statusError: nil)
        #expect(ending.error as? DownloadError == .rangeNotSatisfiable(serverLength: 250))
        #expect(ending.isRemoved)
    }

    // MARK: 416, and short bodies

    @Test func a416WhenEveryByteIsThereFinishesTheDownload() {
        var state = Self.resumed(KeptBytes(count: 1_000, validator: Self.tag, totalBytes: 1_000))
        #expect(state.receive(Self.response(416, ["Content-Range": "bytes */1000", "ETag": "\"v1\""])) == .ignore)
        #expect(state.end(taskError: nil, statusError: nil).isCommit)
    }

    @Test(arguments: [
        ["Content-Range": "bytes */300"], ["Content-Range": "bytes */1000", "ETag": "\"v2\""],
    ])
    func anyOther416MeansAnotherFile(headers: [String: String]) {
        var state = Self.resumed(KeptBytes(count: 1_000, validator: Self.tag, totalBytes: 1_000))
        #expect(state.receive(Self.response(416, headers)) == .cancel)
        #expect(state.end(taskError: nil, statusError: nil).error is DownloadError)
    }

    @Test func aBodyThatEndsBeforeItsAnnouncedLengthKeepsWhatArrivedButNotTheClaim() {
        var state = DownloadState(kept: .nothing, requested: .whole)
        _ = state.receive(Self.response(200, ["Content-Length": "1000", "ETag": "\"v1\""]))
        state.advance(by: 600)
        let ending = state.end(taskError: nil, statusError: nil)
        #expect((ending.error as? URLError)?.code == .networkConnectionLost)
        #expect(
            ending.kept == KeptBytes(count: 600, validator: Self.tag, totalBytes: nil),
            "1,000 was only claimed: the body ended before it"
        )
    }

    @Test func aLengthClaimedAndNotKeptCannotMakeTheNextHonestAnswerLookLikeAnotherFile() throws {
        // A server claims 10^15 bytes, sends 64 KiB and drops the connection.
        var lying = DownloadState(kept: .nothing, requested: .whole)
        _ = lying.receive(Self.response(200, ["Content-Length": "1000000000000000", "ETag": "\"v1\""]))
        let held = lying.admit(65_536)
        #expect(held == 0)
        lying.advance(by: 65_536)
        let kept = try #require(lying.end(taskError: URLError(.networkConnectionLost), statusError: nil).kept)
        #expect(kept == KeptBytes(count: 65_536, validator: Self.tag, totalBytes: nil))
        // The same server, honest now: its 206 names the real length, and the bytes kept continue.
        var honest = Self.resumed(kept)
        #expect(
            honest.receive(Self.response(206, ["Content-Range": "bytes 65536-99999/100000", "ETag": "\"v1\""]))
                == .write(truncating: false)
        )
        honest.advance(by: 100_000 - 65_536)
        #expect(honest.end(taskError: nil, statusError: nil).isCommit)
    }

    @Test func aLengthTwoAnswersAgreeOnStaysWhenTheBodyEndsEarly() {
        var state = Self.resumed()
        _ = state.receive(Self.response(206, ["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\""]))
        state.advance(by: 200)
        let ending = state.end(taskError: URLError(.networkConnectionLost), statusError: nil)
        #expect(ending.kept == KeptBytes(count: 600, validator: Self.tag, totalBytes: 1_000))
    }

    @Test func aBodyLongerThanItsRangeStopsThereAndKeepsTheBytesFromBeforeIt() {
        var state = Self.resumed()
        _ = state.receive(
            Self.response(206, ["Content-Range": "bytes 400-999/1000", "Content-Length": "900", "ETag": "\"v1\""])
        )
        let held = state.admit(500)
        #expect(held == 0)
        state.advance(by: 500)
        let pastTheEnd = state.admit(200)
        #expect(pastTheEnd == nil, "100 bytes past the file's 1,000: the transfer stops")
        let ending = state.end(taskError: URLError(.cancelled), statusError: nil)
        #expect(ending.error as? DownloadError == .bodyLongerThanAnnounced(totalBytes: 1_000))
        #expect(ending.kept == Self.kept, "the 400 bytes from before this answer stay; its own do not")
    }

    @Test func aWholeBodyLongerThanAnnouncedOnASessionWithoutLiveDeliveryKeepsNothing() {
        var state = Self.resumed()
        _ = state.receive(Self.response(200, ["Content-Length": "1000", "ETag": "\"v2\""]))
        let filled = state.filled(size: 1_200)
        #expect(!filled)
        let ending = state.end(taskError: nil, statusError: nil)
        #expect(ending.error as? DownloadError == .bodyLongerThanAnnounced(totalBytes: 1_000))
        #expect(ending.isRemoved)
    }

    @Test func aPartNobodyAskedForIsNotTheFile() {
        var state = DownloadState(kept: .nothing, requested: .whole)
        #expect(state.receive(Self.response(206, ["Content-Range": "bytes 0-99/1000"])) == .cancel)
    }

    @Test func aFileErrorRemovesTheBytesButAPauseRacingItKeepsTheOnesWritten() {
        var state = DownloadState(kept: .nothing, requested: .whole)
        _ = state.receive(Self.response(200, ["Content-Length": "1000", "ETag": "\"v1\""]))
        state.advance(by: 300)
        state.failWriting(CocoaError(.fileWriteOutOfSpace))
        #expect(state.cancel(.paused).kept?.count == 300)
        var ended = DownloadState(kept: .nothing, requested: .whole)
        _ = ended.receive(Self.response(200, ["Content-Length": "1000"]))
        ended.failWriting(CocoaError(.fileWriteOutOfSpace))
        #expect(ended.end(taskError: URLError(.cancelled), statusError: nil).isRemoved)
    }

    // MARK: Validators

    @Test func aStrongEntityTagIsTheValidator() {
        let response = Self.response(200, ["ETag": "\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(response.strongValidator == .entityTag("\"v1\""))
    }

    @Test func aLastModifiedIsAValidatorOnlyIfTheDateIsAMinuteLater() {
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(
            Self.response(
                200,
                ["ETag": "W/\"v1\"", "Last-Modified": modified, "Date": "Sun, 06 Nov 1994 08:50:37 GMT"]
            )
            .strongValidator == .lastModified(modified)
        )
        #expect(
            Self.response(200, ["Last-Modified": modified, "Date": "Sun, 06 Nov 1994 08:50:36 GMT"]).strongValidator
                == nil,
            "59 seconds: the file may have changed twice within the second"
        )
        #expect(Self.response(200, ["Last-Modified": modified]).strongValidator == nil, "no Date: weak")
    }

    @Test func aContentCodedResponseHasNoValidatorAndNoLength() {
        let response = Self.response(200, ["ETag": "\"v1\"", "Content-Encoding": "br", "Content-Length": "10"])
        #expect(response.strongValidator == nil)
        #expect(response.announcedLength == nil)
        #expect(Self.response(200, ["Content-Encoding": "identity"]).isContentCoded == false)
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func httpDatesParseInTheThreeFormats(text: String) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    /// `Retry-After` is a number of seconds or an HTTP date; anything else a server sends is no answer at all.
    @Test func retryAfterIsSecondsOrADateAndNothingElse() {
        let now = Date(timeIntervalSince1970: 784_111_747)  // 30 s before the date below
        func retryAfter(_ value: String) -> TimeInterval? {
            Self.response(503, ["Retry-After": value]).retryAfter(now: now)
        }
        #expect(retryAfter("120") == 120)
        #expect(retryAfter(" 7 ") == 7)
        #expect(retryAfter("0") == 0)
        #expect(retryAfter("999999999") == 999_999_999)
        #expect(retryAfter("Sun, 06 Nov 1994 08:49:37 GMT") == 30)
        #expect(retryAfter("Sun, 06 Nov 1994 08:49:00 GMT") == 0, "a date past is now")
        for hostile in ["-1", "+5", "1.5", "1e3", "0x10", "1000000000", "12 34", "abc", "", "٣"] {
            #expect(retryAfter(hostile) == nil, "\(hostile)")
        }
        #expect(Self.response(503, [:]).retryAfter(now: now) == nil)
    }

    // MARK: The request

    @Test func aResumedRequestAsksForTheRestUnderTheValidatorWithoutAContentCoding() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let saved = try Self.resumeData(in: directory, validator: Self.tag)
        let file = try FileDownload(
            resuming: saved,
            from: Self.url,
            continuing: true,
            withoutValidator: .startOver,
            verifying: nil,
            resumeData: { _ in }
        )
        var request = URLRequest(url: Self.url)
        request.setValue("bytes=0-10", forHTTPHeaderField: "Range")
        let prepared = file.prepare(request)
        #expect(prepared.value(forHTTPHeaderField: "Range") == "bytes=400-")
        #expect(prepared.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        #expect(prepared.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        var named = request
        named.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        #expect(file.prepare(named).value(forHTTPHeaderField: "Accept-Encoding") == "gzip", "the caller's choice")
    }

    @Test func aResumeWithoutAValidatorStartsOverUnlessTheCallerOptsIn() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let saved = try Self.resumeData(in: directory, validator: nil)
        for (policy, range) in [
            (DownloadResumeData.WithoutValidator.startOver, nil), (.continueIfLengthMatches, "bytes=400-"),
        ] {
            let file = try FileDownload(
                resuming: saved,
                from: Self.url,
                continuing: true,
                withoutValidator: policy,
                verifying: nil,
                resumeData: { _ in }
            )
            let prepared = file.prepare(URLRequest(url: Self.url))
            #expect(prepared.value(forHTTPHeaderField: "Range") == range, "\(policy)")
            #expect(prepared.value(forHTTPHeaderField: "If-Range") == nil)
            _ = file.accept(Self.response(503))  // end it, so that the partial file is free for the next one
            file.finish(
                taskError: nil,
                statusError: URLError(.badServerResponse),
                response: nil,
                resolver: Self.discardingResolver()
            )
            #expect(try fileContents(saved.partialFile).count == 400, "an error status keeps the bytes")
        }
    }

    /// Resume data for 400 bytes of a 1,000-byte file, with its partial file in `directory`.
    static func resumeData(
        in directory: DownloadDirectory,
        validator: DownloadResumeData.Validator?
    ) throws
        -> DownloadResumeData
    {
        let partial = PartialFile.newURL(for: directory.destination)
        try Data(repeating: 7, count: 400).write(to: partial)
        return try DownloadResumeData(
            url: url,
            destination: directory.destination,
            partialFile: partial,
            bytesKept: 400,
            validator: validator,
            totalBytes: 1_000
        )
    }

    static func discardingResolver() -> DecidingResolver<FileDownload.Outcome> {
        var resolver: DecidingResolver<FileDownload.Outcome>?
        _ = CancellablePromise<FileDownload.Outcome>(deciding: { made in
            resolver = made
            return { _ in }
        })
        return resolver!
    }
}

/// The partial file next to the destination, without a server.
@Suite struct PartialFileTests {
    @Test func itIsAHiddenFileNextToTheDestinationAndEmpty() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let (partial, handle) = try PartialFile.create(for: directory.destination)
        try handle.close()
        #expect(partial.url.deletingLastPathComponent().path == directory.url.path)
        #expect(partial.url.lastPathComponent.hasPrefix(".file.bin.") && partial.url.pathExtension == "partial")
        #expect(try PartialFile.size(of: partial.url) == 0)
    }

    @Test func aDirectoryAsTheDestinationThrowsAndLeavesNothing() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        #expect(throws: (any Error).self) { try PartialFile.create(for: directory.url) }
        #expect(try directory.contents().isEmpty)
    }

    @Test func reopeningKeepsTheBytesAskedForAndDropsWhatFollows() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let url = PartialFile.newURL(for: directory.destination)
        try Data(0..<100).write(to: url)
        let (_, handle, kept) = try PartialFile.reopen(url, for: directory.destination, keeping: 60)
        try handle.writeAll(Data([255]))
        try handle.close()
        #expect(kept == 60)
        #expect(try fileContents(url) == Data(0..<60) + Data([255]), "appends after the bytes kept")
    }

    @Test func reopeningAFileShorterThanItSaysOrGoneStartsItEmpty() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let short = PartialFile.newURL(for: directory.destination)
        try Data(0..<10).write(to: short)
        let (_, shortHandle, shortKept) = try PartialFile.reopen(short, for: directory.destination, keeping: 60)
        try shortHandle.close()
        #expect(shortKept == 0)
        #expect(try PartialFile.size(of: short) == 0)
        let gone = PartialFile.newURL(for: directory.destination)
        let (_, goneHandle, goneKept) = try PartialFile.reopen(gone, for: directory.destination, keeping: 60)
        try goneHandle.close()
        #expect(goneKept == 0)
        #expect(FileManager.default.fileExists(atPath: gone.path))
    }

    @Test func committingReplacesTheDestinationInOneStep() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        try Data("old".utf8).write(to: directory.destination)
        let (partial, handle) = try PartialFile.create(for: directory.destination)
        try handle.writeAll(Data("new".utf8))
        try handle.close()
        try partial.commit()
        #expect(try fileContents(directory.destination) == Data("new".utf8))
        #expect(try directory.contents() == ["file.bin"])
    }

    @Test func removingLeavesTheDestinationAsItWas() throws {
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        try Data("old".utf8).write(to: directory.destination)
        let (partial, handle) = try PartialFile.create(for: directory.destination)
        try handle.close()
        partial.remove()
        #expect(try directory.contents() == ["file.bin"])
        #expect(try fileContents(directory.destination) == Data("old".utf8))
    }
}

extension DownloadState.Ending {
    /// The bytes this ending keeps for a resume: `nil` if it commits or removes them.
    var kept: KeptBytes? {
        if case .fail(_, let kept) = self { return kept }
        return nil
    }

    var error: Error? {
        if case .fail(let error, _) = self { return error }
        return nil
    }

    var isCommit: Bool {
        if case .commit = self { return true }
        return false
    }

    /// Whether this ending removes the partial file.
    var isRemoved: Bool {
        if case .fail(_, nil) = self { return true }
        return false
    }
}
